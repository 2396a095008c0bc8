"""Claims as declarations: one id, one claim of a paper, one row of the shared claims table.

A paper declares its claims in ``papers/<p>/claims.py`` (``declare(cfg) -> list[Claim]``), from its config alone:
each names the paper's section or table, what the paper states, the metric, the two systems compared (A the
baseline, B the paper's side) and the expected sign of B - A (0: the paper claims no direction). A side measures
itself lazily from the report's context (the result store, the corpus manifest), so the claims of a scale can be
listed and counted before any run (:mod:`common.report.claims_index`) and evaluated after (:func:`evaluate`): the
paired difference over seeds with the calibrated interval of :mod:`common.report.claims`, and its verdict. The
shared table (:func:`claims_table`) is written as CSV, Markdown and LaTeX with its records as ``claims.json``
(:class:`ClaimRecord`), which the cross-paper index reads.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from common.report.claims import INTERVAL_NOTE, PerSeed, paired_difference, verdict
from common.report.results import Stat, seed_stat, stat
from common.report.tables import Table

log = logging.getLogger(__name__)

Measure = Callable[[Any], PerSeed]  # the report context (store, manifest, cfg, results) -> per-seed item metrics


class NotApplicable(Exception):
    """Raised by a side whose data this scale does not have (e.g. no trained Latin-script language): the claim is
    listed in the log, not in the table."""


@dataclass(frozen=True)
class Side:
    """One system of a claim: its label and how to measure it."""

    label: str
    measure: Measure


def task_side(label: str, method: str, task: str, init: str | None = None, seeds: Sequence[int] | None = None,
              languages: Callable[[Any], Sequence[str] | None] | Sequence[str] | None = None) -> Side:
    """A run's item metric on one task (:meth:`common.report.results.ResultStore.item_metrics`); ``languages`` may
    be a function of the context (languages known from the corpus or the results only)."""
    def measure(ctx: Any) -> PerSeed:
        metrics: PerSeed = ctx.store.item_metrics(method, task, init, list(seeds) if seeds is not None else None,
                                                  _languages(ctx, languages, label, task))
        return metrics
    return Side(label, measure)


def _languages(ctx: Any, languages: Callable[[Any], Sequence[str] | None] | Sequence[str] | None, label: str,
               task: str) -> list[str] | None:
    """A side's languages in this context (None: all); none at all makes the claim not applicable here."""
    langs = languages(ctx) if callable(languages) else languages
    if langs is not None and not langs:
        raise NotApplicable(f"{label}: no languages to score {task} on")
    return list(langs) if langs is not None else None


def unseeded_side(label: str, method: str, task: str, init: str | None, seeds: Sequence[int],
                  languages: Callable[[Any], Sequence[str] | None] | Sequence[str] | None = None) -> Side:
    """A run whose result does not depend on the seed (an encoder before any training step, scored by a task that
    trains nothing: retrieval, mining): its one registered seed stands for each of ``seeds``, so that a claim pairs
    it with every seed of the other side. Never for a task that fine-tunes (XNLI draws on the seed)."""
    def measure(ctx: Any) -> PerSeed:
        first = ctx.store.registry.seeds(method, init)[0]  # the registry raises, naming the run, when it has none
        one = ctx.store.item_metrics(method, task, init, [first], _languages(ctx, languages, label, task))[first]
        return {s: one for s in seeds}
    return Side(label, measure)


REPORTED_COLUMN = "paper: A → B (B − A)"
REPORTED_NOTE = ("The paper column: the paper's own numbers for the two sides, from the table or section the "
                 "row names (papers/<p>/reported.yaml), for its setting where it reports several; '–' where no table "
                 "of the paper measures both sides (our controls, and the paper's design choices it does not test).")


def reported(a: float | None, b: float | None, setting: str = "") -> str:
    """The paper's own numbers for a claim's two sides, as the claims tables print them: ``A → B (B − A)``, after
    the paper's setting where it reports several (join those with "; "); "" where it reports either side as not
    measured (None)."""
    if a is None or b is None:
        return ""
    return f"{setting + ': ' if setting else ''}{_decimals(a)} → {_decimals(b)} ({_decimals(b - a, '+')})"


def _decimals(x: float, sign: str = "") -> str:
    """One decimal, two where the second is not 0 (the papers print one or two; a mean of two can need two)."""
    text = f"{x:{sign}.2f}"
    return text[:-1] if text.endswith("0") else text


