"""The benchmark harness in quick mode (CPU variants, tiny sizes) into a tmp dir.

Checks that every experiment writes its JSON, that each record carries the fields
the issue asks for, that the timed variants agree with V0 (status ok), and that
GCUPS is cells / kernel time. abPOA is run when pyabpoa is installed, else skipped.
"""
import json
import os

import pytest

from bench import harness

REQUIRED = ("experiment", "variant", "mode", "graph", "graph_bases", "n_reads", "read_len", "cells",
            "kernel_s", "kernel_min_s", "kernel_max_s", "gcups", "e2e_s", "device", "commit", "date",
            "reps", "timing", "versions", "check")


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    code = harness.main(["--quick", "--out", str(out), "--no-plots", "--quiet", "--variants", "v0,cpu"])
    assert code == 0
    return out


def test_every_experiment_written(quick_results):
    for exp in harness.EXPERIMENTS:
        doc = json.loads((quick_results / f"{exp}.json").read_text())
        assert doc["experiment"] == exp and doc["records"]
    assert (quick_results / "RESULTS.md").exists()
    head = (quick_results / "HEADLINE.md").read_text()
    assert "| device | variant |" in head and "python -m bench" in head


def test_records(quick_results):
    n_ok = 0
    for exp in harness.EXPERIMENTS:
        for r in json.loads((quick_results / f"{exp}.json").read_text())["records"]:
            assert r["experiment"] == exp
            if r["variant"] == "abpoa":
                assert r["status"] in ("ok", "skipped", "error")
                continue
            assert r["status"] == "ok", r.get("reason")
            for k in REQUIRED:
                assert k in r, k
            assert r["check"]["status"] == "ok" and r["check"]["n_reads"] >= 1
            assert r["timing"] == "host" and r["reps"] >= 5
            assert r["kernel_min_s"] <= r["kernel_s"] <= r["kernel_max_s"]
            assert r["gcups"] == pytest.approx(r["cells"] / r["kernel_s"] / 1e9)
            assert r["cells"] == r["graph_bases"] * r["read_bases"]
            assert r["e2e_s"] > 0 and r["mode"] == "local"
            if r["variant"] == "v0":
                assert r["speedup_vs_v0"] == pytest.approx(1.0)
            n_ok += 1
    assert n_ok >= 10


def test_bad_variant_is_an_error(tmp_path, capsys):
    assert harness.main(["--quick", "--out", str(tmp_path), "--variants", "nope"]) == 1
    assert "unknown variant" in capsys.readouterr().err


def test_s2g_bench_subcommand():
    from s2g.cli import build_parser
    args = build_parser().parse_args(["bench", "--quick", "--experiments", "n_reads"])
    assert args.func.__module__ == "s2g.bench_cli" and args.quick


