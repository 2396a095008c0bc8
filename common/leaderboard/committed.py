"""A leaderboard table as it stands in its folder, read back: its rows' cells (the CSV) and its notes (the Markdown).

The targets that regenerate part of the leaderboard keep the rest as the committed table has it: the outside rows
(``snakemake leaderboard/models``), some methods' rows (``leaderboard/rows``), and, where the NMT column is a target
of its own (``nmt.own_target``), that column from the NMT report's table beside it (``leaderboard/nmt``,
:mod:`common.leaderboard.report_nmt`). A cell reads back as it was written, so a kept row renders the same CSV cells.
"""
from __future__ import annotations

import csv
from pathlib import Path

from common.leaderboard.methods import METHODS
from common.nmt import plan as nmtplan
from common.report.claims import Difference

Cell = tuple[Difference, list[float]] | None  # (mean with interval, main score of every seed); None: not applicable
NOT_RUN = "–"  # a method the NMT column does not fine-tune at this scale, or the NMT-only row on a task
Scores = dict[str, dict[str, Cell | str]]  # row -> column -> cell, or NOT_RUN
OUTSIDE_PREFIX, OUTSIDE_SUFFIX = "outside model: ", " (untrained)"
TABLE = "leaderboard"  # the table's file name in its folder (leaderboard.csv, leaderboard.md)

# the notes that say where rows came from, or describe one row (a method's readout check): kept from a committed
# table unless the rows they name are regenerated
READOUT_NOTE = "Readout check"
TRAINED_ROWS, ROW_ALONE, OUTSIDE_NOTE, DEPARTURES = ("Trained rows:", "Row regenerated alone:", "Outside models:",
                                                     "Departures from the papers:")


def label(row: str) -> str:
    """A row's name in the table: a method's label, the NMT column's random-init model, or an outside model."""
    if row == nmtplan.RANDOM:
        return "random-init Transformer (NMT only)"
    return METHODS[row].label if row in METHODS else f"{OUTSIDE_PREFIX}{row}{OUTSIDE_SUFFIX}"


def parse_cell(mean: str, ci: str, per_seed: str) -> Cell | str:
    """A cell as the CSV prints it: "n/a", NOT_RUN, or the mean, "[lo, hi]" and "a / b"."""
    if mean in ("n/a", NOT_RUN):
        return None if mean == "n/a" else NOT_RUN
    lo, hi = (float(x) for x in ci.strip("[]").split(","))
    seeds = [float(x) for x in per_seed.split(" / ")]
    return Difference(float(mean), lo, hi, len(seeds), 1000), seeds


def committed_table(folder: Path, cols: list[str], outside: bool = False,
                    name: str = TABLE) -> tuple[Scores, list[str]]:
    """The rows of a table as it stands (``<name>.csv``; outside rows only where ``outside``) in ``cols``, and its
    notes (``<name>.md``). A column or row the table was not written with is an error naming the file and line."""
    by_label = {label(m): m for m in [*METHODS, nmtplan.RANDOM]}
    values: Scores = {}
    path = folder / f"{name}.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in cols if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}, line 1: no column {', '.join(missing)}: the table was written for other tasks; "
                             "`snakemake leaderboard/all` writes it afresh")
        for line, row in enumerate(reader, 2):
            row_name = row["method"]
            if row_name.startswith("paper:") or row_name.startswith(OUTSIDE_PREFIX) and not outside:
                continue
            if row_name.startswith(OUTSIDE_PREFIX):
                key = row_name.removeprefix(OUTSIDE_PREFIX).removesuffix(OUTSIDE_SUFFIX)
            elif row_name in by_label:
                key = by_label[row_name]
            else:
                raise ValueError(f"{path}, line {line}: row {row_name!r} is no registered method")
            values[key] = {c: parse_cell(row[c], row[f"{c} 95% CI"], row[f"{c} per seed"]) for c in cols}
    notes = [line[2:] for line in (folder / f"{name}.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("- ")]
    return values, notes


def kept_notes(notes: list[str], rows: list[str]) -> list[str]:
    """The committed notes a report with fresh ``rows`` keeps: the outside rows' and the trained rows' provenance,
    and each other row's own notes (its readout check, its being regenerated alone); the rest it writes afresh."""
    own = tuple(f"{prefix}{label(m)}" for m in rows for prefix in (f"{READOUT_NOTE}, ", f"{ROW_ALONE} "))
    return [n for n in notes if n.startswith((OUTSIDE_NOTE, TRAINED_ROWS, ROW_ALONE, f"{READOUT_NOTE}, "))
            and not n.startswith(own)]
