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

#: real graphs shared next to the repository (CI clones the repo beside ../shared)
REAL_DATA = (REPO / ".." / "shared" / "data" / "real").resolve()


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


@pytest.fixture(scope="session")
def real_data():
    if not REAL_DATA.is_dir():
        pytest.skip(f"real graphs not found at {REAL_DATA} (clone the repo next to ../shared)")
    return REAL_DATA
