"""The precision policy and the optimizer x ZeRO rule (common/precision.py): names outside the policy and
forbidden combinations are config errors naming the key; bf16 trains with fp32 weights and saves fp32; Adafactor
under the trainer takes exactly the steps of plain ``torch.optim.Adafactor``."""

import pytest
import torch
from torch import nn

from common.config import SCALES, ConfigError, load_config, validate
from common.precision import PRECISIONS, training_problems
from common.training.metrics_log import read_metrics
from common.training.trainer import Trainer, TrainingArguments
from tests.conftest import ROOT

EXPERIMENTS = ["dap", "moco", "hictl", "vmsst", "leaderboard"]


def test_rules():
    assert training_problems({"precision": "bf16", "zero_stage": 1}) == []
    assert training_problems({"precision": "fp16", "zero_stage": 0, "optimizer": "adafactor"}) == []
    [unknown] = training_problems({"precision": "amp_fp16"})
    assert unknown.startswith("precision:") and "'fp16'" in unknown  # the policy's name for it
    [fp16] = training_problems({"precision": "fp16", "zero_stage": 1})
    assert fp16.startswith("precision:") and "zero_stage 0" in fp16
    [ada] = training_problems({"optimizer": "adafactor", "zero_stage": 2})
    assert ada.startswith("optimizer:") and "zero_stage 0" in ada
    with pytest.raises(ValueError, match="adafactor"):
        TrainingArguments(output_dir="x", max_steps=1, global_batch_size=1, learning_rate=1.0, optimizer="adafactor",
                          zero_stage=1)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
@pytest.mark.parametrize("scale", SCALES)
def test_every_config_follows_the_policy(experiment, scale):
    training = load_config(experiment, scale)["training"]
    assert training.get("precision", "fp32") in PRECISIONS and not training_problems(training)
    if scale == "paper":
        assert training["precision"] == "bf16"


def test_a_config_breaking_a_rule_is_an_error_naming_the_key(tmp_path):
    cfg = load_config("vmsst", "paper")
    cfg["training"]["zero_stage"] = 1
    schema = ROOT / "papers" / "vmsst" / "config" / "schema.yaml"
    with pytest.raises(ConfigError, match=r"paper.yaml: at 'training/optimizer': 'adafactor' needs zero_stage 0"):
        validate(cfg, schema, "paper.yaml")
    cfg["training"].update(zero_stage=0, precision="amp_bf16")
    with pytest.raises(ConfigError, match="training/precision"):
        validate(cfg, schema, "paper.yaml")


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(6, 8)
        self.b = nn.Linear(8, 3)

    def forward(self, x):  # (B, 6)
        return {"loss": self.b(torch.tanh(self.a(x))).pow(2).mean()}


EXAMPLES = [torch.randn(6, generator=torch.Generator().manual_seed(i)) for i in range(12)]


def collate(xs, _generator):
    return {"x": torch.stack(xs)}


def test_bf16_trains_with_fp32_weights_and_saves_fp32(tmp_path):
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=4, global_batch_size=4, learning_rate=1e-2,
                             precision="bf16", save_every=2, log_every=1, tensorboard=False)
    trainer = Trainer(Tiny(), EXAMPLES, collate, args)
    trainer.train()
    assert all(p.dtype == torch.float32 for p in trainer.unwrap().parameters())
    from common.training.checkpoint_load import WeightsOnlyCheckpointEngine

    states = WeightsOnlyCheckpointEngine().load(str(next((tmp_path / "checkpoints").glob(
        "step*/mp_rank_00_model_states.pt"))))["module"]  # as a resume reads it
    assert states and all(v.dtype == torch.float32 for v in states.values())
    fp32 = Trainer(Tiny(), EXAMPLES, collate, TrainingArguments(
        output_dir=str(tmp_path / "fp32"), max_steps=4, global_batch_size=4, learning_rate=1e-2, log_every=1,
        tensorboard=False))
    fp32.train()
    # autocast was on (bf16 matmuls round differently), and changed the losses little
    losses = [[r["loss"] for r in read_metrics(d)] for d in (tmp_path, tmp_path / "fp32")]
    assert losses[0] != losses[1] and losses[0] == pytest.approx(losses[1], rel=0.02)


def test_adafactor_under_the_trainer_equals_plain_adafactor(tmp_path):
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=3, global_batch_size=4, learning_rate=1e-2,
                             lr_schedule="constant", optimizer="adafactor", grad_clip=0.0, log_every=1,
                             tensorboard=False)
    trainer = Trainer(Tiny(), EXAMPLES, collate, args)
    trainer.train()
    ref = Tiny()
    opt = torch.optim.Adafactor(ref.parameters(), lr=1e-2)
    for step in range(3):
        opt.zero_grad()
        batch = torch.stack([EXAMPLES[i] for i in trainer.sampler.local_indices(step)])
        ref(batch)["loss"].backward()
        opt.step()
    for (name, p), q in zip(trainer.unwrap().named_parameters(), ref.parameters()):
        assert torch.allclose(p, q, atol=1e-7, rtol=0), name
    # the factored state of a matrix, not a flat vector: row and column statistics
    state = trainer.engine.optimizer.state[trainer.unwrap().a.weight]
    assert state["row_var"].shape == (8, 1) and state["col_var"].shape == (1, 6)


def test_deepspeeds_fairseq_probe_is_answered_without_importing_fairseq():
    """DeepSpeed's sanity check imports fairseq's optimizer module when fairseq is installed (3.2 s per rank);
    inside the trainer's guard that import fails fast, and the guard leaves sys.modules as it was."""
    import sys

    from common.training.trainer import no_fairseq_optimizer_probe

    name = "fairseq.optim.fairseq_optimizer"
    loaded = name in sys.modules
    with no_fairseq_optimizer_probe():
        if not loaded:
            with pytest.raises(ImportError):
                from fairseq.optim.fairseq_optimizer import FairseqOptimizer  # noqa: F401
    assert (name in sys.modules) == loaded and sys.modules.get(name, 0) is not None
