"""The trainer runs unchanged under torchrun with 2 CPU processes (gloo)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.distributed
WORKER = Path(__file__).with_name("_resume_worker.py")


def test_two_processes_under_torchrun(tmp_path):
    env = {**os.environ, "DS_ACCELERATOR": "cpu", "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           str(WORKER), str(tmp_path), "6", "3"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    args = json.loads((tmp_path / "run" / "training_args.json").read_text())
    assert args["world_size"] == 2
    rows = [json.loads(l) for l in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 7))
    assert all(abs(r["loss"] - r["loss_tr"] - r["loss_rtl"]) < 1e-4 for r in rows)
    final = torch.load(tmp_path / "final.pt", weights_only=True)
    assert all(torch.isfinite(v).all() for v in final.values() if v.is_floating_point())
