"""The result store: any metric of any results JSON of an experiment, by run and dotted path.

``store.values("dap", "tatoeba@cosine", "groups.36.both", init="scratch")`` reads
``<results>/eval/scratch/dap/seed<N>/tatoeba@cosine.json`` for every seed the run registry lists
for (dap, scratch) and returns the value at ``scores.groups.36.both`` of each, in seed order.
"""
from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from common.eval.results import read_result
from common.eval.tasks import get_task
from common.report.claims import ItemMetric, item_metric
from common.runs import Run, RunRegistry


def metric(scores: dict[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` of a scores dict (``"per_pair.de-en.test.f1"``)."""
    node: Any = scores
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"no metric {path!r} (missing {part!r})")
        node = node[part]
    return node


def mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


@dataclass(frozen=True)
class Stat:
    """A cell over seeds: mean and sample standard deviation (printed "mean ± sd")."""

    mean: float
    sd: float
    n: int


def stat(values: Iterable[float | None]) -> Stat | float | None:
    """Mean ± standard deviation over seeds; a single value (one seed) stays a plain number."""
    present = [v for v in values if v is not None]
    if len(present) < 2:
        return present[0] if present else None
    return Stat(statistics.fmean(present), statistics.stdev(present), len(present))


def seed_stat(metrics: dict[int, ItemMetric]) -> Stat | float | None:
    """A system's item metric over its seeds as a table cell (:func:`stat` of the values)."""
    return stat([m.value() for m in metrics.values()])


class ResultStore:
    def __init__(self, root: str | Path, registry: RunRegistry):
        self.root, self.registry = Path(root), registry

    def path(self, run: Run, task: str) -> Path:
        return self.root / "eval" / run.init / run.method / f"seed{run.seed}" / f"{task}.json"

    @cache  # noqa: B019 -- one store per report process; the files do not change under it
    def _read(self, path: Path) -> dict[str, Any]:
        return read_result(path).scores

    def _init(self, init: str | None) -> str:
        return init if init is not None else self.registry.inits()[0]

    def seeds_scored(self, method: str, task: str, init: str | None = None) -> list[int]:
        """Every registered seed of (method, init) that is scored on ``task`` (a figure's task may be registered on
        the first seed only)."""
        init = self._init(init)
        seeds = [s for s in self.registry.seeds(method, init) if task in self.registry.get(method, init, s).tasks]
        if not seeds:
            raise KeyError(f"no seed of run ({method}, {init}) is scored on {task!r}")
        return seeds

    def scores(self, method: str, task: str, init: str | None = None,
               seeds: list[int] | None = None) -> list[dict[str, Any]]:
        """The scores of :meth:`seeds_scored`, or of the given seeds, in that order."""
        init = self._init(init)
        seeds = self.seeds_scored(method, task, init) if seeds is None else seeds
        return [self._read(self.path(self.registry.get(method, init, s), task)) for s in seeds]

    def item_metrics(self, method: str, task: str, init: str | None = None, seeds: list[int] | None = None,
                     languages: list[str] | None = None) -> dict[int, ItemMetric]:
        """Seed id -> the task's main metric of that seed's results, recomputable on resampled items
        (:func:`common.report.claims.item_metric`; over ``languages`` only when given): what claims pair by seed."""
        seeds = self.seeds_scored(method, task, init) if seeds is None else seeds
        kind = get_task(task).type
        return {s: item_metric(kind, sc, languages) for s, sc in zip(seeds, self.scores(method, task, init, seeds))}

    def values(self, method: str, task: str, path: str = "main_score", init: str | None = None,
               seeds: list[int] | None = None) -> list[Any]:
        return [metric(s, path) for s in self.scores(method, task, init, seeds)]

    def mean(self, method: str, task: str, path: str = "main_score", init: str | None = None) -> float | None:
        return mean(self.values(method, task, path, init))

    def stat(self, method: str, task: str, path: str = "main_score", init: str | None = None) -> Stat | float | None:
        return stat(self.values(method, task, path, init))

    def first(self, method: str, task: str, init: str | None = None) -> dict[str, Any]:
        """The scores of the first registered seed (analysis runs have one)."""
        init = self._init(init)
        return self.scores(method, task, init, self.registry.seeds(method, init)[:1])[0]
