"""MoCo-BERT through the real trainer: 2 gloo processes equal 1 process (queues, loss,
parameters), and a killed run resumes exactly (queues and momentum encoders included)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from common.distributed.env import free_port
from common.training.metrics_log import read_metrics

WORKER = Path(__file__).with_name("_moco_worker.py")


def run(out: Path, *args, nproc: int = 1, precision: str = "fp32") -> None:
    env = {**os.environ, "DS_ACCELERATOR": "cpu", "OMP_NUM_THREADS": "1", "PRECISION": precision}
    env.pop("WORLD_SIZE", None)
    launcher = ([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(nproc),
                 "--master_port", str(free_port())] if nproc > 1 else [sys.executable])
    proc = subprocess.run([*launcher, str(WORKER), str(out), *map(str, args)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def losses(out: Path) -> list[float]:
    return [r["loss"] for r in read_metrics(out / "run")]


@pytest.mark.slow
@pytest.mark.distributed
def test_two_processes_equal_one_process(tmp_path):
    # 8 steps x global batch 8 with a 24-key queue: the ring buffer wraps twice.
    run(tmp_path / "one", 8, 0, 0.0)
    run(tmp_path / "two", 8, 0, 0.0, nproc=2)
    a = torch.load(tmp_path / "one" / "final.pt", weights_only=True)
    b = torch.load(tmp_path / "two" / "final.pt", weights_only=True)
    assert int(a["queue_x.ptr"]) == int(b["queue_x.ptr"]) == (8 * 8) % 24
    for k in ("queue_x.keys", "queue_y.keys"):
        assert torch.allclose(a[k], b[k], atol=1e-5), k
    assert all(torch.allclose(a[k], b[k], atol=1e-4) for k in a), "parameters differ"
    assert losses(tmp_path / "one") == pytest.approx(losses(tmp_path / "two"), rel=1e-4)


@pytest.mark.slow
def test_resume_restores_queues_and_momentum_encoders(tmp_path):
    run(tmp_path / "straight", 8, 3, 0.1)
    run(tmp_path / "killed", 8, 3, 0.1, 5)  # dies after step 5; last checkpoint at step 3
    run(tmp_path / "killed", 8, 3, 0.1)
    a = torch.load(tmp_path / "straight" / "final.pt", weights_only=True)
    b = torch.load(tmp_path / "killed" / "final.pt", weights_only=True)
    assert any(k.startswith("key_encoder_x.") for k in a) and "queue_y.keys" in a
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert losses(tmp_path / "straight") == losses(tmp_path / "killed")


@pytest.mark.slow
def test_autocast_keeps_momentum_encoders_and_queues_in_fp32(tmp_path):
    """precision bf16 (PyTorch autocast through DeepSpeed's torch_autocast): the forward runs in
    bf16 but the EMA of eq. 1 and the queues stay fp32 (a bf16 EMA with m = 0.999 would lose
    most of each update to rounding)."""
    run(tmp_path / "amp", 4, 0, 0.0, precision="bf16")
    s = torch.load(tmp_path / "amp" / "final.pt", weights_only=True)
    assert (s["queue_x.keys"].dtype == torch.float32
            and s["key_encoder_x.backbone.embeddings.word_embeddings.weight"].dtype == torch.float32)
    run(tmp_path / "fp32", 4, 0, 0.0)
    amp, fp32 = losses(tmp_path / "amp"), losses(tmp_path / "fp32")
    assert amp != fp32 and amp == pytest.approx(fp32, rel=0.05)  # autocast was on, and changed little
