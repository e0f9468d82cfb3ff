"""In-process ``s2g`` runs for the CLI tests (test_hardening, test_trust_cli)."""
from __future__ import annotations

from s2g import cli


def main(capsys, *args):
    """(exit status, stdout, stderr lines) of an in-process ``s2g ARGS``."""
    try:
        code = cli.main([str(a) for a in args])
    except SystemExit as exc:            # argparse: usage errors and --help
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def one_error(code, err, *contains):
    """Exit status 1 and exactly one ``s2g: error:`` line (warnings and the cold-cache
    compile note aside: right after a source edit the first run prints it) holding every
    one of ``contains``; returns that line."""
    assert code == 1, (code, err)
    errs = [ln for ln in err if not ln.startswith(("s2g: warning:", "s2g: compiling"))]
    assert len(errs) == 1 and errs[0].startswith("s2g: error: "), err
    for c in contains:
        assert c in errs[0], (c, errs[0])
    return errs[0]
