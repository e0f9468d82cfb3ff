"""bench/long_reads.py without the aligner: parsing of captured `s2g align --timings`
and `s2g index` stderr, the GAF comparison, the records and the report's fallbacks.

The GPU samples are verbatim lines of bench/results/nvidia-h100/long/e2e_10kbp_s11call4.log
(H100, 1000 x 10 kbp reads); the CPU sample is a `--variant simd` run on the dev VM. Their
`s2g: memory:` lines are made up in the format of s2g/summary.py's memory_report (added later).
"""
import json
import sys

import pytest

from bench import long_reads as lr

GPU_FULL_TB = """\
s2g: 1000 reads, 1000 aligned, 0 without alignment; variant fast; 8.26 s (121 reads/s)
s2g: seconds per stage: load graph 0.78, align 7.01, traceback (GPU) 0.13, GAF text 0.05, write 0.00; wall 8.26 (aligning from 1.05 s to 8.06 s)
s2g: long-window kernel: 1,000 windows in 5 launches, 117,028,198,263 cells, 1.06 s, 110.2 GCUPS
s2g: memory: peak RSS 3,210 MB; GPU buffers peak 12,345 MB, pinned host 64 MB; GPU memory in use peak 20,111 MB (whole device)
"""

GPU_SEEDED = """\
s2g: warning: 3 read(s) longer than --max-read-len 1000: seeded alignment used the cyclic graph
s2g: 1000 reads, 1000 aligned, 0 without alignment; seeded (1.00 windows per read, 0 reads without a seed hit); 4.10 s (244 reads/s)
s2g: seconds per stage: load graph (from GRAPH.s2gg) 0.14, index 0.74, align 2.09, traceback (GPU) 0.14, GAF text 0.08, write 0.00; wall 4.10 (aligning from 1.77 s to 3.86 s)
s2g: seeded align stage, seconds: seeds+chains 0.68, windows 2.07, GPU sizes 0.07, GPU fill 0.15, GPU device 1.48, GPU kernel 1.33; first batch 2.09
s2g: long-window kernel: 1,000 windows in 6 launches, 127,763,445,067 cells, 1.33 s, 95.8 GCUPS; of which scores only (seeded windows): 500 windows, 100,000,000,000 cells, 1.00 s
"""

GPU_INDEX = "s2g: m.gfa.s2gi: 613,803 seeds (613,800 distinct) over 2,000,000 columns, 7.4 MB, 13.7 s\n"

CPU_FULL = """\
s2g: 10 reads, 10 aligned, 0 without alignment; variant simd; 2.34 s (4.3 reads/s)
s2g: seconds per stage: load graph 0.16, align 2.04, traceback (CPU) 0.00, GAF text 0.02, write 0.00; wall 2.34 (aligning from 0.22 s to 2.26 s)
s2g: memory: peak RSS 412 MB
"""


def test_parse_gpu_full_traceback():
    t = lr.parse_timings(GPU_FULL_TB)
    assert (t["n_reads"], t["aligned"], t["unaligned"]) == (1000, 1000, 0)
    assert t["how"] == "variant fast"
    assert t["wall_s"] == 8.26 and t["reads_per_s"] == 121
    assert t["stages"] == {"load graph": 0.78, "align": 7.01, "traceback": 0.13, "GAF text": 0.05,
                           "write": 0.0}
    assert t["traceback_on"] == "GPU" and t["graph_cache_hit"] is False
    assert t["align_span_s"] == [1.05, 8.06] and t["stage_wall_s"] == 8.26
    assert t["long_window"] == {"windows": 1000, "launches": 5, "cells": 117_028_198_263,
                                "kernel_s": 1.06, "gcups": 110.2}
    assert (t["peak_rss_mb"], t["gpu_peak_mb"], t["pinned_peak_mb"], t["gpu_used_mb"]) == \
        (3210, 12345, 64, 20111)
    assert t["warnings"] == []


def test_parse_gpu_seeded():
    t = lr.parse_timings(GPU_SEEDED)
    assert t["how"].startswith("seeded (1.00 windows per read")
    assert t["graph_cache_hit"] is True
    assert t["stages"]["load graph"] == 0.14 and t["stages"]["index"] == 0.74
    assert t["seeded_stages"]["GPU kernel"] == 1.33 and t["seeded_stages"]["seeds+chains"] == 0.68
    assert t["first_batch_s"] == 2.09
    assert t["long_window"]["windows"] == 1000 and t["long_window"]["gcups"] == 95.8
    assert t["long_window"]["cells"] == 127_763_445_067 and t["long_window"]["gcups"] == 95.8
    assert len(t["warnings"]) == 1 and t["warnings"][0].startswith("3 read(s) longer")


