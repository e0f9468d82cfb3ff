"""One exception type for every user-facing failure.

The CLI turns an :class:`S2GError` into ``s2g: error: <message>`` on stderr and a
non-zero exit, so every message must be one self-contained line that names the
file, record, read or limit at fault.
"""


class S2GError(Exception):
    """A problem with the user's input or request (not a bug in s2g)."""


class GraphError(S2GError):
    """Malformed, unsupported or cyclic graph."""


class ReadError(S2GError):
    """Malformed or unsupported read input."""


def printable(text: str) -> str:
    """Names with bytes that are not UTF-8 (surrogate escapes) shown as \\x.. escapes,
    whatever the error handler of stderr (the CLI's one-line messages)."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def where(exc: BaseException) -> str:
    """Where ``exc`` was raised, for an internal error's one line: the innermost frame
    in s2g's own code (``s2g/trace/gpu.py:123 in run``), else the innermost of all;
    '' without a traceback."""
    import os
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    pkg = os.path.dirname(os.path.abspath(__file__))
    own = [f for f in frames if os.path.abspath(f.filename).startswith(pkg + os.sep)]
    f = (own or frames)[-1]
    name = os.path.relpath(f.filename, os.path.dirname(pkg)) if own else f.filename
    return f"{name}:{f.lineno} in {f.name}"
