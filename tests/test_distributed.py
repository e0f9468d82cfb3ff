"""s2g on a Dask cluster (issue 6): the same GAF, byte for byte, as one process.

One local cluster of 2 worker processes (1 thread each) serves the whole module;
reads go in small chunks so several are in flight and arrive out of order. The
worker-failure test SIGKILLs a worker mid-chunk (test hook: the first time a given
chunk runs) and checks that the output is still the single-process output.
"""
from __future__ import annotations

import io
import itertools
import os

import pytest

distributed = pytest.importorskip("distributed")

from conftest import REPO  # noqa: E402

import s2g  # noqa: E402
from s2g import cli  # noqa: E402
from s2g import distributed as sd  # noqa: E402
from s2g.errors import S2GError  # noqa: E402
from s2g.plan import RunOptions  # noqa: E402

GFA = str(REPO / "graphs" / "example.gfa")
FQ = str(REPO / "graphs" / "example.fq")
N_READS = 60       # of the 200 in example.fq: enough for 10 chunks, quick on 2 cores
CHUNK = 6


@pytest.fixture(scope="module")
def reads(tmp_path_factory):
    """The first N_READS records of example.fq."""
    with open(FQ) as fh:
        text = "".join(itertools.islice(fh, 4 * N_READS))
    path = tmp_path_factory.mktemp("reads") / "reads.fq"
    path.write_text(text)
    return str(path)


@pytest.fixture(scope="module")
def expected(reads, tmp_path_factory):
    """The single-process CLI's GAF."""
    out = tmp_path_factory.mktemp("single") / "single.gaf"
    assert cli.main(["align", GFA, reads, "-o", str(out), "-v", "cpu", "-q", "--no-progress"]) == 0
    text = out.read_text()
    assert text.count("\n") == N_READS
    return text


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    c.wait_for_workers(2, timeout=60)
    yield c
    c.close()
    cluster.close()


def _run(client, reads, client_graph=None, _test=None, max_traceback_cells=None, **settings):
    """align_file with the cpu variant on 1 thread a worker; ``settings``: DaskSettings'."""
    buf = io.StringIO()
    settings.setdefault("chunk_size", CHUNK)
    options = RunOptions(variant="cpu", threads=1, max_traceback_cells=max_traceback_cells)
    stats = sd.align_file(client, GFA, reads, buf, options, sd.DaskSettings(**settings),
                          client_graph=client_graph, _test=_test)
    return buf.getvalue(), stats


def test_two_workers_same_gaf_as_one_process(client, reads, expected):
    text, stats = _run(client, reads, client_graph=s2g.load_graph(GFA))
    assert text == expected
    assert stats["reads"] == N_READS and stats["chunks"] == N_READS // CHUNK
    # both workers took chunks, and each loaded the graph once, not once per chunk
    per_worker = client.run(sd.worker_stats)
    assert len(per_worker) == 2
    assert all(w["graph_loads"] == 1 for w in per_worker.values()), per_worker
    assert sum(w["chunks"] for w in per_worker.values()) >= N_READS // CHUNK
    # a second run reuses the cached graph and warm kernels
    assert _run(client, reads, window=2)[0] == expected
    assert all(w["graph_loads"] == 1 for w in client.run(sd.worker_stats).values())


def test_cli_dask_scheduler_address(client, reads, expected, tmp_path, capsys):
    out = tmp_path / "dask.gaf"
    code = cli.main(["align", GFA, reads, "-o", str(out), "-v", "cpu", "--no-progress",
                     "--batch-size", str(CHUNK), "--dask", client.scheduler.address])
    assert code == 0
    assert out.read_bytes() == expected.encode()
    assert "60 reads, " in capsys.readouterr().err


def test_standard_input_goes_in_chunks(client, reads, expected, monkeypatch):
    """``-`` (standard input) is read on the client and sent in chunks; it was refused as
    "no such file"."""
    with open(reads) as fh:
        monkeypatch.setattr("sys.stdin", fh)
        text, stats = _run(client, "-")
    assert text == expected and stats["reads"] == N_READS


