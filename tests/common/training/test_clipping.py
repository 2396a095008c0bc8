"""Foreach gradient clipping (common/training/clipping.py) against DeepSpeed's ``clip_grad_norm_`` and torch's: the
same norm and the same clipped gradients, binding or not; and the trainer uses it at zero_stage 0."""
import pytest
import torch

from common.training.clipping import clip_grad_norm_foreach
from common.training.trainer import Trainer, TrainingArguments
from tests.common.training.test_accumulation import EXAMPLES, MeanLoss, collate


def params(scale: float, seed: int = 0) -> list[torch.nn.Parameter]:
    g = torch.Generator().manual_seed(seed)
    ps = [torch.nn.Parameter(torch.randn(*shape, generator=g)) for shape in ((7, 5), (5,), (3, 7), (1,))]
    for p in ps:
        p.grad = scale * torch.randn(p.shape, generator=g)
    ps.append(torch.nn.Parameter(torch.randn(2)))  # no gradient: skipped, as by both references
    return ps


def copy(ps):
    out = [torch.nn.Parameter(p.detach().clone()) for p in ps]
    for p, q in zip(ps, out):
        q.grad = None if p.grad is None else p.grad.clone()
    return out


@pytest.mark.parametrize("scale, binds", [(10.0, True), (0.01, False)])
def test_equals_torch_and_deepspeed_in_norm_and_gradients(monkeypatch, scale, binds):
    import deepspeed.runtime.utils as ds

    ours, torchs, deepspeeds = params(scale), copy(params(scale)), copy(params(scale))
    norm = clip_grad_norm_foreach(ours, 1.0)
    # DeepSpeed's function as one rank runs it: its all-reduce over the data-parallel group of one is the identity
    monkeypatch.setattr(ds.groups, "_get_data_parallel_group", lambda: None)
    monkeypatch.setattr(ds.dist, "get_world_size", lambda group=None: 1)
    monkeypatch.setattr(ds.dist, "all_reduce", lambda tensor, *args, **kwargs: tensor)
    deepspeed_norm = float(ds.clip_grad_norm_(deepspeeds, 1.0))
    assert norm.dtype == torch.float32 and norm.ndim == 0
    assert (float(norm) > 1.0) == binds
    assert float(norm) == pytest.approx(float(torch.nn.utils.clip_grad_norm_(torchs, 1.0)), rel=1e-6)
    assert float(norm) == pytest.approx(deepspeed_norm, rel=1e-6)
    for a, b, c in zip(ours, torchs, deepspeeds):
        if a.grad is None:
            assert b.grad is None and c.grad is None
            continue
        assert torch.allclose(a.grad, b.grad, rtol=1e-6, atol=0) and torch.allclose(a.grad, c.grad, rtol=1e-6, atol=0)
    if binds:  # the clipped gradient's norm is the bound
        assert float(torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in ours if p.grad is not None]))) \
            == pytest.approx(1.0, rel=1e-5)


def test_no_gradient_gives_a_zero_norm():
    assert float(clip_grad_norm_foreach([torch.nn.Parameter(torch.ones(2))], 1.0)) == 0.0


def test_the_trainer_clips_with_it_at_zero_stage_0(tmp_path, monkeypatch):
    import common.training.clipping as clipping

    calls = []
    real = clipping.clip_grad_norm_foreach
    monkeypatch.setattr(clipping, "clip_grad_norm_foreach", lambda ps, m: calls.append(m) or real(ps, m))
    Trainer(MeanLoss(), EXAMPLES, collate, TrainingArguments(
        output_dir=str(tmp_path), max_steps=2, global_batch_size=8, learning_rate=0.1, grad_clip=0.5,
        tensorboard=False)).train()
    assert calls == [0.5, 0.5]
