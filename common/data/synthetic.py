"""Procedurally generated multilingual data for the smoke scale (no downloads).

Design
------
*Meaning space.* A sentence expresses a :class:`Meaning`: an agent noun, an action verb
and a patient noun, each noun with an optional adjective, plus grammatical number of
the agent, tense, polarity and an optional time adverb. All languages draw from this one
space, so a meaning rendered in two languages is a translation pair.

*Languages.* ``en`` is an English-like pivot (real English stems, SVO, ``-s`` plural,
``-ed`` past, ``do not`` negation). The other languages use the ISO 639 codes reserved
for local use (``qaa`` ...), so they can never be mistaken for real ones. Each has its own
sound inventory and lexicon (some concepts with two synonyms), word order (SOV, VSO,
VOS, OVS, SVO), adjective placement, and morphology: plural and tense marked by
suffix, prefix or particle, an accusative case suffix, and negation by verb prefix or
particle. Everything is deterministic given the seed.

*Products* (:func:`write_synthetic_corpus`): parallel training pairs ``xx-en``; Tatoeba v1
files; BUCC files (gold pairs hidden among non-parallel sentences, about 3 % gold) with
sample / training / test splits; STS pairs whose gold score is 5 x the fraction of
meaning slots two sentences share; XNLI-format NLI pairs aligned across languages
(entailment: the hypothesis drops modifiers; contradiction: polarity flipped;
neutral: the hypothesis adds a modifier); translation pairs for NMT; and question-retrieval
queries and bank (answers: the patient). Evaluation meanings are disjoint from training meanings.
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from common.io import write_json, write_lines

NOUNS = (
    "man woman child dog cat bird horse farmer teacher doctor student king queen soldier baker "
    "fisher sailor singer painter writer apple bread fish cake letter book song house boat car "
    "tree flower river stone door window table chair cup hat coat shoe ball box key ring lamp "
    "garden field road bridge city village market ship train wall roof bottle knife spoon plate "
    "basket candle mirror clock picture map rope net drum bell flag coin gift"
).split()
VERBS = (
    "see find want carry paint open close build clean cook eat drink read write sell buy hold "
    "push pull throw catch watch follow help call kick wash fix break hide show bring take "
    "love hate know meet visit"
).split()
ADJECTIVES = (
    "big small old young red blue green white black happy sad tall short heavy light warm cold "
    "new quiet loud clever brave strange beautiful"
).split()
TIMES = "today yesterday tomorrow often rarely now again later".split()
SLOTS = ("agent", "agent_adj", "action", "patient", "patient_adj", "plural", "past", "negated", "time")


@dataclass(frozen=True)
class Meaning:
    agent: int
    agent_adj: int | None
    action: int
    patient: int
    patient_adj: int | None
    plural: bool
    past: bool
    negated: bool
    time: int | None

    def overlap(self, other: Meaning) -> float:
        """Fraction of the nine meaning slots on which two meanings agree."""
        agreed: int = sum(getattr(self, s) == getattr(other, s) for s in SLOTS)
        return agreed / len(SLOTS)


def random_meaning(rng: random.Random) -> Meaning:
    agent, patient = rng.sample(range(len(NOUNS)), 2)
    return Meaning(
        agent=agent,
        agent_adj=rng.randrange(len(ADJECTIVES)) if rng.random() < 0.4 else None,
        action=rng.randrange(len(VERBS)),
        patient=patient,
        patient_adj=rng.randrange(len(ADJECTIVES)) if rng.random() < 0.4 else None,
        plural=rng.random() < 0.3,
        past=rng.random() < 0.5,
        negated=rng.random() < 0.2,
        time=rng.randrange(len(TIMES)) if rng.random() < 0.3 else None,
    )


# --------------------------------------------------------------------------- languages
class Language:
    """Renders meanings as sentences; ``code`` is used in every file name."""

    code: str

    def render(self, m: Meaning, rng: random.Random) -> str:  # pragma: no cover - interface
        raise NotImplementedError


class PivotEnglish(Language):
    """English-like pivot: real English stems, regular morphology, SVO."""

    code = "en"

    def _np(self, noun: int, adj: int | None, plural: bool, article: str) -> list[str]:
        words = [] if plural else [article]
        if adj is not None:
            words.append(ADJECTIVES[adj])
        words.append(NOUNS[noun] + ("s" if plural else ""))
        return words

    def render(self, m: Meaning, rng: random.Random) -> str:
        verb = VERBS[m.action]
        if m.negated:
            aux = "did not" if m.past else ("do not" if m.plural else "does not")
            vp = [aux, verb]
        elif m.past:
            vp = [verb + ("d" if verb.endswith("e") else "ed")]
        else:
            vp = [verb if m.plural else verb + ("es" if verb.endswith(("sh", "ch", "s")) else "s")]
        words = self._np(m.agent, m.agent_adj, m.plural, "the") + vp + self._np(m.patient, m.patient_adj, False, "a")
        if m.time is not None:
            words.append(TIMES[m.time])
        sentence = " ".join(words)
        return sentence[0].upper() + sentence[1:] + "."


@dataclass(frozen=True)
class Typology:
    order: str            # permutation of "SVO"
    adj_after: bool       # adjective follows the noun
    plural: str           # "suffix" | "prefix" | "particle"
    tense: str            # "suffix" | "particle"
    negation: str         # "prefix" | "particle"
    case_suffix: bool     # accusative suffix on the patient
    consonants: str
    vowels: str


TYPOLOGIES = (
    Typology("SOV", False, "suffix", "suffix", "particle", True, "ptkmnsrl", "aiu"),
    Typology("VSO", True, "prefix", "particle", "prefix", False, "bdgvzmnlrh", "aeiou"),
    Typology("SVO", True, "particle", "suffix", "particle", False, "ptkfsxmnw", "aeo"),
    Typology("VOS", False, "suffix", "particle", "prefix", True, "kgqtdnry", "aiuoe"),
    Typology("OVS", True, "suffix", "suffix", "particle", True, "shzjmnlrpb", "eiuy"),
    Typology("SOV", True, "prefix", "suffix", "prefix", False, "tdkgnmlsv", "aoiu"),
    Typology("VSO", False, "particle", "particle", "particle", True, "ptkbdgmn", "aeiouy"),
)


class SyntheticLanguage(Language):
    """A procedurally generated language with its own lexicon, order and morphology."""

    def __init__(self, code: str, typology: Typology, seed: int):
        self.code = code
        self.t = typology
        rng = random.Random(f"{seed}-{code}-lexicon")
        used: set[str] = set()

        def word(min_syll: int = 1, max_syll: int = 3) -> str:
            while True:
                n = rng.randint(min_syll, max_syll)
                w = "".join(rng.choice(self.t.consonants) + rng.choice(self.t.vowels) for _ in range(n))
                if rng.random() < 0.3:
                    w += rng.choice(self.t.consonants)
                if w not in used and len(w) > 1:
                    used.add(w)
                    return w

        def lexicon(n: int) -> list[list[str]]:
            return [[word()] + ([word()] if rng.random() < 0.15 else []) for _ in range(n)]

        self.nouns, self.verbs = lexicon(len(NOUNS)), lexicon(len(VERBS))
        self.adjs, self.times = lexicon(len(ADJECTIVES)), lexicon(len(TIMES))
        self.plural_morph, self.past_morph, self.acc_morph = word(1, 1), word(1, 1), word(1, 1)
        self.neg_morph = word(1, 1)

    def _np(self, noun: int, adj: int | None, plural: bool, accusative: bool, rng: random.Random) -> list[str]:
        head = rng.choice(self.nouns[noun])
        words: list[str] = []
        if plural and self.t.plural == "suffix":
            head += self.plural_morph
        elif plural and self.t.plural == "prefix":
            head = self.plural_morph + head
        elif plural:
            words.append(self.plural_morph)
        if accusative and self.t.case_suffix:
            head += self.acc_morph
        if adj is None:
            return words + [head]
        adj_word = rng.choice(self.adjs[adj])
        return words + ([head, adj_word] if self.t.adj_after else [adj_word, head])

    def _vp(self, m: Meaning, rng: random.Random) -> list[str]:
        verb = rng.choice(self.verbs[m.action])
        words: list[str] = []
        if m.past and self.t.tense == "suffix":
            verb += self.past_morph
        elif m.past:
            words.append(self.past_morph)
        if m.negated and self.t.negation == "prefix":
            verb = self.neg_morph + verb
        elif m.negated:
            words.append(self.neg_morph)
        return words + [verb]

    def render(self, m: Meaning, rng: random.Random) -> str:
        parts = {
            "S": self._np(m.agent, m.agent_adj, m.plural, False, rng),
            "V": self._vp(m, rng),
            "O": self._np(m.patient, m.patient_adj, False, True, rng),
        }
        words = [w for role in self.t.order for w in parts[role]]
        if m.time is not None:
            words.insert(0, rng.choice(self.times[m.time]))
        sentence = " ".join(words)
        return sentence[0].upper() + sentence[1:] + "."


def make_languages(n: int, seed: int) -> list[SyntheticLanguage]:
    """``n`` synthetic languages with codes ``qaa``, ``qab``, ... (ISO 639 local-use range)."""
    if not 1 <= n <= 26:
        raise ValueError(f"n_languages must be in 1..26, got {n}")
    return [SyntheticLanguage(f"qa{chr(ord('a') + i)}", TYPOLOGIES[i % len(TYPOLOGIES)], seed) for i in range(n)]


# --------------------------------------------------------------------------- meaning pools
class MeaningPool:
    """Draws distinct meanings; a meaning is never handed out twice."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[Meaning] = set()

    def draw(self) -> Meaning:
        while True:
            m = random_meaning(self.rng)
            if m not in self.used:
                self.used.add(m)
                return m

    def draw_many(self, n: int) -> list[Meaning]:
        return [self.draw() for _ in range(n)]


