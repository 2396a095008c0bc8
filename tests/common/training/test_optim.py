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


def test_cosine_schedule_by_hand():
    """MoCo-BERT's schedule: half a cosine period from the end of the warm-up to max_steps (here 16 steps). Step
    12 is not checked: it reads 0.5 on the linear schedule too."""
    f = lr_lambda(args(warmup_steps=4, lr_schedule="cosine"))
    assert [f(s) for s in range(4)] == [0.25, 0.5, 0.75, 1.0] and f(4) == 1.0
    assert f(8) == pytest.approx((1 + math.sqrt(0.5)) / 2)  # 0.5 (1 + cos(pi / 4)) = 0.854; linear: 0.75
    assert f(16) == pytest.approx((1 - math.sqrt(0.5)) / 2)  # 0.146; linear: 0.25
    assert f(20) == pytest.approx(0.0) and f(25) == pytest.approx(0.0)  # held at zero past max_steps


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


def test_resume_check_accepts_arguments_added_later_and_json_round_trips(tmp_path):
    """A checkpoint written before an argument existed (here adam_betas / adam_epsilon) resumes when the argument
    keeps its default; tuples saved as JSON lists compare equal; a changed value is refused."""
    import json
    from dataclasses import asdict
    from types import SimpleNamespace

    from common.training.trainer import Trainer

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest").write_text("step00000001")
    a = args()
    saved = json.loads(json.dumps(asdict(a)))
    del saved["adam_betas"], saved["adam_epsilon"]
    (tmp_path / "training_args.json").write_text(json.dumps({"training_arguments": saved}))
    fake = SimpleNamespace(out=tmp_path, ckpt_dir=tmp_path / "checkpoints", args=a)
    Trainer._check_resumable(fake)  # accepted
    fake.args = args(adam_betas=(0.9, 0.98))
    with pytest.raises(RuntimeError, match=r"other training arguments \(adam_betas\)"):
        Trainer._check_resumable(fake)
    (tmp_path / "training_args.json").write_text(json.dumps({"training_arguments": asdict(fake.args)}))
    Trainer._check_resumable(fake)  # (0.9, 0.98) saved as a list, compared equal


def test_adamw_gets_the_configured_betas_and_epsilon():
    opt = build_optimizer(torch.nn.Linear(2, 2), args(adam_betas=(0.9, 0.98), adam_epsilon=1e-6))
    assert opt.param_groups[0]["betas"] == (0.9, 0.98) and opt.param_groups[0]["eps"] == 1e-6
