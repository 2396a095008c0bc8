"""The config settings a training reads (common/training/provenance.py): the digest the train rule records and the
comparison before a run resumes its checkpoints (common/training/cli.py)."""
import copy
import json
from types import SimpleNamespace

import pytest

from common.config import load_experiment_config
from common.training import cli
from common.training.provenance import (
    NOT_ARITHMETIC,
    NOT_READ_BY_TRAINING,
    READ_BY_TRAINING,
    changed_settings,
    training_digest,
)
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def moco_mini() -> dict:
    return load_experiment_config("moco", "moco", "mini")


def test_a_training_setting_changes_the_digest(moco_mini):
    changed = copy.deepcopy(moco_mini)
    changed["training"]["max_steps"] += 400  # the change that once left 400-step models in an 800-step run's tables
    assert training_digest(changed) != training_digest(moco_mini)
    changed = copy.deepcopy(moco_mini)
    changed["moco"]["momentum"] = 0.999
    assert training_digest(changed) != training_digest(moco_mini)
    changed = copy.deepcopy(moco_mini)
    changed["eval"]["max_length"] += 1  # the saved encoder keeps it (papers/*/train.py)
    assert training_digest(changed) != training_digest(moco_mini)


def test_sections_no_training_reads_leave_it_alone(moco_mini):
    changed = copy.deepcopy(moco_mini)
    changed["seeds"] = [1, 2, 3, 4, 5, 6]
    changed["eval"]["batch_size"] = 7
    changed["learning_curve"]["steps"] = [50]
    changed["resources"]["train"]["mem_mb"] = 1
    assert {"seeds", "eval", "learning_curve", "resources"} <= NOT_READ_BY_TRAINING
    assert training_digest(changed) == training_digest(moco_mini)


def test_key_order_does_not_matter():
    a = {"training": {"max_steps": 5, "learning_rate": 0.1}, "pooling": "mean", "eval": {"max_length": 8}}
    b = {"eval": {"max_length": 8}, "pooling": "mean", "training": {"learning_rate": 0.1, "max_steps": 5}}
    assert training_digest(a) == training_digest(b) and len(training_digest(a)) == 16


def test_changed_settings_names_what_a_training_reads(moco_mini):
    new = copy.deepcopy(moco_mini)
    new["moco"]["momentum"] = 0.5
    new["training"]["max_steps"] = 1
    new["training"]["gpus"] = 8  # a resume may change where it runs (across world sizes) and how it saves
    new["training"]["nodes"] = 2
    new["training"]["save_every_minutes"] = 30
    new["analysis"]["queue_sizes"] = [32]  # which runs exist, not how one trains
    new["resources"] = {}
    new["tokenizer"] = None  # a section replaced whole
    assert changed_settings(moco_mini, new) == ["moco.momentum", "tokenizer", "training.max_steps"]
    assert changed_settings(moco_mini, copy.deepcopy(moco_mini)) == []


def test_nested_keys_read_and_not_read():
    hictl = load_experiment_config("hictl", "hictl", "mini")
    new = copy.deepcopy(hictl)
    new["hictl"]["tasks"] = ["bucc@ratio-k4"]  # evaluation tasks inside the method section
    new["hictl"]["ablations"] = ["hictl_hns_no-mt"]  # which runs exist (the ci scale's), not how one trains
    assert changed_settings(hictl, new) == []
    vmsst = load_experiment_config("vmsst", "vmsst", "mini")
    new = copy.deepcopy(vmsst)
    new["tables"]["batch_factors"] = [0.5]  # Table 7's run list
    new["departures"] = "a note"
    assert changed_settings(vmsst, new) == []
    new["tables"]["table6_languages"] = ["deu"]  # what VMSST's 4-language runs train on
    assert changed_settings(vmsst, new) == ["tables.table6_languages"]


def test_every_config_section_is_classified():
    """A section of a config schema is either read by a training or listed as not read; a new one forces the
    choice (an unlisted section counts as read, which reruns trainings needlessly rather than missing a change)."""
    import yaml
    schemas = [*sorted((ROOT / "papers").glob("*/config/schema.yaml")), ROOT / "common/leaderboard/config/schema.yaml"]
    assert len(schemas) == 5
    sections = {k for p in schemas for k in yaml.safe_load(p.read_text())["properties"]}
    assert sections - READ_BY_TRAINING - NOT_READ_BY_TRAINING == set()
    assert READ_BY_TRAINING & NOT_READ_BY_TRAINING == set()


class Stop(Exception):
    pass


