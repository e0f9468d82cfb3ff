"""Shared fixtures and markers for the s2g test suite.

Markers are registered here (there is no pytest.ini); other test modules may append
their own ``config.addinivalue_line("markers", ...)`` lines to ``pytest_configure``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
# `pytest tests/...` (without -m) must still import s2g from this checkout and tests/naive.py
for _p in (str(REPO), str(TESTS)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

#: the five real graphs and their queries (tests/data/real/README.md: sources, MIT
#: notices), carried by the repository; ../shared/data/real where a checkout lacks them.
#: The big LPA files are gzipped here: use the ``real_data`` fixture, which gives every
#: file under its plain name; REAL_DATA itself holds the others under their plain names.
REAL_DATA_REPO = TESTS / "data" / "real"
REAL_DATA = REAL_DATA_REPO if REAL_DATA_REPO.is_dir() else (REPO / ".." / "shared" / "data" / "real").resolve()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


def write_text(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.fixture
def gfa_file(tmp_path):
    """Factory: gfa_file(text, name='g.gfa') -> path of a GFA file with that text."""
    counter = [0]

    def make(text: str, name: str | None = None) -> str:
        counter[0] += 1
        return write_text(tmp_path / (name or f"g{counter[0]}.gfa"), text)

    return make


@pytest.fixture
def reads_file(tmp_path):
    """Factory: reads_file([(name, seq), ...], fmt='fasta'|'fastq') -> path."""
    counter = [0]

    def make(reads, fmt: str = "fasta", name: str | None = None) -> str:
        counter[0] += 1
        if fmt == "fasta":
            text = "".join(f">{n}\n{s}\n" for n, s in reads)
        else:
            text = "".join(f"@{n}\n{s}\n+\n{'I' * len(s)}\n" for n, s in reads)
        return write_text(tmp_path / (name or f"r{counter[0]}.{'fa' if fmt == 'fasta' else 'fq'}"), text)

    return make


def plain_real_data(dest: Path) -> Path:
    """REAL_DATA with every ``X.gz`` available as ``X``: links to the plain files and the
    compressed ones decompressed, under ``dest`` (or REAL_DATA itself if nothing is
    compressed)."""
    import gzip
    import shutil

    if not any(REAL_DATA.glob("*/*.gz")):
        return REAL_DATA
    for src in sorted(REAL_DATA.glob("*/*")):
        out = dest / src.parent.name / src.name
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".gz":
            with gzip.open(src, "rb") as fi, open(out.with_suffix(""), "wb") as fo:
                shutil.copyfileobj(fi, fo)
        else:
            out.symlink_to(src)
    return dest


@pytest.fixture(scope="session")
def real_data(tmp_path_factory):
    if not REAL_DATA.is_dir():
        pytest.skip(f"real graphs not found at {REAL_DATA}")
    return plain_real_data(tmp_path_factory.mktemp("real"))
