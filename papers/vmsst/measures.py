"""VMSST's composite item-level metrics for its claims and tables: the Score over its six tasks, Table 6's Score,
Table 8's Tatoeba gap and the Score gap between two objectives (:mod:`common.report.claims`' item metrics, so a
claim's interval resamples the items of every task at once)."""
from __future__ import annotations

from common.languages import TO_ISO1
from common.report.claims import Combined, Gap
from papers.vmsst.runs import TASKS

ENG, ENG_CONCAT, XL, TATOEBA, BUCC_C, BUCC_M, NQ, MKQA = TASKS


def score_metric(store, method: str, init: str, seeds: list[int] | None = None) -> dict[int, Combined]:
    """VMSST's Score per seed id as one item-level metric (for intervals over the six tasks' items at once)."""
    parts = [(ENG, 1 / 6), (XL, 1 / 6), (TATOEBA, 1 / 6), (BUCC_C, 1 / 12), (BUCC_M, 1 / 12), (NQ, 1 / 6),
             (MKQA, 1 / 6)]
    per_task = [store.item_metrics(method, t, init, seeds) for t, _ in parts]
    return {k: Combined([p[k] for p in per_task], [w for _, w in parts]) for k in per_task[0]}


def table6_score_metric(store, method: str, init: str, languages: list[str], seeds: list[int]) -> dict[int, Combined]:
    """Table 6's Score per seed id as one item-level metric: the mean of English STS, the STS17 pairs of its
    languages, Tatoeba on them, NQ and MKQA on them (the parts :func:`table6` averages)."""
    iso = [TO_ISO1.get(lang, lang) for lang in languages]
    pairs = [p for lang in iso for p in (f"{lang}-en", f"{lang}-{lang}")]
    parts = [(ENG, None), (XL, pairs), (TATOEBA, languages), (NQ, None), (MKQA, iso)]
    per_task = [store.item_metrics(method, t, init, seeds, langs) for t, langs in parts]
    return {k: Combined([p[k] for p in per_task], [1 / len(parts)] * len(parts)) for k in per_task[0]}


def tatoeba_gap(store, init: str, seeds: list[int] | None, languages: list[str]) -> dict[int, Gap]:
    """Per seed id, VMSST's Tatoeba accuracy minus BiTranslation's over ``languages`` (Table 8's gap)."""
    b = store.item_metrics("bitranslation", TATOEBA, init, seeds, languages)
    v = store.item_metrics("vmsst", TATOEBA, init, seeds, languages)
    return {k: Gap(b[k], v[k]) for k in b.keys() & v.keys()}


def delta_sides(on_seen: dict[int, Gap], on_unseen: dict[int, Gap]) -> tuple[dict, dict]:
    """Table 8's Δ as a paired difference (b − a): both sides on the same items, the seen and the unseen languages
    together, each side weighting its own part (a claim's two systems must be scored on the same test items)."""
    a = {k: Combined([on_seen[k], on_unseen[k]], [1, 0]) for k in on_seen}
    b = {k: Combined([on_seen[k], on_unseen[k]], [0, 1]) for k in on_seen}
    return a, b


def gaps(store, suffix: str, init: str) -> dict[int, Gap]:
    """Per seed id, VMSST's Score minus Contrastive's (runs ``vmsst<suffix>`` and ``contrastive<suffix>``)."""
    c, v = score_metric(store, f"contrastive{suffix}", init), score_metric(store, f"vmsst{suffix}", init)
    return {k: Gap(c[k], v[k]) for k in c.keys() & v.keys()}
