import os
from datetime import datetime
from pathlib import Path

import pytest

from common.workflow import cost

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path: Path, wall: float, rss: str, cpu: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:00\t{rss}\t1\t1\t1\t0\t0\t90\t{cpu}\n")


def _workdir(tmp_path: Path) -> Path:
    root = tmp_path / "benchmarks" / "mini" / "moco"
    _bench(root / "corpus.tsv", 5.0, "258.5", 4.0)
    _bench(root / "train" / "pair" / "moco" / "seed1.tsv", 400.0, "1300", 390.0)
    _bench(root / "train" / "pair" / "moco" / "seed2.tsv", 420.0, "1400", 410.0)
    _bench(root / "eval" / "pair" / "moco" / "seed1" / "tasks.tsv", 200.0, "NA", 190.0)
    _bench(tmp_path / "benchmarks" / "mini" / "dap" / "corpus.tsv", 9.0, "1", 9.0)  # another paper: not read
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    job = "[Thu Nov 26 {t} 2026]\nlocalrule moco_train:\n    log: logs/mini/moco/train/pair/moco/seed1.log\n"
    # a finished invocation (10 min 5 s), a dry run (no job), another paper's run, and a killed one (its last write
    # 65 min after its start)
    (logs / "2026-11-26T191311.1.snakemake.log").write_text(
        "  Date: 2026-11-26 19:13:11\n" + job.format(t="19:13:16") + "Elapsed time: 0:10:05.000000\n")
    (logs / "2026-11-26T200000.1.snakemake.log").write_text("  Date: 2026-11-26 20:00:00\nJob stats:\n")
    (logs / "2026-11-26T210000.1.snakemake.log").write_text(
        "  Date: 2026-11-26 21:00:00\n" + job.format(t="21:00:05").replace("/moco/", "/dap/"))
    killed = logs / "2026-11-26T222713.1.snakemake.log"
    killed.write_text("  Date: 2026-11-26 22:27:13\n" + job.format(t="22:27:18"))
    last = datetime(2026, 11, 26, 23, 32, 13).timestamp()
    os.utime(killed, (last, last))
    return tmp_path


def test_benchmarks_by_stage(tmp_path):
    jobs = cost.benchmarks(_workdir(tmp_path), "mini", "moco")
    assert sorted((j.stage, j.wall_s, j.cpu_s, j.max_rss_mb) for j in jobs) == [
        ("corpus", 5.0, 4.0, 258.5), ("eval", 200.0, 190.0, 0.0), ("train", 400.0, 390.0, 1300.0),
        ("train", 420.0, 410.0, 1400.0)]


def test_invocation_spans_of_this_paper_from_start_to_end(tmp_path):
    spans = cost.invocation_spans(_workdir(tmp_path), "mini", "moco")
    assert spans == [(datetime(2026, 11, 26, 19, 13, 11), datetime(2026, 11, 26, 19, 23, 16)),
                     (datetime(2026, 11, 26, 22, 27, 13), datetime(2026, 11, 26, 23, 32, 13))]
    assert len(cost.invocation_spans(tmp_path, "mini", "dap")) == 1


def test_report_sums_by_hand(tmp_path):
    wd = _workdir(tmp_path)
    text = cost.report(cost.benchmarks(wd, "mini", "moco"), cost.invocation_spans(wd, "mini", "moco"), cores=2)
    assert "| train | 2 | 820 | 800 | 1,400 |" in text
    assert "| all | 4 | 1,025 | 994 | 1,400 |" in text  # 5+400+420+200 wall, 4+390+410+190 CPU
    assert "Measured wall time: 1 h 15 min (4,505 s) over 2 invocation(s)" in text  # 605 s + 3900 s
    assert "CPU-s / 2 cores: 0 h 08 min" in text  # 994 / 2 = 497 s


def test_bad_benchmark_file_names_file_and_line(tmp_path):
    f = tmp_path / "x.tsv"
    f.write_text("s\tmax_rss\n1\t2\n")
    with pytest.raises(ValueError, match=r"x\.tsv:2: no column 'cpu_time'"):
        cost.read_benchmark(f, "x")
    f.write_text(HEADER + "abc\t0\t1\t1\t1\t1\t0\t0\t90\t1\n")
    with pytest.raises(ValueError, match=r"x\.tsv:2: could not convert"):
        cost.read_benchmark(f, "x")


def test_missing_workdir_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no benchmark files"):
        cost.benchmarks(tmp_path, "mini", "moco")


def test_na_columns_count_as_zero(tmp_path):
    f = tmp_path / "x.tsv"  # Snakemake's row when it measured nothing
    f.write_text(HEADER + "NA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\n")
    assert (lambda j: (j.wall_s, j.cpu_s, j.max_rss_mb))(cost.read_benchmark(f, "x")) == (0.0, 0.0, 0.0)

