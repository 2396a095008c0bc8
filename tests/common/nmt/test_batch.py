"""The NMT batch (section 4.2's recipe, common/nmt/recipe.py): --update-freq reaches the planned tokens per update on
fewer GPUs, and bf16 reaches both kinds of model."""
import sys

import pytest
import torch

from common.nmt.recipe import (
    _common,
    _hf,
    baseline,
    batch_record,
    effective_tokens,
    update_freq,
    world_size,
)
from common.nmt.settings import NMTSettings


def test_update_freq_reaches_the_planned_batch():
    planned = NMTSettings(max_tokens=4096, tokens_per_update=32768, gpus=8)
    assert update_freq(planned, world=8) == 1 and update_freq(planned, world=2) == 4
    assert effective_tokens(planned, world=2) == 32768
    assert update_freq(planned, world=3) == 3  # 36,864: the next reachable batch above the plan
    assert update_freq(NMTSettings(max_tokens=4096), world=1) == 1  # no plan: no accumulation
    # a run on this machine: one process per GPU it has (one on a CPU), accumulating the rest
    world = world_size(planned)
    assert world == (8 if torch.cuda.is_available() else 1)
    args = _common(planned, "data", "save", 1e-4, 10)
    assert args[args.index("--update-freq") + 1] == str(8 // world)
    record = batch_record(planned)
    assert record["tokens_per_update"] == 32768 and record["update_freq"] == 8 // world


def test_bf16_reaches_our_model_and_fairseqs(monkeypatch, tmp_path):
    assert "--autocast-bf16" in _hf(NMTSettings(bf16=True), "enc")
    assert "--autocast-bf16" not in _hf(NMTSettings(), "enc")
    ran = []
    monkeypatch.setattr("common.nmt.recipe._run", lambda cmd, log: ran.append(cmd))
    baseline(NMTSettings(bf16=True, baseline_arch="transformer_iwslt_de_en"), tmp_path, tmp_path, tmp_path)
    # fairseq 0.12's --bf16 means a TPU: never passed; a GPU trains fairseq's architectures with its --fp16
    assert "--bf16" not in ran[0] and "--autocast-bf16" not in ran[0]
    assert ("--fp16" in ran[0]) == torch.cuda.is_available()
    baseline(NMTSettings(bf16=True), tmp_path, tmp_path, tmp_path / "same")  # our architecture, random init
    assert "--autocast-bf16" in ran[1] and "--bf16" not in ran[1]


def test_a_rerun_on_other_data_does_not_continue_old_checkpoints(monkeypatch, tmp_path):
    """Found by the rehearsal: after a config change rebinarized a setting's data (a vocabulary one token larger),
    the rerun job continued the old checkpoint_last.pt and failed on a size mismatch. Now the arguments and the data
    fingerprint are recorded beside the checkpoints; the same run resumes, another one stops naming the folder."""
    from common.nmt import recipe

    ran = []
    monkeypatch.setattr(recipe, "_run", lambda cmd, log: ran.append(cmd))
    data, save = tmp_path / "data", tmp_path / "run"
    data.mkdir()
    (data / "train.bin").write_bytes(b"x" * 10)
    recipe._train(["--lr", "1"], data, save)
    (save / "checkpoint_last.pt").write_bytes(b"")
    recipe._train(["--lr", "1"], data, save)  # preempted and resubmitted: resumes
    assert len(ran) == 2
    (data / "train.bin").write_bytes(b"x" * 11)
    with pytest.raises(RuntimeError, match=r"run holds checkpoints of another run \(data differ\); delete"):
        recipe._train(["--lr", "1"], data, save)
    with pytest.raises(RuntimeError, match=r"arguments, data differ"):
        recipe._train(["--lr", "2"], data, save)


def test_a_finished_run_keeps_only_its_best_checkpoint(tmp_path):
    """fairseq leaves three copies of one model (interval, best, last); a done run keeps the one that is read."""
    from common.nmt import recipe

    for name in ("checkpoint_1_100.pt", "checkpoint_best.pt", "checkpoint_last.pt"):
        (tmp_path / name).write_bytes(name.encode())
    (tmp_path / "train.log").write_text("log")
    recipe._finish(tmp_path, {"stage": 1, "settings": {}})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint_best.pt", "done.json", "train.log"]
    assert (tmp_path / "checkpoint_best.pt").read_bytes() == b"checkpoint_best.pt"


@pytest.mark.parametrize("users", [{}, {"MALLOC_TRIM_THRESHOLD_": "0"}])
def test_fairseqs_trainer_keeps_glibcs_malloc_defaults_or_the_users(monkeypatch, tmp_path, users):
    """fairseq-train runs as a child process with glibc's own thresholds, or the user's: raised, its heap grew to
    15.4 GB by update 60 of the mini NMT baseline on an AMX Xeon, against 3.5-4.1 GB (common/training/malloc.py)."""
    import subprocess

    from common.nmt import recipe
    from common.training.malloc import VARIABLES

    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in users.items():
        monkeypatch.setenv(name, value)
    seen = {}
    monkeypatch.setattr(subprocess, "run",
                        lambda cmd, env, **kw: seen.update(env) or subprocess.CompletedProcess(cmd, 0))
    recipe._run([sys.executable, "-m", "fairseq_cli.train"], tmp_path / "train.log")
    assert {name: seen[name] for name in VARIABLES if name in seen} == users and "PYTHONPATH" in seen