def test_parse_cpu_and_index():
    t = lr.parse_timings(CPU_FULL)
    assert t["long_window"] is None and t["traceback_on"] == "CPU"
    assert t["reads_per_s"] == 4.3 and t["stages"]["align"] == 2.04
    assert t["peak_rss_mb"] == 412 and "gpu_peak_mb" not in t
    assert lr.parse_timings("s2g: error: unknown variant 'x'\n") == {"warnings": [], "long_window": None,
                                                                    "fast_kernel": None}
    ix = lr.parse_index("s2g: wrote the graph cache m.gfa.s2gg (9.1 MB, 0.20 s)\n" + GPU_INDEX)
    assert ix == {"path": "m.gfa.s2gi", "seeds": 613_803, "distinct": 613_800, "columns": 2_000_000,
                  "mb": 7.4, "build_s": 13.7}
    assert lr.parse_index("") == {}


def test_mode_record_cells_and_gcups():
    wl = {"n_reads": 1000, "graph_bases": 200_000, "read_bases": 10_000_000}
    run = {"status": "ok", "rc": 0, "process_s": 10.0, "stderr": GPU_FULL_TB, "command": "s2g align"}
    rec = lr._mode_record(wl, "full-tb", run, None)
    assert rec["status"] == "ok" and rec["cells"] == 2_000_000_000_000
    assert rec["align_gcups"] == pytest.approx(2e12 / 7.01 / 1e9, rel=1e-4)
    assert rec["wall_gcups"] == pytest.approx(2e12 / 8.26 / 1e9, rel=1e-4)
    assert rec["reads_per_s"] == pytest.approx(1000 / 8.26, rel=1e-3)
    assert rec["kernel_gcups"] == 110.2 and rec["process_reads_per_s"] == 100.0
    seeded = lr._mode_record(wl, "seeded", dict(run, stderr=GPU_SEEDED), None)
    assert "cells" not in seeded and seeded["kernel_gcups"] == 95.8
    # exit 0 without --timings lines is not a result
    bad = lr._mode_record(wl, "full", dict(run, stderr="nothing\n"), None)
    assert bad["status"] == "error" and "--timings" in bad["reason"]
    to = lr._mode_record(wl, "full", dict(run, status="timeout", reason="killed"), None)
    assert to["status"] == "timeout" and "wall_s" not in to


# the lines s2g/cli.py prints since session 17 (format of its f-strings; numbers made up)
FAST_LINES = """\
s2g: fast kernel: 1 launch, 2,000,000,000,000 cells, 1.60 s, 1250.0 GCUPS (launch calls 1.81 s, setup 0.12 s)
s2g: GPU traceback, seconds: sizes 0.02, fill 0.05, device 0.61, kernel 0.49, summary 0.03, store 0.01
"""


def test_fast_kernel_line_and_wall_per_kernel():
    t = lr.parse_timings(GPU_FULL_TB + FAST_LINES)
    assert t["fast_kernel"] == {"launches": 1, "cells": 2_000_000_000_000, "kernel_s": 1.6,
                                "gcups": 1250.0, "calls_s": 1.81, "setup_s": 0.12}
    assert t["gpu_traceback"]["device"] == 0.61 and t["gpu_traceback"]["kernel"] == 0.49
    assert lr.parse_timings(FAST_LINES.replace("1 launch,", "3 launches,"))["fast_kernel"]["launches"] == 3
    wl = {"n_reads": 1000, "graph_bases": 200_000, "read_bases": 10_000_000}
    run = {"status": "ok", "rc": 0, "process_s": 10.0, "stderr": GPU_FULL_TB + FAST_LINES}
    rec = lr._mode_record(wl, "full-tb", run, None)
    assert rec["fwd_kernel_gcups"] == 1250.0
    assert rec["wall_per_kernel"] == pytest.approx(2e12 / 8.26 / 1e9 / 1250.0, abs=1e-4)
    assert lr._mode_record(wl, "full-tb", dict(run, stderr=GPU_FULL_TB), None)["fwd_kernel_gcups"] is None


