"""Finite or stop (common/training/finite.py): a NaN loss or a NaN weight stops a tiny run with the step named and the
last good checkpoint named, and every checkpoint on disk holds finite weights; fp16's loss scaling skips a transient
overflow and trains on, but not an overflow at every step; the guard itself in numbers."""
from pathlib import Path

import pytest
import torch
from torch import nn

from common.training.checkpoint_load import WeightsOnlyCheckpointEngine
from common.training.finite import MAX_SKIPPED_STEPS, FiniteGuard, TrainingDiverged, require_finite_weights
from common.training.trainer import Trainer, TrainingArguments
from tests.common.training.test_precision import EXAMPLES, collate


class Poisoned(nn.Module):
    """The tests' tiny model; from step ``nan_from`` (1-based) until ``nan_until`` (exclusive) its loss is multiplied
    by NaN (so the gradients are NaN too), and at step ``weight_at`` one weight is set to NaN before the forward."""

    def __init__(self, nan_from=None, nan_until=None, weight_at=None, spare_at=None):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b = nn.Linear(6, 8), nn.Linear(8, 3)
        self.spare = nn.Parameter(torch.zeros(2))  # in no loss: a NaN here leaves the loss finite
        self.spare_at = spare_at
        self.nan_from, self.nan_until, self.weight_at = nan_from, nan_until, weight_at
        self.next_step = 1

    def on_step(self, step):  # told the 0-based step before each one (common/training/trainer.py)
        self.next_step = step + 1
        if self.next_step == self.weight_at:
            with torch.no_grad():
                self.a.weight[2, 3] = float("nan")
        if self.next_step == self.spare_at:
            with torch.no_grad():
                self.spare[1] = float("inf")

    def forward(self, x):  # (B, 6)
        loss = self.b(torch.tanh(self.a(x))).pow(2).mean()
        if self.nan_from is not None and self.nan_from <= self.next_step < (self.nan_until or 10**9):
            loss = loss * float("nan")
        return {"loss": loss}


def run(out: Path, model: nn.Module, precision="fp32", max_steps=12, save_every=2):
    args = TrainingArguments(output_dir=str(out), max_steps=max_steps, global_batch_size=4, learning_rate=1e-2,
                             precision=precision, save_every=save_every, log_every=5, tensorboard=False)
    return Trainer(model, EXAMPLES, collate, args).train()


def checkpoints(out: Path) -> dict[str, dict[str, torch.Tensor]]:
    """Every checkpoint on disk, as a resume reads it: tag -> the module's tensors."""
    return {p.parent.name: WeightsOnlyCheckpointEngine().load(str(p))["module"]
            for p in sorted((out / "checkpoints").glob("step*/mp_rank_00_model_states.pt"))}


def assert_all_finite(out: Path) -> None:
    found = checkpoints(out)
    assert found
    for tag, state in found.items():
        assert all(t.isfinite().all() for t in state.values()), tag


def test_a_nan_loss_stops_the_run_at_the_next_check_naming_the_step_and_the_last_good_checkpoint(tmp_path):
    with pytest.raises(TrainingDiverged) as caught:
        run(tmp_path, Poisoned(nan_from=7))
    # the NaN of step 7 is found at step 8, the first checkpoint after it (save_every 2; log_every 5 came before)
    assert str(caught.value) == (
        "training stopped at step 8 on a non-finite value at step 7 (loss nan, gradient norm nan); the last good "
        f"checkpoint is {tmp_path / 'checkpoints' / 'step00000006'} (a rerun resumes from it)")
    assert sorted(checkpoints(tmp_path)) == ["step00000004", "step00000006"]  # keep_checkpoints 2; none from step 8
    assert (tmp_path / "checkpoints" / "latest").read_text().strip() == "step00000006"
    assert_all_finite(tmp_path)


def test_a_nan_weight_stops_the_run_at_the_logging_step(tmp_path):
    """A weight that turns NaN before step 3's forward: the loss of step 3 is NaN; the logging check at step 5
    comes after the save of step 4, which finds it first and writes nothing."""
    with pytest.raises(TrainingDiverged, match=r"^training stopped at step 4 on a non-finite value at step 3 \(loss "
                                               r"nan, gradient norm nan\); the last good checkpoint is .*step00000002"):
        run(tmp_path, Poisoned(weight_at=3))
    assert sorted(checkpoints(tmp_path)) == ["step00000002"]
    assert_all_finite(tmp_path)


def test_a_weight_outside_the_loss_is_caught_before_a_checkpoint_or_a_snapshot(tmp_path):
    """The loss stays finite; the weights are checked before anything is written from them."""
    with pytest.raises(TrainingDiverged, match=r"^training stopped at step 4: the weights hold non-finite values \(1 "
                                               r"tensors, the first 'spare'\), so nothing is saved from them; the last "
                                               r"good checkpoint is .*step00000002"):
        run(tmp_path / "a", Poisoned(spare_at=3))
    assert sorted(checkpoints(tmp_path / "a")) == ["step00000002"]
    snapped = []
    args = TrainingArguments(output_dir=str(tmp_path / "b"), max_steps=12, global_batch_size=4, learning_rate=1e-2,
                             log_every=5, tensorboard=False)
    trainer = Trainer(Poisoned(spare_at=3), EXAMPLES, collate, args, on_step=snapped.append, snapshot_steps=[2, 3])
    with pytest.raises(TrainingDiverged, match=r"^training stopped at step 3: the weights of the step-3 snapshot hold "
                                               r"non-finite values .* no checkpoint was saved before it$"):
        trainer.train()
    assert snapped == [1, 2]  # the step-3 snapshot was never asked for