def test_broadcast_flatgraph(client, reads, expected):
    buf = io.StringIO()
    sd.align_file(client, s2g.load_graph(GFA), reads, buf, RunOptions(variant="cpu"),
                  sd.DaskSettings(chunk_size=CHUNK * 2))
    assert buf.getvalue() == expected


def test_deterministic_error_stops_run_naming_read(client, reads):
    # a traceback limit is an S2GError inside the chunk: returned, not retried
    with pytest.raises(S2GError, match=r"read 'read\d+'.*--max-traceback-cells"):
        _run(client, reads, max_traceback_cells=10)
    # any other exception: bisected on the worker down to the read that fails alone
    with pytest.raises(S2GError, match=r"read 'read17' \(record 17\): RuntimeError"):
        _run(client, reads, _test={"_fail_read": "read17"})


def test_bad_read_in_input_names_it(client, tmp_path):
    bad = tmp_path / "bad.fa"
    bad.write_text(">ok\nACGT\n>broken\nAC!GT\n")
    with pytest.raises(S2GError, match=r"'broken'"):
        _run(client, str(bad))


def test_worker_killed_mid_chunk(client, reads, expected, tmp_path):
    marker = tmp_path / "killed"
    pids = {w["pid"] for w in client.run(sd.worker_stats).values()}
    # the chunk starting at read 19 (0-based 18) kills its worker the first time it runs
    text, stats = _run(client, reads, retries=0, _test={"_kill_once": (str(marker), 3 * CHUNK)})
    assert marker.exists(), "the kill hook never ran"
    assert text == expected            # every read once, in input order
    assert stats["reads"] == N_READS
    # the nanny replaced the dead process
    client.wait_for_workers(2, timeout=60)
    new_pids = {w["pid"] for w in client.run(sd.worker_stats).values()}
    assert len(pids & new_pids) == 1, (pids, new_pids)


def test_gpu_count_respects_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert sd.gpu_count() == 2
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert sd.gpu_count() == 0


def test_empty_input(client, tmp_path):
    empty = tmp_path / "empty.fq"
    empty.write_text("")
    text, stats = _run(client, str(empty))
    assert text == "" and stats["reads"] == 0
    assert os.path.getsize(empty) == 0


def test_seeded_on_the_cluster_equals_one_process(client, reads, tmp_path, capsys):
    """--seeded with --dask: each worker loads the index once; the GAF (MAPQ, secondaries)
    is byte for byte the single-process one. Without the index on disk: one clear error."""
    idx = str(tmp_path / "ex.s2gi")
    assert cli.main(["index", GFA, "-o", idx]) == 0
    single = tmp_path / "single.gaf"
    common = ["--seeded", "--index", idx, "-N", "2", "-v", "cpu", "-q", "--no-progress"]
    assert cli.main(["align", GFA, reads, "-o", str(single)] + common) == 0
    addr = client.scheduler.address
    out = tmp_path / "dask.gaf"
    assert cli.main(["align", GFA, reads, "-o", str(out), "--dask", addr, "--batch-size",
                     str(CHUNK)] + common) == 0
    assert out.read_text() == single.read_text()
    assert "\t60\t" in out.read_text()                      # MAPQ came from the workers
    capsys.readouterr()
    missing = str(tmp_path / "none.s2gi")
    assert cli.main(["align", GFA, reads, "-o", str(out), "--dask", addr, "--seeded",
                     "--index", missing, "-v", "cpu", "-q"]) == 1
    assert "no such index" in capsys.readouterr().err


def test_method_auto_is_decided_on_the_client():
    """The workers get a decided method (s2g.plan.Plan.worker_options): 'auto' is refused
    before anything is submitted."""
    with pytest.raises(S2GError, match="method 'auto' is decided on the client"):
        next(sd.align_batches(None, GFA, [], RunOptions(method="auto")))