def perturb(m: Meaning, n_changes: int, rng: random.Random) -> Meaning:
    """Change ``n_changes`` distinct slots of ``m`` to different values."""
    slots = rng.sample(SLOTS, n_changes)
    changes: dict[str, Any] = {}
    for s in slots:
        cur = getattr(m, s)
        if s in ("plural", "past", "negated"):
            changes[s] = not cur
        else:
            size = {"agent": len(NOUNS), "patient": len(NOUNS), "action": len(VERBS),
                    "agent_adj": len(ADJECTIVES), "patient_adj": len(ADJECTIVES), "time": len(TIMES)}[s]
            options: list[int | None] = [None] if s in ("agent_adj", "patient_adj", "time") else []
            options += list(range(size))
            options.remove(cur)
            changes[s] = rng.choice(options)
    if changes.get("agent", m.agent) == changes.get("patient", m.patient):
        return perturb(m, n_changes, rng)
    return replace(m, **changes)


def nli_hypothesis(m: Meaning, label: str, rng: random.Random) -> Meaning:
    """A hypothesis meaning with the given relation to premise ``m``."""
    if label == "entailment":  # drop every modifier: strictly less specific, same polarity
        return replace(m, agent_adj=None, patient_adj=None, time=None)
    if label == "contradiction":  # the same event with the opposite polarity
        return replace(m, negated=not m.negated, agent_adj=None if rng.random() < 0.5 else m.agent_adj)
    # neutral: add a modifier the premise does not specify
    free = [s for s in ("agent_adj", "patient_adj", "time") if getattr(m, s) is None]
    slot = rng.choice(free)
    size = len(TIMES) if slot == "time" else len(ADJECTIVES)
    change: dict[str, Any] = {slot: rng.randrange(size)}
    return replace(m, **change)


