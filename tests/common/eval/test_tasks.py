import pytest

from common.eval.tasks import TASKS, Task, get_task, load_tasks, register_task
from tests.conftest import ROOT


def test_registered_ids_name_their_protocol():
    load_tasks()  # the declaration modules register their tasks when imported; the registry names none of them
    for tid in ("tatoeba@cosine", "bucc@ratio-k4", "bucc@distance-k3", "bucc@cosine", "sts-en@wmean", "xnli@zero-shot"):
        assert TASKS[tid].id == tid
    assert get_task("bucc@ratio-k4").params == {"scoring": "ratio", "k": 4, "retrieval": "max"}
    assert get_task("bucc@distance-k3").params == {"scoring": "distance", "k": 3, "retrieval": "max"}
    assert get_task("bucc@cosine").params == {"scoring": "cosine", "k": 1, "retrieval": "forward"}  # VMSST's
    assert get_task("moco-tsne").type == "moco-tsne"  # a paper's extra, imported on demand


def test_every_declared_type_has_one_evaluation_function_and_declarations_need_no_evaluator():
    """Declarations (common/eval/declarations.py, papers/<p>/tasks.py) and evaluation functions (their modules and
    papers/<p>/evaluators.py) are found apart; every declared type has its function and every function a task."""
    import subprocess
    import sys

    from common.eval.task_types import TASK_TYPES, load_task_types

    load_task_types()
    load_tasks()
    assert {t.type for t in TASKS.values()} == set(TASK_TYPES)
    assert {"moco-tsne", "moco-neighbors", "hictl-tsne", "qa", "token-classification"} <= set(TASK_TYPES)
    code = ("import sys; from common.eval.tasks import TASKS, load_tasks; load_tasks(); "
            "print(len(TASKS), sorted(m for m in sys.modules if m in ('torch', 'numpy') or m.endswith('.evaluators') "
            "or m.startswith('common.eval.') and m not in ('common.eval.tasks', 'common.eval.declarations')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                         cwd=ROOT).stdout.split(" ", 1)
    assert int(out[0]) == len(TASKS) and out[1].strip() == "[]", out


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
    from common.eval.task_types import EvalContext, evaluate
    from common.io import DataFormatError

    for split in ("training", "test"):
        (tmp_path / f"de-en.{split}.de").write_text("de-1\tHallo\n")
        (tmp_path / f"de-en.{split}.en").write_text("en-1\tHello\n")
    (tmp_path / "de-en.training.gold").write_text("de-1\ten-1\n")
    manifest = {"bucc_dir": str(tmp_path), "bucc_pairs": ["de-en"], "bucc_splits": {"tune": "training", "test": "test"}}
    ctx = EvalContext(model_dir=tmp_path / "no-model", manifest=manifest, scale="paper", seed=1)
    with pytest.raises(DataFormatError, match=r"de-en\.test\.gold: no gold file for BUCC de-en split 'test'"):
        evaluate(get_task("bucc@ratio-k4"), ctx)


class _LookupEmbedder:
    """Sentence -> a fixed vector: the BUCC cases below are worked out by hand from these cosines."""

    def __init__(self, vectors: dict[str, tuple[float, ...]]):
        self.vectors = vectors

    def encode(self, sentences, lang):
        import torch

        return torch.tensor([self.vectors[s] for s in sentences])


def test_bucc_oracle_threshold_is_optimal_on_the_reported_split(tmp_path):
    """VMSST section 6.2: F1 at the threshold that separates the reported data best. Test split, cosine, best match:
    s1->e1 1.0 (gold), s3->e3 0.8 (no gold), s2->e2 0.6 (gold). Accepting all three gives P = 2/3, R = 1,
    F1 = 80.0, the optimum (one: 66.7, two: 50.0). The tuning split (t1->f1 1.0 gold, t2->f2 0.95 no gold) puts the
    tuned threshold between 1.0 and 0.95, which on the test split accepts s1 only: F1 = 66.7."""
    from common.eval.task_types import EvalContext, evaluate

    splits = {"training": ({"t1": "T1", "t2": "T2"}, {"f1": "F1", "f2": "F2"}, "t1\tf1\n"),
              "test": ({"s1": "S1", "s2": "S2", "s3": "S3"}, {"e1": "E1", "e2": "E2", "e3": "E3"}, "s1\te1\ns2\te2\n")}
    for split, (src, trg, gold) in splits.items():
        (tmp_path / f"de-en.{split}.de").write_text("".join(f"{i}\t{s}\n" for i, s in src.items()))
        (tmp_path / f"de-en.{split}.en").write_text("".join(f"{i}\t{s}\n" for i, s in trg.items()))
        (tmp_path / f"de-en.{split}.gold").write_text(gold)
    x = 0.95 ** 2
    vectors = {"E1": (1, 0, 0, 0), "E2": (0, 1, 0, 0), "E3": (0, 0, 1, 0), "S1": (1, 0, 0, 0), "S2": (0, .6, 0, .8),
               "S3": (0, 0, .8, .6), "F1": (1, 0, 0, 0), "F2": (0, 1, 0, 0), "T1": (1, 0, 0, 0),
               "T2": (0, .95, 0, (1 - x) ** 0.5)}
    manifest = {"bucc_dir": str(tmp_path), "bucc_pairs": ["de-en"], "bucc_splits": {"tune": "training", "test": "test"}}
    scores = {}
    for tid in ("bucc@cosine", "bucc@cosine-oracle"):
        ctx = EvalContext(model_dir=tmp_path, manifest=manifest, scale="mini", seed=1,
                          _embedder=_LookupEmbedder(vectors))
        scores[tid] = evaluate(get_task(tid), ctx).scores
    oracle = scores["bucc@cosine-oracle"]
    assert oracle["main_score"] == pytest.approx(80.0) and oracle["tune_split"] == oracle["test_split"] == "test"
    assert oracle["test"]["precision"] == pytest.approx(200 / 3) and oracle["test"]["recall"] == pytest.approx(100)
    assert scores["bucc@cosine"]["main_score"] == pytest.approx(200 / 3)
    assert scores["bucc@cosine"]["tune"]["f1"] == pytest.approx(100.0)
    assert get_task("bucc@ratio-k4-oracle").params == {"scoring": "ratio", "k": 4, "retrieval": "max",
                                                       "threshold": "oracle"}
