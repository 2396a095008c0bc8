"""A job's MFU from the latest bench_mfu.py measurement of its recipe at its shape, or the assumed one
(common/census/measured.py)."""
import json

import pytest

from common.census import measured

H100 = {"device": "NVIDIA H100 80GB HBM3", "precision": "bf16", "peak_flops": 9.894e14}


def _write(root, name, record):
    path = root / "nvidia-h100-80gb-hbm3" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


def test_a_job_without_a_measurement_is_priced_at_the_assumed_mfu(tmp_path):
    assert measured.job_mfu("dap", "mbert/tr", 1024, 32, 0.3, tmp_path) == measured.Mfu(0.3, "assumed")
    _write(tmp_path, "mfu-2026-11-26.json", {**H100, "batch": 128, "max_length": 32,
                                             "variants": {"TR": {"mfu": 0.0567}, "DAP": {"mfu": 0.0784}}})
    # the file holds TR at 128 pairs per GPU: not the job's 1,024, nor its length, nor a recipe the bench builds
    assert measured.job_mfu("dap", "mbert/tr", 1024, 32, 0.3, tmp_path).source == "assumed"
    assert measured.job_mfu("dap", "mbert/tr", 128, 64, 0.3, tmp_path).source == "assumed"
    assert measured.job_mfu("dap", "xlmr/tr", 128, 32, 0.3, tmp_path).source == "assumed"  # XLM-R's, not mBERT's
    assert measured.job_mfu("dap", "mbert/tr", 128.5, 32, 0.3, tmp_path).source == "assumed"


def test_the_latest_measurement_of_the_recipe_at_the_shape(tmp_path):
    """The earlier format (``variants`` at the file's batch) and the current one (``rows``: the best eager rung; a
    compiled rung is not the trainer's step, a failed one has no figure); the latest file by its date wins."""
    old = _write(tmp_path, "mfu-2026-11-26.json", {**H100, "batch": 128, "max_length": 32,
                                                   "variants": {"TR": {"mfu": 0.0567}, "DAP": {"mfu": 0.0784}}})
    hit = measured.job_mfu("dap", "mbert/tr", 128, 32, 0.3, tmp_path)
    assert (hit.value, hit.source, hit.rung) == (0.0567, str(old), "eager")
    rows = [{"model": "tr-1024", "rows": 1024, "length": 32, "rung": "current", "mfu": 0.11},
            {"model": "tr-1024", "rows": 1024, "length": 32, "rung": "one call", "mfu": 0.14},
            {"model": "tr-1024", "rows": 1024, "length": 32, "rung": "fused", "mfu": 0.31},
            {"model": "tr-128", "rows": 128, "length": 32, "rung": "one call", "failed": "out of memory"},
            {"model": "vmsst", "rows": 64, "length": 32, "rung": "current", "mfu": 0.2}]
    new = _write(tmp_path, "mfu-2026-12-09.json", {**H100, "batch": 128, "max_length": 32, "rows": rows,
                                                   "variants": {"TR": {"mfu": 0.31}}})
    hit = measured.job_mfu("dap", "mbert/tr", 1024, 32, 0.3, tmp_path)
    assert (hit.value, hit.source, hit.rung) == (0.14, str(new), "one call")
    # TR at 128: the new file has no figure (its rung failed), so the older file's
    assert measured.job_mfu("dap", "mbert/tr", 128, 32, 0.3, tmp_path).value == 0.0567
    assert measured.job_mfu("vmsst", "l6/vmsst", 64, 32, 0.3, tmp_path).value == 0.2
    assert measured.job_mfu("vmsst", "l6/vmsst", 256, 32, 0.3, tmp_path).source == "assumed"
    # a CPU run (the acceptance's fallback) is no measurement of a GPU job
    _write(tmp_path, "mfu-2026-12-31.json", {**H100, "device": "cpu", "rows": [{**rows[1], "mfu": 0.9}]})
    assert measured.job_mfu("dap", "mbert/tr", 1024, 32, 0.3, tmp_path).value == 0.14


def test_a_malformed_bench_file_is_named(tmp_path):
    _write(tmp_path, "mfu-2026-12-09.json", {**H100, "rows": [{"model": "tr-1024", "mfu": 0.1,
                                                               "rung": "current"}]})
    with pytest.raises(ValueError, match=r"mfu-2026-12-09\.json: not a scripts/bench_mfu\.py file"):
        measured.job_mfu("dap", "mbert/tr", 1024, 32, 0.3, tmp_path)


def test_the_committed_measurements_are_read():
    """The H100's committed files (the earlier format) price DAP's TR at 128 pairs per GPU, from the latest."""
    hit = measured.job_mfu("dap", "mbert/tr", 128, 32, 0.3)
    assert hit.source == "figures/gpu/nvidia-h100-80gb-hbm3/mfu-2026-12-05.json"
    assert hit.value == pytest.approx(0.062, abs=1e-3)