# --------------------------------------------------------------------------- corpus writer
Render = Callable[[Language, list[Meaning]], list[str]]  # renders meanings in a language, reproducibly


@dataclass
class SyntheticSpec:
    seed: int = 1
    n_languages: int = 5
    train_pairs_per_language: int = 4000
    tatoeba_pairs: int = 300
    bucc_gold_per_split: int = 30
    bucc_sentences_per_split: int = 1000
    sts_pairs: int = 200
    nli_items: int = 900
    translation_pairs: dict[str, int] | None = None  # {"train": n, "valid": n, "test": n}
    questions: int = 0  # question-retrieval bank size (0: no question product)
    qa_contexts: int = 0  # extractive-QA contexts of 4 sentences each (0: no QA product)


def write_synthetic_corpus(out: Path, spec: SyntheticSpec) -> dict[str, Any]:
    """Write every product of the generator under ``out``; return a manifest dict."""
    out = Path(out)
    rng = random.Random(spec.seed)
    en = PivotEnglish()
    langs = make_languages(spec.n_languages, spec.seed)
    pool = MeaningPool(rng)
    manifest: dict[str, Any] = {"generator": "common.data.synthetic", "spec": spec.__dict__,
                                "languages": [l.code for l in langs]}

    # Evaluation meanings first, so training can never reuse them.
    tatoeba = {l.code: pool.draw_many(spec.tatoeba_pairs) for l in langs}
    bucc_gold = {(l.code, split): pool.draw_many(spec.bucc_gold_per_split)
                 for l in langs for split in ("sample", "training", "test")}
    n_distract = spec.bucc_sentences_per_split - spec.bucc_gold_per_split
    bucc_src = {(l.code, s): pool.draw_many(n_distract) for l in langs for s in ("sample", "training", "test")}
    bucc_trg = {(l.code, s): pool.draw_many(n_distract) for l in langs for s in ("sample", "training", "test")}
    sts_base = pool.draw_many(spec.sts_pairs)
    nli_base = pool.draw_many(spec.nli_items)
    tr = spec.translation_pairs or {"train": 0, "valid": 200, "test": 200}
    translation = {(l.code, s): pool.draw_many(n) for l in langs for s, n in tr.items() if s != "train"}
    train = {l.code: pool.draw_many(spec.train_pairs_per_language) for l in langs}

    def render(lang: Language, ms: list[Meaning]) -> list[str]:
        r = random.Random(f"{spec.seed}-{lang.code}-{len(ms)}-{ms[0] if ms else ''}")
        return [lang.render(m, r) for m in ms]

    for l in langs:
        xx, ee = render(l, train[l.code]), render(en, train[l.code])
        write_lines(out / "train" / f"{l.code}-en.tsv", (f"{a}\t{b}" for a, b in zip(xx, ee)))
        write_lines(out / "tatoeba" / f"tatoeba.{l.code}-eng.{l.code}", render(l, tatoeba[l.code]))
        write_lines(out / "tatoeba" / f"tatoeba.{l.code}-eng.eng", render(en, tatoeba[l.code]))
        for split in ("sample", "training", "test"):
            _write_bucc_split(out / "bucc", l, en, split, bucc_gold[(l.code, split)],
                              bucc_src[(l.code, split)], bucc_trg[(l.code, split)], spec.seed, render)
        for split in tr:
            if split == "train":
                ms = train[l.code][: tr["train"]]
            else:
                ms = translation[(l.code, split)]
            if ms:
                write_lines(out / "translation" / f"{l.code}-en.{split}.{l.code}", render(l, ms))
                write_lines(out / "translation" / f"{l.code}-en.{split}.en", render(en, ms))

    # STS: pairs with 0..6 perturbed slots; gold = 5 x shared fraction.
    srng = random.Random(f"{spec.seed}-sts")
    others = [perturb(m, srng.randint(0, 6), srng) for m in sts_base]
    gold = [f"{5 * a.overlap(b):.3f}" for a, b in zip(sts_base, others)]
    for lang in [en, *langs]:
        a, b = render(lang, sts_base), render(en, others)
        name = f"{lang.code}-en"
        write_lines(out / "sts" / f"STS.input.{name}.txt", (f"{x}\t{y}" for x, y in zip(a, b)))
        write_lines(out / "sts" / f"STS.gs.{name}.txt", gold)

    # NLI, XNLI layout: dev-{lang}.tsv, item i is the same in every language.
    nrng = random.Random(f"{spec.seed}-nli")
    labels = [("entailment", "neutral", "contradiction")[i % 3] for i in range(len(nli_base))]
    # every premise has at least one modifier (entailment drops it) and one free slot (neutral adds one)
    nli_base = [replace(m, time=None) if None not in (m.agent_adj, m.patient_adj, m.time) else m for m in nli_base]
    nli_base = [m if (m.agent_adj, m.patient_adj, m.time) != (None, None, None)
                else replace(m, time=nrng.randrange(len(TIMES))) for m in nli_base]
    hyps = [nli_hypothesis(m, lab, nrng) for m, lab in zip(nli_base, labels)]
    for lang in [en, *langs]:
        p, h = render(lang, nli_base), render(lang, hyps)
        write_lines(out / "nli" / f"dev-{lang.code}.tsv", (f"{x}\t{y}\t{z}" for x, y, z in zip(p, h, labels)))

    if spec.questions:  # drawn last, so the other products do not depend on whether questions are made
        _write_questions(out / "questions", pool.draw_many(spec.questions), en, langs, spec.seed, render)
    if spec.qa_contexts:  # after the questions, for the same reason
        _write_qa(out / "qa", pool.draw_many(4 * spec.qa_contexts), en, langs, spec.seed, render)
    write_json(out / "synthetic.json", manifest)
    return manifest