@dataclass(frozen=True)
class Claim:
    id: str  # unique within the paper; the index names it <paper>/<id>
    paper: str
    where: str  # the paper's section or table
    statement: str  # what the paper claims, in a few words
    metric: str
    a: Side  # the baseline
    b: Side  # the paper's side: B - A > 0 when sign = 1
    sign: int = 1  # the paper's direction of B - A; 0: no direction claimed
    setting: str = ""  # what else tells rows apart (the encoder, a batch size, a language pair)
    reported: str = ""  # the paper's own A → B (:func:`reported`); "" where no table of the paper measures both


@dataclass(frozen=True)
class ClaimRecord:
    """An evaluated claim, as ``claims.json`` holds it."""

    paper: str
    id: str
    where: str
    statement: str
    metric: str
    setting: str
    a: str
    b: str
    a_score: float | None
    b_score: float | None
    difference: float | None
    lo: float | None
    hi: float | None
    seeds: int
    sign: int
    verdict: str  # NOT_APPLICABLE, with ``reason``, for a claim whose data this scale does not have
    reason: str = ""
    reported: str = ""  # the paper's own A → B (Claim.reported)


NOT_APPLICABLE = "not applicable here"


def _mean(cell: Stat | float | None) -> float | None:
    return cell.mean if isinstance(cell, Stat) else cell


def evaluate(claims: Sequence[Claim], ctx: Any) -> list[tuple[ClaimRecord, Stat | float | None,
                                                               Stat | float | None]]:
    """Each claim's record and its two sides' cells (mean ± sd over seeds); a claim whose data this scale lacks
    (:class:`NotApplicable`) gets a record saying why and no cells. Ids must be unique."""
    seen: set[str] = set()
    out: list[tuple[ClaimRecord, Stat | float | None, Stat | float | None]] = []
    for c in claims:
        if c.id in seen:
            raise ValueError(f"claim id {c.id!r} of {c.paper} declared twice")
        seen.add(c.id)
        try:
            a, b = c.a.measure(ctx), c.b.measure(ctx)
        except NotApplicable as exc:
            log.info("claim %s/%s left out: %s", c.paper, c.id, exc)
            out.append((ClaimRecord(c.paper, c.id, c.where, c.statement, c.metric, c.setting, c.a.label, c.b.label,
                                    None, None, None, None, None, 0, c.sign, NOT_APPLICABLE, str(exc), c.reported),
                        None, None))
            continue
        d = paired_difference(a, b)
        cells = [seed_stat(dict(m)) if isinstance(m, Mapping) else stat([x.value() for x in m]) for m in (a, b)]
        out.append((ClaimRecord(c.paper, c.id, c.where, c.statement, c.metric, c.setting, c.a.label, c.b.label,
                                _mean(cells[0]), _mean(cells[1]), d.mean, d.lo, d.hi, d.seeds, c.sign,
                                verdict(d, c.sign) if c.sign else "no direction claimed", reported=c.reported),
                        cells[0], cells[1]))
    return out


COLUMNS = ["claim", "where", "metric", "setting", "A", "A score", "B", "B score", "B − A", "95% CI",
           REPORTED_COLUMN, "seeds", "verdict"]


def claims_table(claims: Sequence[Claim], ctx: Any, caption: str, notes: Sequence[str] = (),
                 name: str = "claims", interval_note: str = INTERVAL_NOTE) -> Table:
    """The shared claims table of a paper's declared claims, with their records (``claims.json``)."""
    evaluated = evaluate(claims, ctx)
    rows = [[r.statement, r.where, r.metric, r.setting or "–", r.a, a, r.b, b, r.difference,
             f"[{r.lo:.1f}, {r.hi:.1f}]", r.reported or "–", r.seeds, r.verdict]
            for r, a, b in evaluated if r.verdict != NOT_APPLICABLE]
    left_out = [f"{r.statement} ({r.metric}{', ' + r.setting if r.setting else ''}): {r.reason}"
                for r, _, _ in evaluated if r.verdict == NOT_APPLICABLE]
    notes = [*notes, "B better is the paper's side; paired by seed (the seeds column: how many each row used). "
             + interval_note, REPORTED_NOTE]
    if left_out:
        notes.append("Not applicable at this scale: " + "; ".join(left_out) + ".")
    return Table(name, caption, list(COLUMNS), rows, notes, records=[asdict(r) for r, _, _ in evaluated])