def test_compare_gaf():
    full = ["r1\t100\t0\t100\t+\t>1>2\t200\t5\t105\t98\t100\t255\tAS:i:190\tcg:Z:100M",
            "r2\t100\t0\t100\t-\t<3\t200\t0\t100\t97\t100\t255\tAS:i:180\tcg:Z:100M",
            "r3\t100\t0\t100\t+\t>4\t200\t0\t100\t97\t100\t255\tAS:i:180\tcg:Z:100M"]
    seeded = [full[0].replace("\t255\t", "\t60\t"), full[1],
              full[2].replace(">4", ">5").replace("\t255\t", "\t60\t")]
    c = lr.compare_gaf(full, seeded)
    assert c["compared"] == 3 and c["identical_lines"] == 1
    assert c["same_alignment"] == 2 and c["same_score"] == 3
    assert c["first_different_read"] == "r3" and c["same_name_frac"] == 1.0
    assert lr.compare_gaf([], [])["same_alignment_frac"] is None


def test_workload_names():
    assert lr.workload_spec("sim1M_50k") == {"name": "sim1M_50k", "kind": "sim", "graph": 1_000_000,
                                             "n_reads": 100, "read_len": 50_000}
    assert lr.workload_spec("C4_10k")["graph"] == "c4_gwfa"
    assert lr.workload_spec("sim10M_5k")["graph"] == 10_000_000
    assert lr.workload_spec("drb1_20k")["n_reads"] == 100
    with pytest.raises(ValueError, match="unknown workload"):
        lr.workload_spec("LPA_10k")


def test_substitutions():
    import numpy as np
    seq = "ACGTN" * 200
    same, k = lr.add_substitutions(seq, 0.0, np.random.default_rng(0))
    assert same == seq and k == 0
    all_, k = lr.add_substitutions(seq, 1.0, np.random.default_rng(0))
    assert k == 800 and all(a != b for a, b in zip(seq, all_) if a != "N")
    assert all_[4::5] == "N" * 200


def test_run_cli_timeout_and_error(tmp_path):
    r = lr.run_cli([sys.executable, "-c", "import time; time.sleep(30)"], 0.5)
    assert r["status"] == "timeout" and "0.5 s timeout" in r["reason"] and r["process_s"] < 15
    r = lr.run_cli([sys.executable, "-c", "import sys; sys.exit('s2g: error: boom')"], 30)
    assert r["status"] == "error" and r["reason"] == "exit 1: s2g: error: boom"


def test_report_without_matplotlib(tmp_path, monkeypatch):
    doc = {"benchmark": "long_reads", "workload": "sim100k_10k", "device": "cpu", "commit": "abc",
           "date": "2026-01-01T00:00:00Z", "command": "python -m bench.long_reads", "scale": 1,
           "read_len_scale": 1, "variant": "simd",
           "workload_info": {"n_reads": 1000, "read_len": 10000, "graph_bases": 200000},
           "results": {"full": {"status": "ok", "wall_s": 2.0, "reads_per_s": 500.0, "process_s": 3.0,
                                "stages": {"align": 1.5}, "align_gcups": 1333.3, "kernel_gcups": None,
                                "gaf": {"lines": 1000, "expected": 1000, "ok": True}},
                       "seeded": {"status": "timeout", "reason": "killed after the 300 s timeout"}}}
    (tmp_path / "sim100k_10k.json").write_text(json.dumps(doc))
    (tmp_path / "other.json").write_text("{}")          # not ours: ignored
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    msgs = []
    assert lr.write_report(str(tmp_path), msgs.append) == 0
    md = (tmp_path / "long_reads.md").read_text()
    assert "| sim100k_10k | cpu | 200,000 | 1,000 x 10,000 | full | ok | 2.00 | 500.00 |" in md
    assert "timeout: killed after the 300 s timeout" in md
    assert not (tmp_path / "long_reads.png").exists()
    assert any("matplotlib is not installed" in m for m in msgs)


def test_memory_line_as_s2g_prints_it_parses():
    """The `s2g: memory:` line as s2g/summary.py makes it (pools, pinned, the whole
    device's use) is what parse_timings reads."""
    from s2g.summary import memory_report
    line = "s2g: memory: " + memory_report({"device": 5 << 20, "pinned": 1 << 20,
                                            "used": 9 << 20})
    t = lr.parse_timings(line + "\n")
    assert (t["gpu_peak_mb"], t["pinned_peak_mb"], t["gpu_used_mb"]) == (5, 1, 9)
    t = lr.parse_timings("s2g: memory: " + memory_report({"device": 5 << 20, "pinned": 0}))
    assert t["gpu_peak_mb"] == 5 and "gpu_used_mb" not in t