def command_line(monkeypatch, tmp_path, seen, what):
    """A MoCo-BERT smoke command line whose trainer records ``what(args, config_to_save)`` in ``seen`` and stops
    before training: (the recipe stub, argv)."""
    def trainer(model, examples, collate, args, config_to_save, on_step, snapshot_steps=()):
        seen.append(what(args, config_to_save))
        raise Stop

    monkeypatch.setattr(cli, "load_manifest", lambda path: {})
    monkeypatch.setattr(cli, "Trainer", trainer)
    stub = SimpleNamespace(paper="moco", examples=lambda cfg, run, manifest: [],
                           build=lambda cfg, run, manifest, examples: SimpleNamespace(
                               training_overrides={}, method="moco", model=None, collate=None))
    return stub, ["--scale", "smoke", "--method", "moco", "--init", "pair", "--seed", "1", "--corpus", "c.json",
                  "--tokenizer", "t", "--output_dir", str(tmp_path)]


def test_the_command_line_refuses_to_resume_a_run_of_other_settings(monkeypatch, tmp_path):
    """cli.main compares the checkpointed run's config with its own before the trainer starts: a changed method
    section (which TrainingArguments do not hold) stops it, naming the key; the same settings resume."""
    saved = []
    stub, argv = command_line(monkeypatch, tmp_path, saved, lambda args, config: config)
    with pytest.raises(Stop):  # nothing to resume
        cli.main(stub, argv)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest").write_text("step00000004")
    run = {"training_arguments": {"precision": saved[0]["config"]["training"]["precision"]}, **saved[0]}
    assert run["configured_precision"] == load_experiment_config("moco", "moco", "smoke")["training"]["precision"]
    other = copy.deepcopy(run)
    other["config"]["moco"]["momentum"] = 0.5
    (tmp_path / "training_args.json").write_text(json.dumps(other))
    with pytest.raises(SystemExit, match=r"checkpoints holds a run trained with other config settings "
                                         r"\(moco\.momentum\)"):
        cli.main(stub, argv)
    # the precision compared is the configured one: an fp32 run whose config now says bf16 is another run
    other = copy.deepcopy(run)
    other["configured_precision"] = "bf16" if run["configured_precision"] == "fp32" else "fp32"
    (tmp_path / "training_args.json").write_text(json.dumps(other))
    with pytest.raises(SystemExit, match=r"\(training\.precision\)"):
        cli.main(stub, argv)
    (tmp_path / "training_args.json").write_text(json.dumps(run))
    with pytest.raises(Stop):
        cli.main(stub, argv)
    assert len(saved) == 2


def test_checkpoints_past_a_missing_snapshot_are_not_resumed(tmp_path):
    """A checkpoint of step 200 whose run was not asked for the snapshot of step 100 (the curve's steps changed
    since): resuming cannot write it, so the run stops naming it; snapshots at or after the checkpoint's step, or
    present, let it resume."""
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest").write_text("step00000200")
    with pytest.raises(SystemExit, match=r"at step 200, past the snapshot steps \[100, 200\] it did not save"):
        cli.refuse_missing_snapshots(SimpleNamespace(output_dir=str(tmp_path), snapshot_steps=[100, 200, 300]))
    (tmp_path / "snapshots" / "step100").mkdir(parents=True)
    (tmp_path / "snapshots" / "step200").mkdir()
    cli.refuse_missing_snapshots(SimpleNamespace(output_dir=str(tmp_path), snapshot_steps=[100, 200, 300]))
    cli.refuse_missing_snapshots(SimpleNamespace(output_dir=str(tmp_path), snapshot_steps=[300]))


def test_the_census_choice_of_checkpointing_reaches_the_trainer_and_a_change_of_it_resumes(monkeypatch, tmp_path):
    """``--gradient_checkpointing`` (the train rule passes the census's choice under ``auto``) overrides the
    config's; it changes memory and time, not the arithmetic (NOT_ARITHMETIC): a run checkpointed under the other
    mode resumes."""
    from common.training.trainer import TrainingArguments

    seen = []
    stub, argv = command_line(monkeypatch, tmp_path, seen, lambda args, config: args.gradient_checkpointing)
    for extra in ([], ["--gradient_checkpointing", "selective"]):
        with pytest.raises(Stop):
            cli.main(stub, argv + extra)
    assert seen == [False, "selective"]
    assert "gradient_checkpointing" in NOT_ARITHMETIC
    assert TrainingArguments(output_dir="x", max_steps=1, global_batch_size=1, learning_rate=1.0,
                             gradient_checkpointing="auto").gradient_checkpointing == "auto"