def _write_bucc_split(root: Path, lang: Language, en: Language, split: str, gold: list[Meaning],
                      src_only: list[Meaning], trg_only: list[Meaning], seed: int, render: Render) -> None:
    rng = random.Random(f"{seed}-{lang.code}-{split}-bucc")
    src_items = [(m, True) for m in gold] + [(m, False) for m in src_only]
    trg_items = [(m, True) for m in gold] + [(m, False) for m in trg_only]
    rng.shuffle(src_items)
    rng.shuffle(trg_items)
    src_text = render(lang, [m for m, _ in src_items])
    trg_text = render(en, [m for m, _ in trg_items])
    src_ids = {m: f"{lang.code}-{i:06d}" for i, (m, _) in enumerate(src_items, 1)}
    trg_ids = {m: f"en-{i:06d}" for i, (m, _) in enumerate(trg_items, 1)}
    pair = f"{lang.code}-en"
    write_lines(root / f"{pair}.{split}.{lang.code}", (f"{src_ids[m]}\t{t}" for (m, _), t in zip(src_items, src_text)))
    write_lines(root / f"{pair}.{split}.en", (f"{trg_ids[m]}\t{t}" for (m, _), t in zip(trg_items, trg_text)))
    write_lines(root / f"{pair}.{split}.gold", sorted(f"{src_ids[m]}\t{trg_ids[m]}" for m in gold))


