"""The leaderboard's NMT column plan (common/leaderboard/nmt.py) and the NMT plan's ``final_only``."""
import pytest

from common.config import load_leaderboard_config
from common.leaderboard.nmt import column, nmt_config, restrict_nmt, translation
from common.nmt import plan as plan

RECIPE = {"lr": 1e-3}


def board(methods, finetune="de-en", **setting):
    return {"methods": methods, "seeds": [1, 2],
            "nmt": {"recipe": RECIPE, "encoder_seed": 1,
                    "settings": {"leaderboard": {"finetune": [finetune], "tests": {"default": ["t1", "t2"]},
                                                 **setting}}}}


def test_every_method_and_random_init_by_default_and_the_dual_encoder_reads_the_source_side():
    nmt = nmt_config(board(["tr", "moco", "dap"]))
    spec = nmt["settings"]["leaderboard"]
    assert spec["systems"] == ["tr", "moco", "dap", "random"] and spec["final_only"]
    assert nmt["encoder_side"] == {"moco": "xx"}  # German source: MoCo-BERT's non-English encoder
    assert nmt_config(board(["moco"], finetune="en-de"))["encoder_side"] == {"moco": "en"}


def test_final_models_only_and_the_column_reports_the_first_test_set():
    nmt = nmt_config(board(["tr"]))
    assert [(t.system, t.model) for t in plan.translations(nmt) if t.test == "t1"] == [
        ("tr", "stage2-de-en"), ("random", "de-en")]  # no stage-1 translation
    assert column(nmt).test == "t1"
    assert translation(nmt, "tr").path("R") == "R/nmt/leaderboard/tr/bleu/stage2-de-en/de-en.t1.json"
    assert translation(nmt, "random").path("R") == "R/nmt/leaderboard/random/bleu/de-en/de-en.t1.json"


def test_a_methods_restriction_restricts_the_systems():
    assert nmt_config(board(["tr"], systems=["tr", "moco", "random"]))["settings"]["leaderboard"]["systems"] == [
        "tr", "random"]
    assert nmt_config(board(["dap"], systems=["tr", "random"])) is None  # nothing pre-trained left to fine-tune
    assert nmt_config({"methods": ["tr"], "seeds": [1]}) is None


def test_unknown_systems_are_refused():
    with pytest.raises(ValueError, match=r"systems \['tr-nobias'\]: not registered methods"):
        nmt_config(board(["tr"], systems=["tr-nobias", "random"]))


def test_one_setting_with_one_pair():
    cfg = board(["tr"])
    cfg["nmt"]["settings"]["other"] = cfg["nmt"]["settings"]["leaderboard"]
    with pytest.raises(ValueError, match="one setting, 'leaderboard', with one 'finetune' pair"):
        nmt_config(cfg)


def test_smoke_and_mini_have_the_column_paper_not_yet():
    nmt = nmt_config(load_leaderboard_config("smoke"))
    assert column(nmt).pair == "qaa-en" and "tr" in nmt["settings"]["leaderboard"]["systems"]
    # mini: the initial encoder, the four papers' methods and a random-init Transformer on Multi30k De->En, a
    # workflow target of its own (its 1,000-update recipe)
    mini = nmt_config(load_leaderboard_config("mini"))
    assert column(mini).pair == "de-en" and column(mini).test == "multi30k_test_2016_flickr"
    assert mini["settings"]["leaderboard"]["systems"] == ["init", "dap", "moco", "hictl", "vmsst", "random"]
    assert mini["own_target"] and mini["target_vocab"] == 8000
    assert mini["encoder_side"] == {"moco": "xx"}  # MoCo-BERT's pair reads German with its xx side
    # DAP's OPUS corpus, which paper scale trains on, has no translation rule
    assert nmt_config(load_leaderboard_config("paper")) is None


def test_a_tasks_restriction_keeps_the_column_only_when_it_names_it():
    cfg = {**board(["tr"]), "tasks": ["tatoeba@cosine", "nmt"]}
    restrict_nmt(cfg)
    assert cfg["tasks"] == ["tatoeba@cosine"] and "nmt" in cfg
    cfg["tasks"] = ["tatoeba@cosine"]
    restrict_nmt(cfg)
    assert "nmt" not in cfg and nmt_config(cfg) is None
