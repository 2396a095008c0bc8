import pytest

from common.eval.tasks import TASKS, Task, get_task, register_task


def test_registered_ids_name_their_protocol():
    for tid in ("tatoeba@cosine", "bucc@ratio-k4", "bucc@distance-k3", "bucc@cosine", "sts-en@wmean", "xnli@zero-shot"):
        assert TASKS[tid].id == tid
    assert get_task("bucc@ratio-k4").params == {"scoring": "ratio", "k": 4, "retrieval": "max"}
    assert get_task("bucc@distance-k3").params == {"scoring": "distance", "k": 3, "retrieval": "max"}
    assert get_task("bucc@cosine").params == {"scoring": "cosine", "k": 1, "retrieval": "forward"}  # VMSST's
    assert get_task("moco-tsne").type == "moco-tsne"  # a paper's extra, imported on demand


def test_scale_params_and_applicability():
    xnli = get_task("xnli@zero-shot")
    assert xnli.params_for("paper")["learning_rate"] == 5e-5 and xnli.params_for("mini")["learning_rate"] == 5e-5
    assert xnli.declaration("smoke")["params"]["epochs"] == 4
    assert xnli.applies_to("sentence-encoder") and not xnli.applies_to("dual-encoder")
    assert get_task("tatoeba@cosine").applies_to("dual-encoder")


def test_unknown_and_duplicate_ids():
    with pytest.raises(KeyError, match="unknown task 'tatoeba'"):
        get_task("tatoeba")
    with pytest.raises(ValueError, match="already registered"):
        register_task(Task("tatoeba@cosine", "tatoeba", "", "", ""))


def test_bucc_refuses_a_split_without_gold(tmp_path):
    """The BUCC 2018 test gold is not public: a reported split without a gold file is an error that says so,
    never an empty gold set scored as F1 = 0."""
    from common.eval.tasks import EvalContext, evaluate
    from common.io import DataFormatError

    for split in ("training", "test"):
        (tmp_path / f"de-en.{split}.de").write_text("de-1\tHallo\n")
        (tmp_path / f"de-en.{split}.en").write_text("en-1\tHello\n")
    (tmp_path / "de-en.training.gold").write_text("de-1\ten-1\n")
    manifest = {"bucc_dir": str(tmp_path), "bucc_pairs": ["de-en"], "bucc_splits": {"tune": "training", "test": "test"}}
    ctx = EvalContext(model_dir=tmp_path / "no-model", manifest=manifest, scale="paper", seed=1)
    with pytest.raises(DataFormatError, match=r"de-en\.test\.gold: no gold file for BUCC de-en split 'test'"):
        evaluate(get_task("bucc@ratio-k4"), ctx)
