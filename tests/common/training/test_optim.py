"""Learning-rate schedules and optimisers of the trainer (VMSST section 6.4: Adafactor, linear warm-up then
inverse square root)."""
import math

import pytest
import torch

from common.training.trainer import TrainingArguments, build_optimizer, lr_lambda


def args(**kw):
    return TrainingArguments(output_dir="-", max_steps=20, global_batch_size=4, learning_rate=1e-3, **kw)


def test_inverse_sqrt_schedule_by_hand():
    f = lr_lambda(args(warmup_steps=4, lr_schedule="inverse_sqrt"))
    assert [f(s) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]  # linear warm-up
    assert f(4) == pytest.approx(math.sqrt(4 / 5)) and f(15) == pytest.approx(0.5)  # sqrt(warm-up / step)


def test_linear_and_constant_schedules_by_hand():
    f = lr_lambda(args(warmup_steps=4))
    assert f(4) == 1.0 and f(12) == pytest.approx(0.5) and f(20) == 0.0
    assert lr_lambda(args(warmup_steps=0, lr_schedule="constant"))(17) == 1.0


def test_adafactor_step_is_relative_to_the_parameter_scale():
    """torch's Adafactor (Shazeer & Stern 2018): the first update of a parameter is min(lr, 1/sqrt(t)) times its
    RMS (at least eps2 = 1e-3) along the sign of the gradient -- why the mini configs of from-scratch models,
    whose weights start at RMS ~0.02, train with AdamW instead."""
    w = torch.nn.Parameter(torch.full((6,), 0.02))  # a vector: unfactored second moment, exactly g^2 at t = 1
    opt = build_optimizer(torch.nn.Linear(1, 1), args(optimizer="adafactor"))
    assert isinstance(opt, torch.optim.Adafactor)
    opt = torch.optim.Adafactor([w], lr=1e-3)
    g = torch.tensor([1.0, -2.0, 3.0, 0.5, 1.0, -1.0])
    (w * g).sum().backward()
    opt.step()
    assert torch.allclose(0.02 - w.detach(), g.sign() * 1e-3 * 0.02, rtol=1e-4)