def test_pairs_on_the_cluster_equal_one_process(client, tmp_path, capsys):
    """Paired-end reads with --dask: chunks of whole pairs, the fragment model learned
    from the first chunk alone and given to the rest: the GAF (pair tags, MAPQ, rescues)
    is byte for byte the single-process one at the same batch size."""
    from s2g.simulate import simulate_pairs
    gfa, fq1, fq2, _ = simulate_pairs(str(tmp_path / "p"), total_bases=80_000, n_pairs=300,
                                      frag_mean=350, frag_sd=30, seed=6)
    idx = str(tmp_path / "p.s2gi")
    assert cli.main(["index", gfa, "-o", idx]) == 0
    common = ["--index", idx, "-v", "cpu", "-q", "--no-progress", "--batch-size", "200"]
    single = tmp_path / "single.gaf"
    assert cli.main(["align", gfa, fq1, fq2, "-o", str(single)] + common) == 0
    out = tmp_path / "dask.gaf"
    assert cli.main(["align", gfa, fq1, fq2, "-o", str(out), "--dask",
                     client.scheduler.address] + common) == 0
    text = single.read_text()
    assert out.read_text() == text and text.count("\n") == 600
    assert text.count("pd:b:1") >= 590


def test_dask_local_without_a_gpu_aligns_in_process(reads, expected, tmp_path, capsys,
                                                    monkeypatch):
    """--dask local on a host without a GPU: CPU worker processes were slower than this
    process (docs/performance.md#dask), so it aligns here and says so (no cluster starts:
    connect() would fail); --dask-workers N asks for the workers and gets them."""
    monkeypatch.setattr(sd, "gpu_count", lambda: 0)
    started = []
    real = sd.connect

    def spy(*a, **kw):
        started.append(a)
        return real(*a, **kw)

    monkeypatch.setattr(sd, "connect", spy)
    out = tmp_path / "a.gaf"
    assert cli.main(["align", GFA, reads, "-o", str(out), "-v", "cpu", "--dask", "local",
                     "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "aligning in this process" in err and "dask worker" not in err
    assert out.read_text() == expected and not started
    out2 = tmp_path / "b.gaf"
    assert cli.main(["align", GFA, reads, "-o", str(out2), "-v", "cpu", "--dask", "local",
                     "--dask-workers", "1", "--batch-size", str(CHUNK), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "1 dask worker(s)" in err and started
    assert out2.read_text() == expected


def test_dask_local_with_one_gpu_aligns_in_process(reads, expected, tmp_path, capsys,
                                                   monkeypatch):
    """--dask local on a one-GPU host: its one worker would be this process plus Dask
    (0.85x on an H200), so it aligns here and says so; with two GPUs it keeps the cluster."""
    import argparse
    monkeypatch.setattr(sd, "gpu_count", lambda: 1)
    monkeypatch.setattr(sd, "connect", None)          # a cluster would fail the run
    out = tmp_path / "a.gaf"
    assert cli.main(["align", GFA, reads, "-o", str(out), "-v", "cpu", "--dask", "local",
                     "--no-progress"]) == 0
    assert "one GPU here" in capsys.readouterr().err
    assert out.read_text() == expected
    monkeypatch.setattr(sd, "gpu_count", lambda: 2)
    args = argparse.Namespace(dask="local", dask_workers=None, quiet=False)
    sd.local_in_process(args)
    assert args.dask == "local"


# --------------------------------------------------------------------------- parts

def _parts_done(client):
    return sum(w["parts"] for w in client.run(sd.worker_stats).values())


def test_parts_same_gaf_as_one_process(client, reads, expected, tmp_path):
    """Where the reads file can be cut (plain or BGZF), each worker reads its own byte range
    through the whole pipeline (s2g/distributed_worker.py): the same GAF as one process,
    each part aligned once; a file one part would hold goes in chunks as before."""
    from test_read_ranges import bgzf
    before = _parts_done(client)
    text, stats = _run(client, reads, part_bytes=3000)
    assert text == expected
    assert stats["reads"] == N_READS and stats["chunks"] >= 5
    assert _parts_done(client) - before == stats["chunks"]
    packed = tmp_path / "reads.fq.gz"
    with open(reads, "rb") as fh:
        packed.write_bytes(bgzf(fh.read(), 2000))
    text, stats = _run(client, str(packed), part_bytes=1500)
    assert text == expected and stats["chunks"] >= 3
    before = _parts_done(client)
    text, stats = _run(client, reads)                  # 16 MiB parts: one part, so chunks
    assert text == expected and stats["chunks"] == N_READS // CHUNK
    assert _parts_done(client) == before


def test_parts_name_unnamed_reads_as_one_process(client, tmp_path, capsys):
    """A read without a name is named by its record number in the whole file, which a
    worker reading a later part does not know: the client writes it."""
    recs = []
    with open(FQ) as fh:
        lines = list(itertools.islice(fh, 4 * 40))
    for k in range(40):
        name = "" if k % 7 == 3 else lines[4 * k][1:].strip()
        if k == 20:             # a real name in the mark's shape stays as it is
            name = "\x00s2g-unnamed-0123456789abcdef:1\x00"
        recs.append(f">{name}\n{lines[4 * k + 1].strip()}\n")
    path = tmp_path / "noname.fa"
    path.write_text("".join(recs))
    single = tmp_path / "single.gaf"
    assert cli.main(["align", GFA, str(path), "-o", str(single), "-v", "cpu", "-q",
                     "--no-progress"]) == 0
    assert "6 read(s) without a name" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="6 read"):
        text, stats = _run(client, str(path), part_bytes=1200)
    assert stats["chunks"] >= 4
    assert text == single.read_text() and "read11\t" in text
    assert text.count("\x00") == 2                 # the real name's two NULs only
    bad = tmp_path / "bad.fa"                       # an error about an unnamed read
    bad.write_text("".join(recs[:30]) + ">\nACXGT\n" + "".join(recs[30:]))
    with pytest.raises(S2GError, match=r"<unnamed, record \d+ of this part>.*invalid"):
        _run(client, str(bad), part_bytes=1200)


def test_parts_errors_name_the_read_and_part(client, reads):
    with pytest.raises(S2GError, match=r"read 'read17' \(record \d+ of .*reads\.fq \(part "
                                       r"\d+ of \d+, from byte [\d,]+; records and lines counted "
                                       r"from there\)\): RuntimeError"):
        _run(client, reads, part_bytes=3000, _test={"_fail_read": "read17"})
    with pytest.raises(S2GError, match=r"read 'read\d+'.*--max-traceback-cells"):
        _run(client, reads, part_bytes=3000, max_traceback_cells=10)


def test_parts_worker_killed_mid_part(client, reads, expected, tmp_path):
    marker = tmp_path / "killed"
    text, stats = _run(client, reads, retries=0, part_bytes=3000,
                       _test={"_kill_part_once": (str(marker), 2)})
    assert marker.exists(), "the kill hook never ran"
    assert text == expected and stats["reads"] == N_READS
    client.wait_for_workers(2, timeout=60)


def test_parts_seeded_cli(client, reads, tmp_path, monkeypatch):
    """The CLI with --dask and --seeded over parts (knob dask_part_bytes): the GAF of one
    process, MAPQ and secondaries included."""
    from s2g import config
    idx = str(tmp_path / "ex.s2gi")
    assert cli.main(["index", GFA, "-o", idx]) == 0
    common = ["--seeded", "--index", idx, "-N", "2", "-v", "cpu", "-q", "--no-progress"]
    single = tmp_path / "single.gaf"
    assert cli.main(["align", GFA, reads, "-o", str(single)] + common) == 0
    config.configure(dask_part_bytes=2500)
    before = _parts_done(client)
    out = tmp_path / "dask.gaf"
    assert cli.main(["align", GFA, reads, "-o", str(out), "--dask",
                     client.scheduler.address] + common) == 0
    assert out.read_text() == single.read_text()
    assert _parts_done(client) - before >= 5


def test_gzip_input_goes_in_chunks_and_says_so(client, reads, expected, tmp_path, capsys,
                                               monkeypatch):
    """gzip that is not BGZF cannot be cut: the client sends chunks (same GAF) and, for a
    file big enough to matter (here: any, MIN_PART patched), says how to do better."""
    import gzip
    packed = tmp_path / "reads.fq.gz"
    with open(reads, "rb") as fh:
        packed.write_bytes(gzip.compress(fh.read()))
    monkeypatch.setattr(sd, "MIN_PART", 1)
    out = tmp_path / "gz.gaf"
    assert cli.main(["align", GFA, str(packed), "-o", str(out), "-v", "cpu", "--no-progress",
                     "--batch-size", str(CHUNK), "--dask", client.scheduler.address]) == 0
    assert out.read_text() == expected
    assert "cannot be cut into parts" in capsys.readouterr().err


def test_the_first_failing_item_in_input_order_stops_the_run(client):
    """Items 1 and 3 fail, 3 first on the cluster (1 is slow): the run yields item 0 and
    stops with item 1's error, as one process would (s2g.distributed.in_order)."""
    def task(k):
        import time
        if k == 1:
            time.sleep(1.5)
            return ("error", "item 1 failed")
        if k == 3:
            return ("error", "item 3 failed")
        return ("ok", k)

    a, b = sorted(client.scheduler_info(n_workers=-1)["workers"])[:2]

    def submit(k, key):         # item 1 alone on one worker, the rest on the other
        return client.submit(task, k, key=key, pure=False, workers=[a if k == 1 else b],
                             allow_other_workers=False)

    got = []
    with pytest.raises(S2GError, match="item 1 failed"):
        for res in sd.in_order(client, range(6), submit, None, 6, "order-test"):
            got.append(res)
    assert got == [(0,)]


def _records(path):
    """A SAM or BAM file's header (less @PG: it holds the command line) and records."""
    import pysam
    with pysam.AlignmentFile(str(path), check_sq=False) as f:
        head = {k: v for k, v in f.header.to_dict().items() if k != "PG"}
        return head, [x.to_string() for x in f]


def test_sam_and_bam_on_the_cluster_equal_one_process(client, reads, tmp_path):
    """SAM/BAM output with --dask: the workers format the records (their graph keeps its
    paths), the client writes the header, the records and BAM, sorted and indexed: the
    records of one process, secondaries, qualities and the read group included, over
    parts of a plain file, over chunks of a gzip one, and for pairs."""
    import gzip

    from s2g import config
    from s2g.simulate import simulate_pairs
    pytest.importorskip("pysam")
    idx = str(tmp_path / "ex.s2gi")
    assert cli.main(["index", GFA, "-o", idx]) == 0
    common = ["--index", idx, "-N", "2", "-v", "cpu", "-q", "--no-progress",
              "-R", "@RG\\tID:x\\tSM:y"]
    single = tmp_path / "single.sam"
    assert cli.main(["align", GFA, reads, "-o", str(single)] + common) == 0
    head, recs = _records(single)
    assert len(recs) >= N_READS and all("\tRG:Z:x" in r for r in recs)
    config.configure(dask_part_bytes=2500)
    before = _parts_done(client)
    out = tmp_path / "dask.sam"
    assert cli.main(["align", GFA, reads, "-o", str(out), "--dask",
                     client.scheduler.address] + common) == 0
    assert _records(out) == (head, recs) and _parts_done(client) - before >= 5
    gz = tmp_path / "reads.fq.gz"
    gz.write_bytes(gzip.compress(open(reads, "rb").read()))
    sort = ["--sort", "--batch-size", "8"]
    assert cli.main(["align", GFA, str(gz), "-o", str(tmp_path / "one.bam")] + common + sort) == 0
    assert cli.main(["align", GFA, str(gz), "-o", str(tmp_path / "dask.bam"), "--dask",
                     client.scheduler.address] + common + sort) == 0
    assert _records(tmp_path / "dask.bam") == _records(tmp_path / "one.bam")
    assert (tmp_path / "dask.bam.bai").exists()
    gfa, fq1, fq2, _ = simulate_pairs(str(tmp_path / "p"), total_bases=80_000, n_pairs=120,
                                      frag_mean=350, frag_sd=30, seed=6)
    pidx = str(tmp_path / "p.s2gi")
    assert cli.main(["index", gfa, "-o", pidx]) == 0
    pc = ["--index", pidx, "-v", "cpu", "-q", "--no-progress", "--batch-size", "80"]
    assert cli.main(["align", gfa, fq1, fq2, "-o", str(tmp_path / "p1.sam")] + pc) == 0
    assert cli.main(["align", gfa, fq1, fq2, "-o", str(tmp_path / "p2.sam"), "--dask",
                     client.scheduler.address] + pc) == 0
    head, recs = _records(tmp_path / "p1.sam")
    assert len(recs) >= 240 and _records(tmp_path / "p2.sam") == (head, recs)
