"""Evaluation results into the model cards (:mod:`common.models.card`) of an experiment's saved models.

The report reads every results JSON of the run registry; for each run whose model folder has a card it adds the
task's main score with its 95 % interval over the test items of that one model (:func:`common.report.claims.interval`
on one seed: the items' part alone). A task type without an item-level metric gets its score without an interval.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from common.eval.tasks import get_task
from common.models import card
from common.report.claims import interval, item_metric
from common.report.context import ReportContext

log = logging.getLogger(__name__)


def result_entry(task: str, scores: dict[str, Any], scale: str) -> dict[str, Any]:
    """A card's row for one result: the main score and its interval over the test items (``None`` for a task type
    without an item-level metric: the card is JSON, which has no NaN)."""
    t = get_task(task)
    lo: float | None
    hi: float | None
    try:
        d = interval([item_metric(t.type, scores)])
        lo, hi = d.lo, d.hi
    except (KeyError, ValueError):  # no item-level metric for this type
        lo = hi = None
    return {"main_score": float(scores["main_score"]), "lo": lo, "hi": hi, "main_score_is": t.main_score,
            "scale": scale}


def update_cards(ctx: ReportContext) -> int:
    """Add every present result of every carded model folder of the registry; returns the folders updated."""
    updated = 0
    if getattr(ctx.store, "registry", None) is None:  # a report without runs
        return 0
    for run in ctx.store.registry:
        folder = Path(ctx.results) / "models" / run.init / run.method / f"seed{run.seed}" / "model"
        if not card.has_card(folder):
            continue
        results = {}
        for task in run.tasks:
            path = ctx.store.path(run, task)
            if path.exists():
                results[task] = result_entry(task, ctx.store.scores(run.method, task, run.init, [run.seed])[0],
                                             ctx.scale)
        if results:
            card.add_results(folder, results)
            updated += 1
    log.info("model cards updated with their results: %d", updated)
    return updated