def test_the_logging_step_checks_without_a_checkpoint(tmp_path):
    with pytest.raises(TrainingDiverged, match=r"^training stopped at step 5 on a non-finite value at step 2 .* no "
                                               r"checkpoint was saved before it$"):
        run(tmp_path, Poisoned(nan_from=2), save_every=0)
    assert not (tmp_path / "checkpoints").exists()


def test_fp16_loss_scaling_skips_a_transient_overflow_and_trains_on(tmp_path):
    summary = run(tmp_path / "a", Poisoned(nan_from=3, nan_until=5), precision="fp16")  # steps 3 and 4 overflow
    assert summary["step"] == 12 and torch.isfinite(torch.tensor(summary["final"]["loss"]))
    assert_all_finite(tmp_path / "a")
    # the last step overflows: skipped like any other, its logged loss is no number for summary.json
    summary = run(tmp_path / "b", Poisoned(nan_from=12), precision="fp16")
    assert summary["step"] == 12 and summary["final"] == {"loss": None}
    assert_all_finite(tmp_path / "b")


def test_fp16_stops_after_a_bounded_run_of_skipped_steps(tmp_path):
    with pytest.raises(TrainingDiverged, match=rf"^training stopped at step 24 on fp16 loss scaling skipped more than "
                                               rf"{MAX_SKIPPED_STEPS} steps in a row \(up to step 23\).*step00000022"):
        run(tmp_path, Poisoned(nan_from=3), precision="fp16", max_steps=40)
    assert_all_finite(tmp_path)  # every skipped step left the weights as they were


def test_the_guard_records_the_first_bad_step_on_the_device_and_checks_on_demand():
    guard = FiniteGuard(torch.device("cpu"))
    guard.observe(1, torch.tensor(0.5), torch.tensor(1.0))
    guard.check(1, lambda: None)  # all finite: nothing
    guard.observe(2, torch.tensor(0.4), torch.tensor(float("inf")))  # a finite loss, an infinite gradient norm
    guard.observe(3, torch.tensor(float("nan")), None)
    with pytest.raises(TrainingDiverged, match=r"step 10 on a non-finite value at step 2 \(loss 0.4000000059604645, "
                                               r"gradient norm inf\); the last good checkpoint is ckpt/step1 "):
        guard.check(10, lambda: Path("ckpt/step1"))
    loss_only = FiniteGuard(torch.device("cpu"))
    loss_only.observe(4, torch.tensor(float("-inf")))
    with pytest.raises(TrainingDiverged, match=r"at step 4 \(loss -inf\);"):
        loss_only.check(4, lambda: None)


def test_weights_are_checked_before_anything_is_written_from_them():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    require_finite_weights(model, 3, lambda: None)
    with torch.no_grad():
        model[1].bias[0] = float("inf")
    with pytest.raises(TrainingDiverged, match=r"step 3: the weights hold non-finite values \(1 tensors, the first "
                                               r"'1.bias'\), so nothing is saved from them"):
        require_finite_weights(model, 3, lambda: None)


def test_the_command_line_stops_with_one_line_and_saves_no_model(monkeypatch, tmp_path):
    """A diverged run ends the training command with the trainer's message as its one error line (no traceback)
    and no ``model/`` folder; a run whose final weights are not finite saves no model either."""
    from types import SimpleNamespace

    from common.training import cli

    class Diverging:
        def __init__(self, *args, **kwargs):
            self.rank = 0

        def train(self):
            raise TrainingDiverged("training stopped at step 8 on a non-finite value at step 7 (loss nan)")

    class NanWeights(Diverging):
        def train(self):
            return {"step": 4, "final": {}}

        def unwrap(self):
            model = nn.Linear(1, 1)
            with torch.no_grad():
                model.weight.fill_(float("nan"))
            return model

        def last_checkpoint(self):
            return None

    monkeypatch.setattr(cli, "load_manifest", lambda path: {})
    stub = SimpleNamespace(paper="moco", examples=lambda cfg, run, manifest: [],
                           build=lambda cfg, run, manifest, examples: SimpleNamespace(
                               training_overrides={}, method="moco", model=None, collate=None,
                               save=lambda model, folder: folder.mkdir(parents=True)))
    argv = ["--scale", "smoke", "--method", "moco", "--init", "pair", "--seed", "1", "--corpus", "c.json",
            "--tokenizer", "t", "--output_dir", str(tmp_path)]
    monkeypatch.setattr(cli, "Trainer", Diverging)
    with pytest.raises(SystemExit, match=r"^error: training stopped at step 8 on a non-finite value at step 7"):
        cli.main(stub, argv)
    monkeypatch.setattr(cli, "Trainer", NanWeights)
    with pytest.raises(TrainingDiverged, match=r"step 4: the trained model's weights hold non-finite values"):
        cli.main(stub, argv)
    assert not (tmp_path / "model").exists() and not (tmp_path / "summary.json").exists()
