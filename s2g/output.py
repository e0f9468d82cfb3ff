"""Where ``s2g align`` writes: standard output, a special file written in place, or a
regular file replaced only by a finished run (a temporary file beside it, renamed over
it); and the checks that ``-o`` never replaces an input, an index or a cache in use,
however spelled."""
from __future__ import annotations

import contextlib
import io
import os
import stat
import sys
import tempfile

from .errors import S2GError


class Output:
    """Where the GAF goes (bytes or text): stdout; a special file written in place
    (/dev/null, a FIFO, /dev/full); or a regular file, through a temporary file beside
    it that :meth:`commit` renames over it, so an existing file is replaced only by a
    finished run and :meth:`abort` leaves nothing behind. OS errors while writing (disk
    full) become :class:`S2GError`; a broken pipe on stdout stays a BrokenPipeError."""

    def __init__(self, path, inputs=()):
        self.path, self.tmp, self.fh = path, None, None
        self.lines = 0          # GAF lines written (on stdout: handed to the pipe)
        if path == "-":
            if sys.stdout is None:
                raise S2GError("standard output is closed; give -o FILE")
            self.fh = getattr(sys.stdout, "buffer", sys.stdout)
            return
        for src in inputs:      # a path, or (path, what it is)
            src, what = src if isinstance(src, tuple) else (src, f"the input file {src}")
            if src == "-":
                if is_stdin(path):
                    raise S2GError(f"-o {path} is the file standard input reads from (the "
                                   "reads); choose another output")
            elif src is not None and same_file(path, src):
                raise S2GError(f"-o {path} is {what}; choose another output")
        target = os.path.realpath(path)   # through a symlink: replace the file it names
        self.target = target
        try:
            if os.path.exists(target) and not os.path.isfile(target):
                if os.path.isdir(target):
                    raise S2GError(f"{path}: is a directory")
                self.fh = open(target, "wb")
                return
            mode = (stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target)
                    else 0o666 & ~umask())
            fd, self.tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.",
                                            suffix=".s2g-tmp", dir=os.path.dirname(target))
            os.chmod(self.tmp, mode)
            self.fh = os.fdopen(fd, "wb")
        except OSError as exc:
            self.abort()
            raise S2GError(f"{path}: cannot write: {exc.strerror}") from None

    def write(self, data):
        if isinstance(data, str) and not isinstance(self.fh, io.TextIOBase):
            data = data.encode("utf-8", "surrogateescape")
        elif isinstance(data, bytes) and isinstance(self.fh, io.TextIOBase):
            data = data.decode("utf-8", "surrogateescape")
        try:
            self.fh.write(data)
            if self.path == "-":    # each batch on its way: a closed pipe shows at once
                self.fh.flush()
        except BrokenPipeError as exc:
            exc.s2g_lines = self.lines      # for the "output cut" line (_run)
            raise
        except OSError as exc:
            raise S2GError(f"{self._label()}: cannot write: {exc.strerror}") from None
        self.lines += data.count(b"\n" if isinstance(data, bytes) else "\n")

    def _label(self):
        return "standard output" if self.path == "-" else self.path

    def commit(self):
        """Flush, close and rename into place (once; before the run's summary line)."""
        if self.fh is None:
            return
        try:
            self.fh.flush()
            if self.path == "-" and reader_gone(self.fh):
                raise BrokenPipeError(32, "Broken pipe")     # | head -1 exited already
            if self.path != "-":
                self.fh.close()
            self.fh = None
            if self.tmp is not None:
                os.replace(self.tmp, self.target)
                self.tmp = None
        except BrokenPipeError as exc:
            exc.s2g_lines = self.lines
            raise
        except OSError as exc:
            raise S2GError(f"{self._label()}: cannot write: {exc.strerror}") from None

    def abort(self):
        if self.fh is not None and self.path != "-":
            with contextlib.suppress(OSError):
                self.fh.close()
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


@contextlib.contextmanager
def output(path, inputs=()):
    """:class:`Output` committed when the block ends normally, removed on any error,
    interrupt or signal."""
    out = Output(path, inputs)
    try:
        yield out
    except BaseException:
        out.abort()
        raise
    try:
        out.commit()
    except BaseException:
        out.abort()
        raise


def same_file(a, b) -> bool:
    """True when writing ``a`` would replace the file ``b``, however either is spelled
    (relative, ``./``, a symlink, a hard link: same device and inode; paths of files
    that do not exist yet: the same real path). Special files (/dev/null, a FIFO) are
    written in place, never replaced: not the same for this purpose."""
    try:
        sa = os.stat(a)
    except OSError:
        sa = None
    if sa is not None and not stat.S_ISREG(sa.st_mode):
        return False
    try:
        sb = os.stat(b)
    except OSError:
        sb = None
    if sa is not None and sb is not None:
        return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
    return os.path.realpath(a) == os.path.realpath(b)


def reader_gone(fh) -> bool:
    """True when ``fh`` is a pipe whose reader has closed it (``| head -1`` that has
    exited): what it was given will never be read. False when unsure."""
    try:
        fd = fh.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        import select
        poll = select.poll()
        poll.register(fd, 0)                   # POLLERR is always reported
        return any(ev & select.POLLERR for _, ev in poll.poll(0))
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False


def is_stdin(path) -> bool:
    """True when ``path`` is the regular file standard input reads from."""
    try:
        si, so = os.fstat(0), os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(si.st_mode) and (si.st_dev, si.st_ino) == (so.st_dev, so.st_ino)


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def requested_format(args) -> str:
    """gaf, sam or bam: ``--output-format``, else by the ``-o`` suffix (``s2g.cli.output_format``
    checks the SAM/BAM options against it)."""
    if args.output_format is not None:
        return args.output_format
    low = str(args.output).lower()
    return "sam" if low.endswith(".sam") else "bam" if low.endswith(".bam") else "gaf"


def check_graph_path(path):
    """Refuse ``-`` as the graph (``s2g align`` and ``s2g index``)."""
    if path == "-":
        raise S2GError("the graph cannot come from standard input ('-'): s2g opens it by "
                       "name (its graph cache and seed index are found beside it, and it may "
                       "be read more than once); give the GFA file's path")


def align_inputs(args):
    """(path, what) of every file ``-o`` must not replace: the graph, the reads (or the
    file standard input reads from), the seed index in use, the graph's index and cache."""
    from .graph_cache import cache_path
    from .index import index_path

    g = args.graph
    out = [(g, f"the input file {g}"), (args.reads, f"the input file {args.reads}"),
           (index_path(g), f"the seed index of {g} ({index_path(g)})"),
           (cache_path(g), f"the graph cache of {g} ({cache_path(g)})")]
    if getattr(args, "reads2", None):
        out.append((args.reads2, f"the input file {args.reads2}"))
    if getattr(args, "index", None):
        out.append((args.index, f"the seed index in use ({args.index})"))
    return out
