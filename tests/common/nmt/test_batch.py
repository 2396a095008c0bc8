"""The NMT batch (section 4.2's recipe, common/nmt/recipe.py): --update-freq reaches the planned tokens per update on
fewer GPUs, and bf16 reaches both kinds of model."""
from common.nmt.recipe import NMTSettings, _common, _hf, baseline, effective_tokens, update_freq


def test_update_freq_reaches_the_planned_batch():
    planned = dict(max_tokens=4096, tokens_per_update=32768)
    assert update_freq(NMTSettings(gpus=8, **planned)) == 1
    two = NMTSettings(gpus=2, **planned)
    assert update_freq(two) == 4 and effective_tokens(two) == 32768
    assert update_freq(NMTSettings(gpus=3, **planned)) == 3  # 36,864: the next reachable batch above the plan
    assert update_freq(NMTSettings(gpus=0, max_tokens=4096)) == 1  # no plan: no accumulation
    args = _common(NMTSettings(gpus=1, **planned), "data", "save", 1e-4, 10)
    assert args[args.index("--update-freq") + 1] == "8"


def test_bf16_reaches_our_model_and_fairseqs(monkeypatch, tmp_path):
    assert "--autocast-bf16" in _hf(NMTSettings(bf16=True), "enc")
    assert "--autocast-bf16" not in _hf(NMTSettings(), "enc")
    ran = []
    monkeypatch.setattr("common.nmt.recipe._run", lambda cmd, log: ran.append(cmd))
    baseline(NMTSettings(bf16=True, baseline_arch="transformer_iwslt_de_en"), tmp_path, tmp_path, tmp_path)
    assert "--bf16" in ran[0] and "--autocast-bf16" not in ran[0]
    baseline(NMTSettings(bf16=True), tmp_path, tmp_path, tmp_path / "same")  # our architecture, random init
    assert "--autocast-bf16" in ran[1] and "--bf16" not in ran[1]
