"""The memory benchmarks' and the trainer's peak memory is the measuring process's own (VmHWM), not its parent's:
``ru_maxrss`` starts a child at its parent's peak, so a child of a large process reported the parent's size."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_child_reports_its_own_peak_beside_a_large_parent():
    held = bytearray(512 * 2**20)
    held[::4096] = b"\x01" * len(held[::4096])  # touch every page: resident
    code = ("import torch; from bench.peak_memory import peak_rss_mb; "
            "from common.training.metrics_log import peak_memory_mb; "
            "print(peak_rss_mb(), peak_memory_mb(torch.device('cpu')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    bench, trainer = map(float, out.split())
    assert bench < 450 and trainer < 450, (bench, trainer)  # torch imported: a few hundred MB, not 512 + that
    assert len(held) == 512 * 2**20


def test_written_figures_keep_every_run_in_the_folders_log(tmp_path, monkeypatch):
    from bench.peak_memory import write_figures

    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / "bench_grad_cache.py"), "--rows", "0", "16"])
    for peak in (100.0, 90.0):
        write_figures(str(tmp_path / "grad_cache"), ["| a |"], {"args": {}, "rows": [{"peak_above_setup_mb": peak}]})
    assert (tmp_path / "grad_cache.md").read_text() == "| a |\n"
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["figures"]["rows"][0]["peak_above_setup_mb"] for r in log] == [100.0, 90.0]
    assert log[0]["command"] == "python scripts/bench_grad_cache.py --rows 0 16" and log[0]["record"] == "grad_cache"
