"""The report command line every experiment shares: read the results, build the tables and figures,
write them (CSV, Markdown, LaTeX; PNG, PDF) and an index ``README.md``.

An experiment's ``report.py`` supplies ``build(ctx) -> (tables, figures)``: tables are
:class:`~common.report.tables.Table` or :class:`~common.report.specs.TableSpec` (rendered here),
figures map a name to a function that draws it into a folder and returns the files written.
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from common.config import load_yaml
from common.data.manifest import load_manifest
from common.report import curves, vocabulary_table
from common.report.cards import update_cards
from common.report.context import ReportContext
from common.report.index import write_index
from common.report.results import ResultStore
from common.report.specs import TableSpec
from common.report.tables import Table, write_table
from common.runs import MAIN_TARGET, RunRegistry
from common.targets import index_target, split_targets

log = logging.getLogger(__name__)


Figure = Callable[[Path], list[Path]]
Build = Callable[[ReportContext], tuple[list[Table | TableSpec], dict[str, Figure]]]


def main(experiment: str, title: str, load_config: Callable[[str], dict[str, Any]],
         registry: Callable[[dict[str, Any]], RunRegistry], build: Build, reported: Path | None,
         argv: list[str] | None = None, options: Callable[[argparse.ArgumentParser], None] | None = None,
         adjust: Callable[[dict[str, Any], argparse.Namespace], None] | None = None,
         pretraining: bool = True) -> None:
    """``options`` adds experiment-specific arguments; ``adjust`` applies them to the loaded config
    (so the report's run registry is the one the workflow built). ``pretraining``: the report of the pre-trained
    encoders, which adds what the config asks of every paper (the learning curve, the vocabulary table); False for
    a report of its own on another stage (HICTL's NMT report), which reads none of those results."""
    p = argparse.ArgumentParser(description=f"Regenerate every {title} table and figure from the results")
    p.add_argument("--scale", required=True)
    p.add_argument("--results", required=True, help=f"results/<scale>/{experiment}")
    p.add_argument("--corpus", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--target", default=MAIN_TARGET,
                   help="the workflow target whose tables and figures to write (common/targets.py); the "
                        "main one also writes the folder's README.md")
    if options:
        options(p)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    cfg = load_config(a.scale)
    if adjust:
        adjust(cfg, a)
    ctx = ReportContext(experiment, a.scale, cfg, ResultStore(a.results, registry(cfg)), load_manifest(a.corpus),
                        load_yaml(reported) if reported else {}, Path(a.results), a.target)
    if a.target != MAIN_TARGET and a.target not in split_targets(cfg):
        raise SystemExit(f"--target {a.target}: scale {a.scale!r} has the targets {[MAIN_TARGET, *split_targets(cfg)]}")
    tables, figures = build(ctx)  # a build may leave out what its target does not write (ctx.wants)
    if pretraining:  # each saved model's card gains its results (common/report/cards.py)
        update_cards(ctx)
    if pretraining and cfg.get("learning_curve"):  # every paper's main methods against steps (common/report/curves.py)
        figures = {**figures, curves.FIGURE: partial(curves.learning_curve_figure, ctx)}
    if pretraining and vocabulary_table.extended(cfg) and ctx.wants(vocabulary_table.NAME):
        tables = [*tables, vocabulary_table.vocabulary_table(cfg, ctx.results)]  # pieces per word, before and after
    tables = [t for t in tables if ctx.wants(t.name)]
    figures = {name: draw for name, draw in figures.items() if ctx.wants(name)}
    rendered = [t.render(ctx.store) if isinstance(t, TableSpec) else t for t in tables]
    out = Path(a.out)
    written = [path for t in rendered for path in write_table(t, out)]
    for draw in figures.values():
        written += draw(out)
    if a.target == MAIN_TARGET:  # the folder's index, with links to what the other targets write there
        root = "leaderboard" if experiment == "leaderboard" else f"papers/{experiment}"
        command = {"command": cfg["report_command"]} if cfg.get("report_command") else {}
        written.append(write_index(out, f"{root}/{index_target(cfg, not pretraining)}", title, a.scale,
                                   [t.name for t in rendered],
                                   list(figures), others={f"{root}/{name}": outputs
                                                          for name, outputs in split_targets(cfg).items()},
                                   **command))
    log.info("wrote %d files to %s", len(written), out)
