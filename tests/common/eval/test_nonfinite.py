"""Nothing non-finite is scored: one infinite embedding row makes every evaluator type refuse (a NonFiniteError
naming the model, the language and the sentence), where the same data with finite embeddings is scored; a model
folder with an infinite weight is refused before any task type reads data (the fine-tuning types embed nothing
themselves); a metric that comes out NaN, or a main_score that is no number, is refused after the task ran."""
import json

import pytest
import torch

from common.eval.task_types import TASK_TYPES, EvalContext, TaskResult, evaluate, load_task_types
from common.eval.tasks import Task
from common.finite import NonFiniteError
from common.io import DataFormatError

POISON = "the poisoned sentence"


class HashEmbedder:
    """A deterministic finite embedding per sentence; ``POISON`` embeds as +inf in every dimension when ``poison``."""

    def __init__(self, poison: bool):
        self.poison = poison

    def encode(self, sentences, lang):
        rows = []
        for s in sentences:
            g = torch.Generator().manual_seed(sum(map(ord, s)) * 31 + len(s))
            rows.append(torch.full((8,), float("inf")) if self.poison and s == POISON else torch.randn(8, generator=g))
        return torch.stack(rows)  # (N, 8)


def lines(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return str(path)


def tatoeba(root, lang="deu", n=12):
    xx = [POISON] + [f"{lang} satz {i}" for i in range(1, n)]
    lines(root / f"tatoeba.{lang}-eng.{lang}", xx)
    lines(root / f"tatoeba.{lang}-eng.eng", [f"english sentence {i}" for i in range(n)])


def sts_pair_files(root, name):
    inp = lines(root / f"STS.input.{name}.txt", [f"{POISON}\tone"] + [f"a {i}\tb {i}" for i in range(1, 6)])
    gold = lines(root / f"STS.gs.{name}.txt", [str(x) for x in (0.5, 1.0, 2.0, 3.0, 4.0, 5.0)])
    return inp, gold


def case(kind, root):
    """(task, manifest) of one embedding-based task type on tiny data in ``root`` (POISON among its sentences)."""
    if kind == "tatoeba":
        tatoeba(root / "tat")
        return (Task("t", "tatoeba", "", "", ""),
                {"tatoeba_dir": str(root / "tat"), "tatoeba_languages": ["deu"], "train_languages": ["deu"]})
    if kind == "bucc":
        for split in ("training", "test"):
            lines(root / f"de-en.{split}.de", [f"d1\t{POISON}", "d2\tzwei", "d3\tdrei"])
            lines(root / f"de-en.{split}.en", ["e1\tone", "e2\ttwo", "e3\tthree"])
            lines(root / f"de-en.{split}.gold", ["d1\te1", "d2\te2"])
        return (Task("b", "bucc", "", "", "", params={"scoring": "ratio", "k": 2}),
                {"bucc_dir": str(root), "bucc_pairs": ["de-en"], "bucc_splits": {"tune": "training", "test": "test"}})
    if kind in ("sts-en", "sts-en-years"):
        sts_pair_files(root, "en-en")
        params = {"aggregation": "wmean"} if kind == "sts-en" else {"protocol": "pearson"}
        return Task("s", kind, "", "", "", params=params), {"sts_dir": str(root), "sts_kind": "synthetic"}
    if kind == "sts17":
        inp, gold = sts_pair_files(root, "track5.en-en")
        return (Task("s17", "sts17", "", "", ""),
                {"sts17": [{"name": "en-en", "langs": ["en", "en"], "input": inp, "gold": gold}]})
    if kind == "question-retrieval":
        rec = lambda i, q, a: json.dumps({"id": str(i), "question": q, "answers": [a]})  # noqa: E731
        bank = lines(root / "bank.jsonl", [rec(i, f"bank question {i}", f"answer {i % 3}") for i in range(6)])
        nq = lines(root / "nq.jsonl", [rec(10, POISON, "answer 1"), rec(11, "query two", "answer 2")])
        return (Task("q", "question-retrieval", "", "", "", params={"queries": "nq"}),
                {"question_retrieval": {"bank": bank, "nq": {"en": nq}}})
    if kind == "moco-tsne":
        tatoeba(root / "tat", n=12)
        return (Task("m", "moco-tsne", "", "", "", params={"pairs": 12, "seed": 1, "perplexity": 3}),
                {"tatoeba_dir": str(root / "tat"), "train_languages": ["deu"]})
    if kind == "moco-neighbors":
        train = lines(root / "train.tsv", [f"fremd {i}\tenglish {i}" for i in range(8)])
        return (Task("n", "moco-neighbors", "", "", "", params={"k": 2, "corpus_size": 100, "queries": [POISON]}),
                {"train": {"de": train}})
    if kind == "hictl-tsne":
        for lang in ("en", "fr", "de", "ru", "es"):
            hyp = [POISON if (lang, i) == ("en", 0) else f"{lang} hypothesis {i}" for i in range(8)]
            lines(root / "nli" / f"test-{lang}.tsv", [f"premise\t{h}\tneutral" for h in hyp])
        return (Task("h", "hictl-tsne", "", "", "", params={"sets": 2, "per_set": 4, "perplexity": 5, "seed": 1,
                                                           "languages": ["en", "fr", "de", "ru", "es"]}),
                {"nli_dir": str(root / "nli"), "nli_languages": ["en", "fr", "de", "ru", "es"]})
    raise KeyError(kind)


EMBEDDING_TYPES = ["tatoeba", "bucc", "sts-en", "sts-en-years", "sts17", "question-retrieval", "moco-tsne",
                   "moco-neighbors", "hictl-tsne"]
FINE_TUNING_TYPES = ["xnli", "pawsx", "qa", "token-classification"]
TOKEN_STATE_TYPES = ["dap-tokens"]  # read the encoder's token states, not sentence embeddings


def test_the_cases_cover_every_registered_type():
    load_task_types()
    assert set(TASK_TYPES) == {*EMBEDDING_TYPES, *FINE_TUNING_TYPES, *TOKEN_STATE_TYPES}


@pytest.mark.parametrize("kind", EMBEDDING_TYPES)
def test_an_infinite_embedding_is_refused_by_every_evaluator(kind, tmp_path):
    task, manifest = case(kind, tmp_path)
    ok = evaluate(task, EvalContext(tmp_path / "fake", manifest, "smoke", 1, _embedder=HashEmbedder(poison=False)))
    assert isinstance(ok.scores["main_score"], float)  # the same data, finite: scored
    ctx = EvalContext(tmp_path / "fake", manifest, "smoke", 1, _embedder=HashEmbedder(poison=True))
    with pytest.raises(NonFiniteError, match=r"fake: embeddings of \d+ \w+ sentences: 1 of \d+ rows are not finite "
                                             r".*'the poisoned sentence'"):
        evaluate(task, ctx)


@pytest.fixture(scope="module")
def inf_model(tmp_path_factory):
    """A saved sentence-encoder folder whose first encoder layer's query weight holds one +inf."""
    from common.models.embedder import save_sentence_encoder
    from common.models.encoder import EncoderSpec, SentenceEncoder, build_encoder
    from common.models.tokenizer import train_wordpiece

    root = tmp_path_factory.mktemp("inf_model")
    tok = train_wordpiece(["a b c d", "e f g h"] * 3, 40, root / "tok", min_frequency=1)
    torch.manual_seed(0)
    enc = SentenceEncoder(build_encoder(EncoderSpec(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32),
                                        len(tok)), "mean")
    with torch.no_grad():
        enc.backbone.encoder.layer[0].attention.self.query.weight[0, 0] = float("inf")
    save_sentence_encoder(enc, tok, root / "model", max_length=8)
    return root / "model"


@pytest.mark.parametrize("kind", [*EMBEDDING_TYPES, *FINE_TUNING_TYPES, *TOKEN_STATE_TYPES])
def test_a_model_with_an_infinite_weight_is_refused_before_any_task_type_runs(kind, inf_model, tmp_path):
    """The folder check runs before the task reads its data: the manifest here holds nothing at all."""
    ctx = EvalContext(inf_model, {}, "smoke", 1)
    with pytest.raises(DataFormatError, match=r"model\.safetensors: tensor '.*layer\.0\.attention\.self\.query\.weight'"
                                              r": 1 of 256 values are not finite"):
        evaluate(Task("x", kind, "", "", ""), ctx)


def test_a_nan_metric_or_a_main_score_that_is_no_number_is_refused(tmp_path, monkeypatch):
    load_task_types()
    monkeypatch.setitem(TASK_TYPES, "finite-test-nan", lambda task, ctx: TaskResult(
        {"main_score": 50.0, "per_language": {"de": {"xx2en": float("nan")}}}, ["de"], []))
    monkeypatch.setitem(TASK_TYPES, "finite-test-none", lambda task, ctx: TaskResult({"main_score": None}, [], []))
    ctx = EvalContext(tmp_path, {}, "smoke", 1, _embedder=HashEmbedder(poison=False))
    with pytest.raises(NonFiniteError, match=r"task 'n' .*: scores: per_language/de/xx2en is nan, not a finite"):
        evaluate(Task("n", "finite-test-nan", "", "", ""), ctx)
    with pytest.raises(ValueError, match=r"task 'z' .*: main_score is None, not a number"):
        evaluate(Task("z", "finite-test-none", "", "", ""), ctx)


def test_embeddings_of_the_wrong_shape_are_refused(tmp_path):
    class Short:
        def encode(self, sentences, lang):
            return torch.zeros(len(sentences) - 1, 4)

    ctx = EvalContext(tmp_path, {}, "smoke", 1, _embedder=Short())
    with pytest.raises(ValueError, match=r"\(1, 4\) embeddings for 2 de sentences"):
        ctx.encode(["a", "b"], "de")
