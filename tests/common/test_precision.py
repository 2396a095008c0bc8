"""run_precision: bf16 runs as fp32 only at a CPU scale, on a CPU, and only where oneDNN emulates bf16; a resumed
run keeps the precision it ran at."""
import json
import logging
from types import SimpleNamespace

import pytest

from common import config, precision
from common.nmt import recipe
from common.training import cli


@pytest.fixture
def emulating_cpu(monkeypatch):
    monkeypatch.setattr(precision, "cpu_runs_bf16_natively", lambda: False)


def test_bf16_falls_back_to_fp32_only_at_cpu_scales_on_an_emulating_cpu(emulating_cpu, caplog):
    with caplog.at_level(logging.WARNING, logger="common.precision"):
        assert precision.run_precision("bf16", "mini", "cpu") == "fp32"
    assert "this CPU emulates bf16" in caplog.text and "mini-scale job runs in fp32" in caplog.text
    assert precision.run_precision("bf16", "smoke", "cpu") == "fp32"
    # the paper scales keep the paper's arithmetic path wherever they run; a GPU keeps bf16; other precisions pass
    assert precision.run_precision("bf16", "rehearsal", "cpu") == "bf16"
    assert precision.run_precision("bf16", "paper", "cpu") == "bf16"
    assert precision.run_precision("bf16", "mini", "cuda") == "bf16"
    assert precision.run_precision("fp16", "mini", "cpu") == "fp16"
    assert precision.run_precision("fp32", "mini", "cpu") == "fp32"


@pytest.mark.parametrize("native", [True, False])
def test_a_paper_scale_job_on_a_cpu_logs_which_bf16_ran(monkeypatch, caplog, native):
    """The rehearsals keep bf16 on any CPU; the job's log says whether oneDNN ran it natively or emulated it."""
    monkeypatch.setattr(precision, "cpu_runs_bf16_natively", lambda: native)
    with caplog.at_level(logging.INFO, logger="common.precision"):
        assert precision.run_precision("bf16", "ci", "cpu") == "bf16"
    assert ("precision: bf16 on this CPU, natively" in caplog.text) == native
    assert ("precision: bf16 on this CPU, emulated" in caplog.text) == (not native)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="common.precision"):  # a resumed run's log says it too
        assert precision.run_precision("bf16", "ci", "cpu", resumed="bf16") == "bf16"
    assert "precision: bf16 on this CPU" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="common.precision"):
        precision.run_precision("bf16", "ci", "cuda")
        precision.run_precision("fp32", "ci", "cpu")
    assert "precision: bf16 on this CPU" not in caplog.text


def test_a_cpu_with_native_bf16_keeps_it(monkeypatch):
    monkeypatch.setattr(precision, "cpu_runs_bf16_natively", lambda: True)
    assert precision.run_precision("bf16", "mini", "cpu") == "bf16"


def test_the_nmt_recipe_drops_its_autocast_where_the_cpu_emulates_bf16(emulating_cpu, monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(recipe, "stage1", lambda s, *paths: seen.update(bf16=s.bf16))
    monkeypatch.setattr(recipe.torch.cuda, "is_available", lambda: False)
    args = ["stage1", "--settings", '{"bf16": true}', "--data", str(tmp_path), "--encoder", "e", "--save-dir", "s"]
    recipe.main([*args, "--scale", "mini"])
    assert seen == {"bf16": False}
    recipe.main([*args, "--scale", "rehearsal"])
    assert seen == {"bf16": True}
    recipe.main(args)  # no scale given: as configured
    assert seen == {"bf16": True}


def test_the_scales_that_keep_bf16_are_the_paper_scales():
    assert precision.KEEP_BF16_SCALES == config.PAPER_SCALES


def test_a_resumed_bf16_job_keeps_the_precision_it_ran_at(emulating_cpu, monkeypatch):
    assert precision.run_precision("bf16", "mini", "cpu", resumed="bf16") == "bf16"  # started on a native CPU
    monkeypatch.setattr(precision, "cpu_runs_bf16_natively", lambda: True)
    assert precision.run_precision("bf16", "mini", "cpu", resumed="fp32") == "fp32"  # started on an emulating one
    # a config changed away from bf16 is not the fallback: the trainer refuses to resume it (trainer._check_resumable)
    assert precision.run_precision("fp32", "mini", "cpu", resumed="bf16") == "fp32"


class Stop(Exception):
    pass


def test_the_training_command_line_runs_and_saves_what_the_rule_says(emulating_cpu, monkeypatch, tmp_path):
    """cli.main sets the config's precision before anything reads or saves it: fp32 for a new mini run on this
    (patched) CPU, the saved bf16 for a run it resumes."""
    seen = []

    def examples(cfg, run, manifest):
        seen.append(cfg["training"]["precision"])
        raise Stop

    monkeypatch.setattr(cli, "load_manifest", lambda path: {})
    stub = SimpleNamespace(paper="dap", examples=examples)
    argv = ["--scale", "mini", "--method", "tr", "--init", "minilm", "--seed", "1", "--corpus", "c.json",
            "--tokenizer", "t", "--output_dir", str(tmp_path)]
    with pytest.raises(Stop):
        cli.main(stub, argv)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest").write_text("step00000004")
    (tmp_path / "training_args.json").write_text(json.dumps({"training_arguments": {"precision": "bf16"}}))
    with pytest.raises(Stop):
        cli.main(stub, argv)
    assert seen == ["fp32", "bf16"]


def test_a_resumed_nmt_stage_keeps_its_autocast(emulating_cpu, monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(recipe, "stage1", lambda s, *paths: seen.update(bf16=s.bf16))
    monkeypatch.setattr(recipe.torch.cuda, "is_available", lambda: False)
    save = tmp_path / "stage1"
    save.mkdir()
    (save / "checkpoint_last.pt").write_bytes(b"")
    (save / "resume.json").write_text(json.dumps({"arguments": ["--autocast-bf16"], "data": "x"}))
    recipe.main(["stage1", "--settings", '{"bf16": true}', "--data", str(tmp_path), "--encoder", "e",
                 "--save-dir", str(save), "--scale", "mini"])
    assert seen == {"bf16": True}
