"""With 2 gloo processes, the TR loss on gathered in-batch negatives equals the single-process
loss on the same global batch, and so do the gradients."""
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from common.distributed.env import free_port
from common.losses import TranslationRankingLoss

pytestmark = pytest.mark.distributed


def _data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, 6, generator=g), torch.randn(8, 6, generator=g)


def _worker(rank, world, port, out_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    x, y = _data()
    per = len(x) // world
    xl = x[rank * per:(rank + 1) * per].clone().requires_grad_()
    yl = y[rank * per:(rank + 1) * per].clone().requires_grad_()
    loss = TranslationRankingLoss(temperature=0.1, bidirectional=True)(xl, yl)
    loss.backward()
    # data-parallel engines average losses and gradients over ranks
    torch.save({"loss": loss.detach(), "gx": xl.grad / world, "gy": yl.grad / world}, f"{out_dir}/rank{rank}.pt")
    dist.barrier()  # no rank tears gloo down while the other still talks to it
    dist.destroy_process_group()


def test_gathered_loss_equals_single_process(tmp_path):
    x, y = _data()
    x1, y1 = x.clone().requires_grad_(), y.clone().requires_grad_()
    ref = TranslationRankingLoss(temperature=0.1, bidirectional=True)(x1, y1)
    ref.backward()
    mp.spawn(_worker, args=(2, free_port(), str(tmp_path)), nprocs=2, join=True)
    r = [torch.load(tmp_path / f"rank{i}.pt", weights_only=True) for i in range(2)]
    assert float(sum(p["loss"] for p in r) / 2) == pytest.approx(float(ref), rel=1e-6)
    assert torch.allclose(torch.cat([p["gx"] for p in r]), x1.grad, atol=1e-6)
    assert torch.allclose(torch.cat([p["gy"] for p in r]), y1.grad, atol=1e-6)
    # without gathering, each rank would only see its own 4 negatives: the losses would differ
    local = TranslationRankingLoss(temperature=0.1, bidirectional=True)(x[:4], y[:4])
    assert float(local) != pytest.approx(float(r[0]["loss"]), rel=1e-3)


def test_launcher_environment():
    from common.distributed.env import ensure_process_group_env, first_slurm_host

    assert first_slurm_host("node[03-05,9],gpu1") == "node03" and first_slurm_host("gpu1,gpu2") == "gpu1"
    assert first_slurm_host("a[7]") == "a7"
    torchrun = {"RANK": "1", "WORLD_SIZE": "2", "MASTER_PORT": "1234"}
    assert ensure_process_group_env(torchrun) == "torchrun" and torchrun["MASTER_PORT"] == "1234"
    srun = {"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_JOB_NODELIST": "gpu[12-13]",
            "SLURM_JOB_ID": "4242"}
    assert ensure_process_group_env(srun) == "srun"
    assert (srun["RANK"], srun["WORLD_SIZE"], srun["LOCAL_RANK"], srun["MASTER_ADDR"], srun["MASTER_PORT"]) == \
        ("5", "8", "1", "gpu12", "24242")
    one_task = {"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_JOB_NODELIST": "gpu1"}  # a plain Slurm job
    assert ensure_process_group_env(one_task) == "single" and one_task["WORLD_SIZE"] == "1"
