"""The reference path that SAM/BAM records are placed on: :class:`RefPath` (a GFA ``P``
or ``W`` line as arrays), :func:`choose_path` (which path a name, or none, picks) and the
path's bases (:func:`_path_bases`). See :mod:`s2g.sam` for the design.
"""
from __future__ import annotations

import re

import numba
import numpy as np

from .._numba import NJIT
from ..errors import S2GError
from ..graph_core import COMPLEMENT_CODE

_W_NAME = re.compile(r"^[^#]*#[^#]*#[^#]*:\d+-\d+$")          # W lines: sample#hap#seq:start-end
# hg19/hg38 but not a 1000 Genomes or HPRC sample (HG002, HG00733: hg, two digits, more)
_REF_LIKE = re.compile(r"(?i)^ref|grch|(?<![a-z0-9])hg\d\d(?!\d)|chm13|t2t")
_W_PARTS = re.compile(r"^[^#]*#[^#]*#([^#]*):(\d+)-(\d+)$")
_SUBRANGE = re.compile(r"^(.+)\[(\d+)-(\d+)\]$")         # vg/odgi subpath: name[start-end]


def sam_coordinates(name):
    """(SAM sequence name, offset of the path's first base, end or None) of a path: a W
    line (``sample#hap#seq:start-end``) is ``seq`` from ``start``; a P line named
    ``name[start-end]`` (a subpath, as vg and odgi write them) is ``name`` from ``start``;
    any other path is itself from 0. So a region graph's BAM lies on the chromosome's
    coordinates, as a linear aligner's would."""
    m = _W_PARTS.match(name)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    m = _SUBRANGE.match(name)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    return name, 0, None


class RefPath:
    """The reference path of ``graph`` (loaded with ``keep_paths=True``) as arrays.

    ``name``: a path's exact name; a W line also by a prefix ending before a ``#`` or the
    ``:start-end`` (``CHM13#0#chr6``) when that names one walk. None: the only path, else
    the first reference-looking P line (``ref``, ``GRCh38``, ``CHM13``, ...), else the
    first path. ``seq``: the path's bases (codes 0-4) in the path's orientation;
    ``step_seg``/``step_rev``/``step_off``: each step's segment, orientation and offset on
    the path (a segment may occur more than once); ``occ_ptr``/``occ_step``: the steps of
    each segment (CSR). ``sam_name``/``offset``/``sam_length``: where the path lies in
    SAM coordinates (:func:`sam_coordinates`: a W line's sequence from its start).
    """

    def __init__(self, graph, name=None):
        self.name = path_name(graph, name)
        paths = graph.paths
        steps = np.asarray(paths[self.name], np.int64).reshape(-1, 2)
        if len(steps) == 0:
            raise S2GError(f"{_source(graph)}path {self.name!r} is empty")
        self.step_seg = np.ascontiguousarray(steps[:, 0], np.int64)
        self.step_rev = np.ascontiguousarray(steps[:, 1], np.uint8)
        seg_len = np.asarray(graph.seg_len, np.int64)
        self.step_off = np.zeros(len(steps) + 1, np.int64)
        np.cumsum(seg_len[self.step_seg], out=self.step_off[1:])
        self.length = int(self.step_off[-1])
        #: SAM's name for it, where its first base lies there, and its length at least
        #: (:func:`sam_coordinates`)
        self.sam_name, self.offset, end = sam_coordinates(self.name)
        self.sam_length = max(self.offset + self.length, end or 0)
        n_seg = len(seg_len)
        # one node of each segment, and its bases as the forward strand (any copy of an
        # unrolled cyclic graph will do: they hold the same bases)
        node_seg = np.asarray(graph.node_seg, np.int64)
        seg_node = np.full(n_seg, -1, np.int64)
        seg_node[node_seg[::-1]] = np.arange(len(node_seg) - 1, -1, -1)
        if (seg_node[self.step_seg] < 0).any():
            bad = int(self.step_seg[np.flatnonzero(seg_node[self.step_seg] < 0)[0]])
            raise S2GError(f"{_source(graph)}path {self.name!r} uses segment "
                           f"{graph.seg_names[bad]!r}, which is not in the graph as loaded")
        self.seq = _path_bases(self.step_seg, self.step_rev, self.step_off, seg_node,
                               np.asarray(graph.node_start, np.int64),
                               np.asarray(graph.node_rev, np.uint8), graph.base, COMPLEMENT_CODE)
        order = np.argsort(self.step_seg, kind="stable")
        self.occ_step = order.astype(np.int64)
        self.occ_ptr = np.zeros(n_seg + 1, np.int64)
        np.cumsum(np.bincount(self.step_seg, minlength=n_seg), out=self.occ_ptr[1:])

    def sequence(self, start=0, end=None) -> str:
        """The path's bases ``[start, end)`` as text (tests, debugging)."""
        return np.frombuffer(b"ACGTN", np.uint8)[self.seq[start:end]].tobytes().decode()


def _source(graph):
    src = getattr(graph, "source", "")
    return f"{src}: " if src else ""


def path_name(graph, name=None) -> str:
    """The name of ``graph``'s path to surject onto (``name``: as :class:`RefPath`'s), or
    a one-line error for a graph without paths or a name that names none: before a run
    spends anything on a graph SAM/BAM cannot use. (A cyclic graph's paths are its
    records'.)"""
    paths = (getattr(graph, "paths", None) or getattr(getattr(graph, "rec", None), "paths", None)
             or {})
    if not paths:
        raise S2GError(f"{_source(graph)}has no paths (P or W lines) to surject onto; "
                       "SAM/BAM output needs a reference path (a graph loaded with "
                       "keep_paths=True)")
    return choose_path(paths, name, _source(graph))


def choose_path(paths, name, where=""):
    """The name of the path to surject onto (see :class:`RefPath`)."""
    names = list(paths)
    if name is None:
        if len(names) == 1:
            return names[0]
        p_lines = [x for x in names if not _W_NAME.match(x)]
        w_lines = [x for x in names if _W_NAME.match(x)]
        for x in p_lines + w_lines:
            if _REF_LIKE.search(x):
                return x
        return names[0]
    if name in paths:
        return name
    hits = [x for x in names if x.startswith(name + "#") or x.startswith(name + ":")]
    if len(hits) == 1:
        return hits[0]
    shown = ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")
    if hits:
        shown = ", ".join(hits[:10]) + (f", ... ({len(hits)})" if len(hits) > 10 else "")
        raise S2GError(f"{where}reference path {name!r} is ambiguous: it is a prefix of "
                       f"{len(hits)} paths ({shown}); give the full name")
    raise S2GError(f"{where}no path named {name!r}; the graph's paths: {shown}")


@numba.njit(**NJIT)
def _path_bases(step_seg, step_rev, step_off, seg_node, node_start, node_rev, base, comp):
    out = np.empty(step_off[-1], np.uint8)
    for i in range(len(step_seg)):
        v = seg_node[step_seg[i]]
        a = node_start[v]
        ln = node_start[v + 1] - a
        o = step_off[i]
        # the node's bases are in the node's orientation; flip when it differs from the step's
        if node_rev[v] == step_rev[i]:
            for k in range(ln):
                out[o + k] = base[a + k]
        else:
            for k in range(ln):
                out[o + k] = comp[base[a + ln - 1 - k]]
    return out
