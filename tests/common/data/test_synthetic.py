import random

import pytest

from common.data import loaders
from common.data.synthetic import (
    Meaning,
    PivotEnglish,
    SyntheticSpec,
    make_languages,
    nli_hypothesis,
    perturb,
    random_meaning,
    write_synthetic_corpus,
)
from common.io import sha256_file

SPEC = dict(seed=3, n_languages=5, train_pairs_per_language=200, tatoeba_pairs=50, bucc_gold_per_split=6,
            bucc_sentences_per_split=200, sts_pairs=40, nli_items=30)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("syn")
    write_synthetic_corpus(out, SyntheticSpec(**SPEC))
    return out


def test_deterministic_given_seed(tmp_path, corpus):
    write_synthetic_corpus(tmp_path, SyntheticSpec(**SPEC))
    files = sorted(p.relative_to(corpus) for p in corpus.rglob("*") if p.is_file())
    assert files and all(sha256_file(corpus / f) == sha256_file(tmp_path / f) for f in files)
    other = tmp_path / "other"
    write_synthetic_corpus(other, SyntheticSpec(**{**SPEC, "seed": 4}))
    assert sha256_file(other / "train" / "qaa-en.tsv") != sha256_file(corpus / "train" / "qaa-en.tsv")


def test_languages_differ_in_lexicon_order_and_morphology():
    langs = make_languages(5, seed=1)
    assert len({l.t.order for l in langs}) >= 4
    assert len({l.nouns[0][0] for l in langs}) == 5  # own lexicons
    m = Meaning(agent=0, agent_adj=None, action=0, patient=1, patient_adj=None, plural=False, past=False,
                negated=False, time=None)
    rng = random.Random(0)
    en = PivotEnglish().render(m, rng)
    assert en == "The man sees a woman."
    assert PivotEnglish().render(Meaning(**{**m.__dict__, "plural": True, "past": True}), rng) == "Mans seed a woman."
    sov = langs[0]  # SOV with an accusative suffix: verb last
    words = sov.render(m, random.Random(0)).rstrip(".").lower().split()
    assert words[-1] in sov.verbs[0] and words[0] in sov.nouns[0]


def test_products_and_formats(corpus):
    langs = [f"qa{c}" for c in "abcde"]
    for lang in langs:
        assert len(loaders.read_tsv_pairs(corpus / "train" / f"{lang}-en.tsv")) == 200
        xx, en = loaders.read_tatoeba(corpus / "tatoeba", lang)
        assert len(xx) == len(en) == 50
        for split in ("sample", "training", "test"):
            b = loaders.read_bucc(corpus / "bucc", f"{lang}-en", split)
            assert len(b.gold) == 6 and len(b.src) == len(b.trg) == 200  # 3 % gold
    nli = {l: loaders.read_xnli_tsv(corpus / "nli" / f"dev-{l}.tsv") for l in ["en"] + langs}
    assert len({tuple(n.label) for n in nli.values()}) == 1  # same items in every language
    sts = loaders.read_tsv_pairs(corpus / "sts" / "STS.input.qaa-en.txt")
    assert len(sts) == 40


def test_evaluation_disjoint_from_training(corpus):
    train = {s for p in (corpus / "train").glob("*.tsv") for pair in loaders.read_tsv_pairs(p) for s in pair}
    for lang in [f"qa{c}" for c in "abcde"]:
        xx, en = loaders.read_tatoeba(corpus / "tatoeba", lang)
        assert not train & set(xx)


def test_sts_gold_follows_meaning_overlap():
    rng = random.Random(0)
    for n in range(7):
        m = random_meaning(rng)
        assert m.overlap(perturb(m, n, rng)) == pytest.approx(1 - n / 9)


def test_nli_relations():
    rng = random.Random(0)
    m = Meaning(agent=2, agent_adj=3, action=1, patient=5, patient_adj=None, plural=False, past=True,
                negated=False, time=None)
    ent = nli_hypothesis(m, "entailment", rng)
    assert ent.agent_adj is None and ent.negated == m.negated and ent.action == m.action
    assert nli_hypothesis(m, "contradiction", rng).negated is True
    neu = nli_hypothesis(m, "neutral", rng)
    assert (neu.patient_adj is not None) or (neu.time is not None)
    assert neu.agent_adj == m.agent_adj
