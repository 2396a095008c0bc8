"""Measurement logs (common/measurements.py): one complete row per run, the CPU's flags in it, bad rows named."""
import json

import pytest

from common import measurements
from common.finite import NonFiniteError
from common.io import DataFormatError

CPUINFO = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz
flags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16 amx_tile amx_bf16 sha_ni

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz
flags\t\t: fpu sse2
"""


def test_the_first_cpus_model_and_speed_flags_in_a_fixed_order():
    assert measurements.cpu_model(CPUINFO) == "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz"
    assert measurements.cpu_flags(CPUINFO) == ["avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"]
    assert measurements.cpu_flags("model name: x\nflags: sse2 avx2\n") == ["avx2"]
    assert measurements.cpu_flags("") == []


def test_rows_append_and_the_latest_matching_one_is_read_back(tmp_path):
    log = tmp_path / "logs" / "bench.jsonl"
    measurements.append(log, "python scripts/a.py --n 1", {"ms": 1.5})
    measurements.append(log, "python scripts/b.py", {"ms": 2.0}, gpu="H100", note="second")
    measurements.append(log, "python scripts/a.py --n 2", {"ms": 3.0})
    lines = log.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(x)["machine"]["cores"] for x in lines)
    rows = measurements.read(log)
    assert [r["figures"]["ms"] for r in rows] == [1.5, 2.0, 3.0]
    assert rows[1]["machine"]["gpu"] == "H100" and rows[1]["note"] == "second"
    assert measurements.latest(log, "scripts/a.py")["command"] == "python scripts/a.py --n 2"
    assert measurements.latest(log, "scripts/c.py") is None
    assert set(rows[0]) >= {"date", "commit", "machine", "command", "figures"}


def test_a_non_finite_figure_is_refused_and_nothing_is_written(tmp_path):
    log = tmp_path / "bench.jsonl"
    with pytest.raises(NonFiniteError, match="bench.jsonl"):
        measurements.append(log, "python x.py", {"ms": float("nan")})
    assert not log.exists()


def test_a_bad_line_is_named_with_its_file_and_line(tmp_path):
    log = tmp_path / "bench.jsonl"
    measurements.append(log, "python x.py", {"ms": 1.0})
    with open(log, "a") as fh:
        fh.write('{"date": "2026-12-07"}\n')
    with pytest.raises(DataFormatError, match=r"bench.jsonl:2: not a measurement row"):
        measurements.read(log)
    log.write_text("{not json\n")
    with pytest.raises(DataFormatError, match=r"bench.jsonl:1: not JSON"):
        measurements.read(log)


def test_every_committed_log_is_readable():
    root = measurements.ROOT / "figures"
    logs = sorted(root.rglob("*.jsonl"))
    assert (root / "logs" / "investigations.jsonl") in logs
    for log in logs:
        assert measurements.read(log), log
