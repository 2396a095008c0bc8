"""run_precision: bf16 runs as fp32 only at a CPU scale, on a CPU, and only where oneDNN emulates bf16."""
import logging

import pytest

from common import precision
from common.nmt import recipe


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
