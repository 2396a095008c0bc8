"""The leaderboard's NMT column as a report of its own, where the scale's config makes it a workflow target of its
own (``nmt.own_target``; mini, whose 1,000-update recipe takes most of a 4-hour budget alone).

``snakemake leaderboard/nmt`` fine-tunes each system of the column (:mod:`common.leaderboard.nmt`), writes this
table (``figures/leaderboard/<scale>/nmt/leaderboard_nmt``: one row per method, its BLEU with the interval over the
test sentences, and the notes that say how the models were trained and scored), then rewrites the leaderboard's NMT
column from it, every other cell as the table had it (``--nmt-column``, :func:`common.leaderboard.report.build`).
``leaderboard/all`` reads the column from this table too, so the two targets can run in either order.
"""
from __future__ import annotations

from common.config import load_leaderboard_config
from common.leaderboard import nmt as lbnmt
from common.leaderboard.committed import NOT_RUN, label
from common.leaderboard.methods import METHODS, registry
from common.leaderboard.report import bleu_cell, nmt_column, nmt_notes, nmt_results, rendered
from common.nmt import plan as nmtplan
from common.report.cli import Figure, main
from common.report.context import ReportContext
from common.report.specs import TableSpec
from common.report.tables import Table, leakage_note


def nmt_table(ctx: ReportContext) -> Table:
    """Every method of the config (NOT_RUN where the column's systems leave it out) and the random-init model."""
    nmt = lbnmt.nmt_config(ctx.cfg)
    if nmt is None:
        raise SystemExit(f"scale {ctx.scale!r}: the leaderboard's config has no NMT column (its nmt section)")
    runs = nmt_results(ctx, nmt)
    col = nmt_column(nmt)
    rows = [m for m in ctx.cfg["methods"] if m in METHODS] + [nmtplan.RANDOM]
    cells = [[label(row), *rendered((bleu_cell(runs[row]), [runs[row]["main_score"]]) if row in runs else NOT_RUN)]
             for row in rows]
    notes = [f"Scale '{ctx.scale}': {ctx.cfg['description'].strip()}",
             "The encoders: each method's run of the leaderboard (the table beside this folder). "
             + leakage_note(ctx.manifest), *nmt_notes(nmt, rows, runs)]
    return Table(lbnmt.REPORT_TABLE, f"The leaderboard's NMT column, scale '{ctx.scale}' (BLEU)",
                 ["method", col, f"{col} 95% CI", f"{col} per seed"], cells, notes)


def build(ctx: ReportContext) -> tuple[list[Table | TableSpec], dict[str, Figure]]:
    return [nmt_table(ctx)], {}


def run(argv: list[str] | None = None) -> None:
    main("leaderboard", "Leaderboard NMT column", load_leaderboard_config, registry, build, None, argv,
         pretraining=False)


if __name__ == "__main__":
    run()
