"""HICTL's NMT plan at paper scale compares like with like (issue: the paper's Tables 4-5): Table 4 fine-tunes the
24-layer HICTL with a 6-layer decoder (its layers column), Tables 5-6 HICTL Base with the prose's 4-layer decoder;
the Transformer baselines are Vaswani et al.'s base for IWSLT and big for WMT (dropout 0.3 for En-De, 0.1 for
En-Fr), and fairseq gets each job's own arguments."""
from pathlib import Path

import pytest

from common.config import load_config
from common.nmt import plan
from common.nmt.recipe import baseline_arguments, stage1_arguments, stage2_arguments
from common.nmt.settings import NMTSettings

NMT = load_config("hictl", "paper")["nmt"]
ENCODERS = load_config("hictl", "paper")["encoders"]


def flag(args: list[str], name: str) -> str:
    """The value fairseq's parser keeps: the last occurrence of ``name``."""
    return args[len(args) - 1 - args[::-1].index(name) + 1]


def job(setting: str, system: str, pair: str | None = None) -> NMTSettings:
    return NMTSettings.from_config(plan.settings(NMT, setting, system, pair))


@pytest.mark.parametrize("setting, init, decoder", [("high_resource", "xlmr_large", "6"),
                                                    ("low_resource", "xlmr_base", "4"),
                                                    ("transfer_european", "xlmr_base", "4")])
def test_each_table_fine_tunes_the_papers_encoder_and_decoder_depth(setting, init, decoder):
    assert plan.encoder_init(NMT, setting, ENCODERS) == init
    s, p = job(setting, "hictl_hns"), Path("x")
    assert flag(stage1_arguments(s, p, p, p), "--decoder-layers") == decoder
    assert flag(stage2_arguments(s, p, p, p, p), "--decoder-layers") == decoder


@pytest.mark.parametrize("setting, pair, arch, dropout", [
    ("high_resource", "en-de", "transformer_vaswani_wmt_en_de_big", "0.3"),
    ("high_resource", "en-fr", "transformer_vaswani_wmt_en_fr_big", "0.1"),
    ("low_resource", "ro-en", "transformer_vaswani_wmt_en_de_big", "0.3"),  # WMT'16
    ("transfer_european", "cs-en", "transformer_vaswani_wmt_en_de_big", "0.3"),  # WMT'19
    ("transfer_indic", "hi-en", "transformer", "0.1"),  # IITB
    ("low_resource", "en-de", "transformer", "0.1"),  # IWSLT'14: base
    ("low_resource", "en-zh", "transformer", "0.1")])
def test_the_transformer_baselines_are_base_for_iwslt_and_big_for_wmt(setting, pair, arch, dropout):
    p = Path("x")
    args = baseline_arguments(job(setting, plan.RANDOM, pair), p, None, p)
    assert (flag(args, "--arch"), flag(args, "--dropout")) == (arch, dropout)
    assert flag(stage1_arguments(job(setting, "hictl_hns"), p, p, p), "--dropout") == "0.1"  # ours: the recipe's


def test_a_pair_cannot_change_the_model_stage_2_continues():
    nmt = {**NMT, "settings": {**NMT["settings"], "low_resource": {
        **NMT["settings"]["low_resource"], "recipe_by_pair": {"en-de": {"decoder_layers": 2}}}}}
    with pytest.raises(ValueError, match=r"recipe_by_pair.en-de: \['decoder_layers'\]"):
        plan.settings(nmt, "low_resource", "hictl_hns", "en-de")
    assert NMTSettings.from_config(plan.settings(nmt, "low_resource", "hictl_hns")).decoder_layers == 4  # stage 1
