"""Tables declared as specs: rows are runs, columns are (task, metric) cells, plus the paper's numbers.

A :class:`TableSpec` is rendered against a :class:`~common.report.results.ResultStore` into a
:class:`~common.report.tables.Table` (mean ± sd over the run's seeds; one seed: the value). A metric path may hold
``{placeholders}`` filled from the row's ``params`` (``per_pair.{pair}.test.f1``), so one spec
serves a grid of runs x language pairs. Tables that are not a plain grid stay functions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.report.results import ResultStore, stat
from common.report.tables import Table


@dataclass(frozen=True)
class Col:
    """Our value: ``metric`` (a dotted path, may hold ``{placeholders}``) of ``task``'s results JSON."""

    header: str
    task: str
    metric: str = "main_score"


@dataclass(frozen=True)
class Ref:
    """The paper's value: entry ``index`` of the row's ``reported`` tuple."""

    header: str
    index: int = 0


@dataclass(frozen=True)
class Row:
    labels: tuple[Any, ...]
    method: str | None  # None: a row of the paper's numbers only
    init: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    reported: tuple[Any, ...] = ()
    seeds: tuple[int, ...] | None = None  # None: every seed the run registry lists for (method, init)


@dataclass
class TableSpec:
    name: str
    caption: str
    label_columns: list[str]
    columns: list[Col | Ref]
    rows: list[Row]
    notes: list[str] = field(default_factory=list)

    def cell(self, store: ResultStore, row: Row, col: Col | Ref) -> Any:
        if isinstance(col, Ref):
            return row.reported[col.index] if col.index < len(row.reported) else None
        if row.method is None:
            return None
        seeds = list(row.seeds) if row.seeds is not None else None
        return stat(store.values(row.method, col.task, col.metric.format(**row.params), row.init, seeds))

    def render(self, store: ResultStore) -> Table:
        rows = [[*row.labels, *(self.cell(store, row, c) for c in self.columns)] for row in self.rows]
        return Table(self.name, self.caption, [*self.label_columns, *(c.header for c in self.columns)], rows,
                     list(self.notes))