def _write_questions(root: Path, meanings: list[Meaning], en: Language, langs: Sequence[Language], seed: int,
                     render: Render) -> None:
    """A question-retrieval stand-in (common.eval.question_retrieval): the bank holds the English renderings;
    every meaning is asked again in English (``nq``) and in each language (``mkqa.{code}``), never retrieving
    its own bank entry; the answer is the meaning's patient, so a hit is another meaning with that patient."""
    def records(lang: Language, exclude: bool) -> list[str]:
        return [json.dumps({"id": f"q{i}", "question": text, "answers": [NOUNS[m.patient]],
                            **({"exclude": f"q{i}"} if exclude else {})}, ensure_ascii=False)
                for i, (m, text) in enumerate(zip(meanings, render(lang, meanings)))]

    write_lines(root / "bank.jsonl", records(en, False))
    write_lines(root / "nq.jsonl", records(en, True))
    for lang in langs:
        write_lines(root / f"mkqa.{lang.code}.jsonl", records(lang, True))


def _write_qa(root: Path, meanings: list[Meaning], en: Language, langs: Sequence[Language], seed: int,
              render: Render) -> None:
    """An extractive-QA stand-in (common.eval.qa; SQuAD v1.1 JSON): a context is four sentences; the question is
    the entailed shortening (common.data.synthetic.nli_hypothesis) of one of them and the answer is that whole
    sentence. English contexts of the first two thirds train (``train.en.json``); the last third is the test set
    of every language (``test.<code>.json``)."""
    rng = random.Random(f"{seed}-qa")
    hyps = [nli_hypothesis(m, "entailment", rng) for m in meanings]
    n = len(meanings) // 4
    cut = max(1, 2 * n // 3)

    def squad(lang: Language, contexts: range) -> dict[str, Any]:
        sents, questions = render(lang, meanings), render(lang, hyps)
        paras = []
        for c in contexts:
            parts = sents[4 * c:4 * c + 4]
            k = c % 4
            context = " ".join(parts)
            start = len(" ".join(parts[:k])) + (1 if k else 0)
            paras.append({"context": context, "qas": [{"id": f"q{c}", "question": questions[4 * c + k],
                                                       "answers": [{"text": parts[k], "answer_start": start}]}]})
        return {"version": "synthetic", "data": [{"title": "synthetic", "paragraphs": paras}]}

    root.mkdir(parents=True, exist_ok=True)
    write_json(root / "train.en.json", squad(en, range(cut)))
    for lang in [en, *langs]:
        write_json(root / f"test.{lang.code}.json", squad(lang, range(cut, n)))