def test_harness_imports_without_matplotlib_or_cuda():
    import subprocess
    import sys
    code = ("import sys; import bench.harness, bench.report, bench.peer; "
            "assert 'matplotlib' not in sys.modules and 'numba.cuda' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(os.path.dirname(__file__)))


def test_merge_keeps_ok_records(quick_results, tmp_path):
    out = tmp_path / "merged"
    assert harness.main(["--merge", str(quick_results), str(quick_results), "--out", str(out),
                         "--no-plots"]) == 0
    a = json.loads((quick_results / "n_reads.json").read_text())["records"]
    b = json.loads((out / "n_reads.json").read_text())
    assert len(b["records"]) == len(a) and len(b["runs"]) == 2
    assert (out / "HEADLINE.md").exists()


def test_merge_drops_records(quick_results, tmp_path):
    """--drop-variants VARIANT (every run) and RUN:VARIANT (one run folder)."""
    out = tmp_path / "merged"
    run = os.path.basename(os.path.normpath(str(quick_results)))
    a = json.loads((quick_results / "n_reads.json").read_text())["records"]
    names = sorted({r["variant"] for r in a})
    assert len(names) >= 2
    assert harness.main(["--merge", str(quick_results), "--out", str(out), "--no-plots",
                         "--drop-variants", f"{names[0]},{run}:{names[1]}"]) == 0
    b = json.loads((out / "n_reads.json").read_text())
    assert {r["variant"] for r in b["records"]} == set(names) - set(names[:2])
    assert "Left out of this merge" in (out / "HEADLINE.md").read_text()


def test_simd_bench_smoke(tmp_path):
    """bench.simd end to end on a tiny workload: its exactness checks pass, the JSON has
    the simd records, the host-scaling probe's and the host's core counts."""
    import json

    from bench import simd as bs
    assert bs.main(["--out", str(tmp_path), "--total-bases", "2000", "--reads", "70",
                    "--read-len", "40", "--v0-reads", "3", "--threads", "1", "--modes",
                    "local", "--reps", "1", "--host-scaling"]) == 0
    doc = json.loads((tmp_path / "simd.json").read_text())
    assert {"v0", "simd", "simd_e2e"} <= {r["variant"] for r in doc["records"]}
    host = {r["variant"]: r for r in doc["records"] if r["variant"].startswith("host_")}
    assert set(host) == {"host_vector", "host_scalar"}
    assert all(r["eff"] == 1.0 and r["kernel_s"] > 0 for r in host.values())
    assert doc["meta"]["cores"] >= 1 and "physical_cores" in doc["meta"]


def test_sass_tool_parses_listings_and_says_when_ptxas_is_missing(monkeypatch, tmp_path):
    """bench/sass.py (registers and SASS without a GPU): the listing parser, and a clear
    exit where no ptxas is found (CI has none)."""
    from bench import sass
    listing = ("        /*0010*/                   PRMT R3, R53, R2, R67 ;\n"
               "                                                  /* 0x0000000235037216 */\n"
               "        /*0020*/              @!P0 BRA 0xdfa0 ;\n")
    assert sass.instructions(listing) == [(0x10, "PRMT R3, R53, R2, R67"),
                                          (0x20, "@!P0 BRA 0xdfa0")]
    monkeypatch.setenv("PTXAS_BIN", str(tmp_path))
    monkeypatch.setattr(sass.sys, "path", [str(tmp_path)])
    with pytest.raises(SystemExit) as exc:
        sass._bin(None)
    assert "no ptxas found" in str(exc.value)


@pytest.mark.parametrize("name", ["seeded", "pairs", "golden", "long_reads", "long_windows",
                                  "gpu_windows", "devices", "scale_out", "device_choice"])
def test_s2g_bench_runs_each_experiment_module(name, capsys):
    """``s2g bench NAME --help``: the experiment's own options, under its s2g name."""
    from s2g.cli import main
    with pytest.raises(SystemExit) as exc:
        main(["bench", name, "--help"])
    assert exc.value.code == 0
    assert f"usage: s2g bench {name}" in capsys.readouterr().out


def test_gpu_windows_bench_cpu_way(tmp_path, capsys):
    """``s2g bench gpu_windows --ways cpu`` runs without a GPU: its JSON row and table line
    (the GPU ways are measured on the GPU machine)."""
    import json
    from s2g.cli import main
    assert main(["bench", "gpu_windows", "--graph", "rep:20000", "--reads", "60", "--batch",
                 "30", "--ways", "cpu", "--out", str(tmp_path)]) == 0
    row = json.load(open(tmp_path / "gpu_windows.json"))["rows"][0]
    assert row["cpu"]["windows"] >= 60 and row["cpu"]["reads_per_s"] > 0
    assert "rep:20000" in capsys.readouterr().out


def test_devices_bench_rows_and_table(tmp_path, capsys):
    """``s2g bench devices``: the CPU row timed from s2g's own closing line, the GPU row
    skipped without a GPU (measured on the GPU machine), a GraphAligner row from the given
    executable (a stand-in script here: GraphAligner is not installed in CI), the reads
    repeated with suffixed names, a nonzero exit when a row fails."""
    import json
    import stat
    from s2g.cli import main
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ga = tmp_path / "GraphAligner"
    ga.write_text("#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -a ] && : > \"$2\"; shift; done\n")
    ga.chmod(ga.stat().st_mode | stat.S_IEXEC)
    g = os.path.join(repo, "graphs")
    argv = ["bench", "devices", "--graph", os.path.join(g, "example.gfa"), "--reads",
            os.path.join(g, "example.fq"), "--graph", os.path.join(g, "cactus-BRCA2.gfa"),
            "--reads", os.path.join(g, "cactus-BRCA2.100.fq"), "--repeat", "2", "--runs",
            "1", "--graphaligner", str(ga), "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    doc = json.load(open(tmp_path / "out" / "devices.json"))
    assert [os.path.basename(x["graph"]) for x in doc["graphs"]] == ["example.gfa",
                                                                   "cactus-BRCA2.gfa"]
    for gd, fq in zip(doc["graphs"], ("example.fq", "cactus-BRCA2.100.fq")):
        rows = {r["name"]: r for r in gd["rows"]}
        n = sum(1 for _ in open(os.path.join(g, fq))) // 4
        assert gd["n_reads"] == 2 * n
        assert rows["cpu"]["status"] == "ok" and rows["cpu"]["n_reads"] == 2 * n
        assert rows["cpu"]["reads_per_s"] > 0 and rows["cpu"]["stages"]["align"] > 0
        assert rows["graphaligner"]["status"] == "ok" and rows["graphaligner"]["reads_per_s"] > 0
        if rows["gpu"]["status"] == "ok":
            assert gd["gaf_identical_to_cpu"]["gpu"]
        else:
            assert rows["gpu"]["reason"] == "no GPU"
    out = capsys.readouterr().out
    assert "| example.gfa | cpu |" in out and "| cactus-BRCA2.gfa | cpu |" in out
    assert "| 1.00 |" in out                       # the CPU row against itself
    ga.write_text("#!/bin/sh\nexit 3\n")
    assert main(argv[:-1] + [str(tmp_path / "out2")]) == 1
    with pytest.raises(SystemExit) as e:                    # a --graph without its --reads
        main(argv[:-2] + ["--graph", os.path.join(g, "example.gfa")])
    assert e.value.code == 2


def test_device_choice_bench_rows(tmp_path, capsys):
    """``s2g bench device_choice``: the first N reads of a file, the CPU and auto rows (the
    GPU row skipped without a GPU), each median of its runs, auto's path named, GAF
    compared; ``head_reads`` of FASTQ and FASTA."""
    import json
    from bench.device_choice import head_reads
    from s2g.cli import main
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    fq = os.path.join(repo, "graphs", "example.fq")
    assert head_reads(fq, 3, str(tmp_path / "h.fq")) == 3
    assert open(tmp_path / "h.fq").read() == "".join(open(fq).readlines()[:12])
    (tmp_path / "a.fa").write_text(">a\nAC\nGT\n>b\nGG\n>c\nT\n")
    assert head_reads(str(tmp_path / "a.fa"), 2, str(tmp_path / "h.fa")) == 2
    assert open(tmp_path / "h.fa").read() == ">a\nAC\nGT\n>b\nGG\n"
    assert main(["bench", "device_choice", "--case",
                 f"ex:{os.path.join(repo, 'graphs', 'example.gfa')}:{fq}:20", "--runs", "1",
                 "--out", str(tmp_path / "out")]) == 0
    row = json.load(open(tmp_path / "out" / "device_choice.json"))["rows"][0]
    assert row["status"] == "ok" and row["count"] == 20 and row["gaf_identical"]
    assert row["cpu"]["process_s"] > 0 and row["auto"]["choice"] == ["cpu"]
    assert "| ex | 20 |" in capsys.readouterr().out


def test_scale_out_bench_table(tmp_path, capsys):
    """``s2g bench scale_out`` on CPU workers: one process and a cluster of one worker
    started apart, same reads, GAF compared, rates from s2g's closing lines, one table."""
    pytest.importorskip("distributed")
    import json
    from s2g.cli import main
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / "out"
    assert main(["bench", "scale_out", "--graph", os.path.join(repo, "graphs", "example.gfa"),
                 "--reads", os.path.join(repo, "graphs", "example.fq"), "--repeat", "2",
                 "--device", "cpu", "--workers", "1", "--runs", "1", "--out", str(out)]) == 0
    doc = json.load(open(out / "scale_out.json"))
    assert [r["workers"] for r in doc["rows"]] == [0, 1]
    assert doc["reads"] == 400 and all(r["identical"] for r in doc["rows"])
    assert all(r["median_reads_per_s"] > 0 for r in doc["rows"])
    assert "| Dask, 1 CPU worker |" in (out / "scale_out.md").read_text()
    assert (out / "logs" / "dask_1_cpu_worker_1.log").exists()


def test_env_medians_pools_repeated_words_and_skips_cold_and_failed_runs(tmp_path, capsys):
    """bench.env_medians: runs of one ENVS word pooled, the default's (words setting
    nothing of s2g's, and `# run gpu_warm`) together; gpu_cold and failed runs left out."""
    from bench import env_medians
    line = "s2g: {n} reads, {n} aligned, 0 without alignment; seeded; {w} s (1 reads/s)\n"
    log = tmp_path / "all.log"
    log.write_text(
        "# env X=1\n" + line.format(n=1000, w=5.0)
        + "# env S2G_CONFIG=a=1\n" + line.format(n=1000, w=4.0)
        + "# env S2G_CONFIG=b=1\ns2g: internal error: boom\n"
        + "# env X=1\n" + line.format(n=1000, w=3.0)
        + "# env S2G_CONFIG=a=1\n" + line.format(n=1000, w=2.0) + "# process wall 3.5 s\n"
        + "# run gpu_cold\n" + line.format(n=1000, w=9.0)
        + "# run gpu_warm\n" + line.format(n=1000, w=4.0))
    got = env_medians.runs([str(log)])
    assert got == {"default": [(1000, 5.0), (1000, 3.0), (1000, 4.0)],
                   "S2G_CONFIG=a=1": [(1000, 4.0), (1000, 2.0)]}
    assert env_medians.main([str(log)]) == 0
    out = capsys.readouterr().out
    assert "| S2G_CONFIG=a=1 | 2 | 4.00, 2.00 | 3.00 | 333 | 3.50 |" in out
    assert "| default | 3 | 5.00, 3.00, 4.00 | 4.00 | 250 | - |" in out


def test_candidates_bench_reports_windows_and_their_cells(capsys):
    """bench.candidates on the bundled BRCA2 graph (its index is bundled): every read's
    best-chain window counted once, the other windows' share of the cells >= 1."""
    import json

    from bench import candidates
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assert candidates.main(["--graph", os.path.join(repo, "graphs", "cactus-BRCA2.gfa"),
                            "--reads", os.path.join(repo, "graphs", "cactus-BRCA2.100.fq"),
                            "--show", "2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("read 0: ") and len(lines) == 3
    got = json.loads(lines[-1])
    assert got["reads"] == 100 and got["windows_per_read"] >= 1.0
    assert got["cells_all_over_best"] >= 1.0 and got["best_width_over_len_median"] > 0.5


def test_gaf_rescore(tmp_path, capsys):
    """bench.gaf_rescore: a CIGAR under s2g's scoring, and per read the best line of each
    file compared (a read missing from a file counts as lowest)."""
    from bench.gaf_rescore import main as rescore, score
    assert score("3=1X2D1I1=") == 6 - 4 - 8 - 6 + 2
    line = "{}\t10\t0\t5\t+\t>1\t10\t0\t5\t4\t5\t60\tcg:Z:{}\n"
    (tmp_path / "a.gaf").write_text(line.format("r1", "5=") + line.format("r2", "2=1X2="))
    (tmp_path / "b.gaf").write_text(line.format("r1", "4=1X") + line.format("r1", "1X4=")
                                    + line.format("r2", "5=") + line.format("r3", "5="))
    assert rescore([str(tmp_path / "a.gaf"), str(tmp_path / "b.gaf")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 reads: higher 1, equal 0, lower 2"), out


def test_bound_excess_error_positions_and_hits():
    """bench.bound_excess: a mismatch, an inserted run and a deletion mark the right read
    positions; two errors 3 apart need two hits at q = 10 but three errors within 10 need
    two, and errors farther apart than q one hit each."""
    import numpy as np
    from bench.bound_excess import error_positions, hits
    err = error_positions("5=1X4=2I3=1D5=", 25, 2)
    assert np.nonzero(err)[0].tolist() == [7, 12, 13, 16]
    e = np.zeros(100, bool)
    e[[20, 23]] = True
    assert hits(e, 0, 100, 10) == 2
    e[[26]] = True                                   # 20, 23, 26: a run of starts 11..26
    assert hits(e, 0, 100, 10) == 2
    e[:] = False
    e[[10, 40, 70]] = True
    assert hits(e, 0, 100, 10) == 3 and hits(e, 0, 100, 40) == 2
