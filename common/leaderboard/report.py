"""The leaderboard table and figure: methods x tasks, each cell the task's main score.

Every method was trained on the same corpus, from the same initial encoder, with the same steps,
batch and seeds (``config/<scale>.yaml``), and scored by the same registered tasks, so a column
compares methods on equal terms. Cells are the mean over seeds with the per-seed values beside it;
"n/a" marks a task that does not apply to a method's model (XNLI fine-tunes one shared encoder,
which MoCo-BERT's language-specific pair is not).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from common.config import load_leaderboard_config
from common.eval.tasks import get_task
from common.leaderboard.methods import METHODS, method, registry
from common.report.cli import ReportContext, main
from common.report.figures import plt, save
from common.report.results import mean
from common.report.tables import Table


def scores(ctx: ReportContext) -> dict[str, dict[str, list[float] | None]]:
    """method -> task -> main score of every seed (None: the task does not apply to the method)."""
    out: dict[str, dict[str, list[float] | None]] = {}
    init = ctx.store.registry.inits()[0]
    for m in ctx.cfg["methods"]:
        out[m] = {}
        for t in ctx.cfg["tasks"]:
            applies = get_task(t).applies_to(method(m).embedder)
            out[m][t] = ctx.store.values(m, t, "main_score", init) if applies else None
    return out


def table(ctx: ReportContext, values: dict) -> Table:
    tasks = ctx.cfg["tasks"]
    rows = []
    for m, per_task in values.items():
        cells = []
        for t in tasks:
            v = per_task[t]
            cells += ["n/a", "n/a"] if v is None else [mean(v), " / ".join(f"{x:.1f}" for x in v)]
        rows.append([METHODS[m].label, *cells])
    notes = [f"Scale '{ctx.scale}': {ctx.cfg['description'].strip()}",
             f"Every method: encoder '{next(iter(ctx.cfg['encoders']))}', {ctx.cfg['training']['max_steps']} steps x "
             f"{ctx.cfg['training']['global_batch_size']} pairs, seeds {ctx.cfg['seeds']}, the same corpus "
             f"(leakage rule dropped {ctx.manifest['leakage']['dropped_total']} training pairs).",
             "Main scores: " + "; ".join(f"{t} = {get_task(t).main_score}" for t in tasks) + ".",
             "n/a: the task needs one shared encoder to fine-tune; the method's model has language-specific encoders."]
    cols = ["method"] + [c for t in tasks for c in (t, f"{t} per seed")]
    return Table("leaderboard", f"Cross-paper leaderboard, scale '{ctx.scale}' (main score, mean over seeds)", cols,
                 rows, notes)


def figure(ctx: ReportContext, values: dict, out: Path) -> list[Path]:
    tasks, methods = ctx.cfg["tasks"], list(values)
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(tasks) * len(methods) / 2), 3.4))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        xs = np.arange(len(tasks)) + (i - (len(methods) - 1) / 2) * width
        for x, t in zip(xs, tasks):
            v = values[m][t]
            if v is None:
                continue
            ax.bar(x, mean(v), width, color=f"C{i}", label=METHODS[m].label if t == next(
                t2 for t2 in tasks if values[m][t2] is not None) else None)
            ax.plot([x] * len(v), v, "k.", markersize=3)
    ax.set_xticks(np.arange(len(tasks)), tasks, fontsize=8)
    ax.set_ylabel("main score")
    ax.set_title(f"Leaderboard, scale '{ctx.scale}': bars = mean over seeds, dots = seeds", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return save(fig, out / "leaderboard")


def build(ctx: ReportContext):
    values = scores(ctx)
    return [table(ctx, values)], {"leaderboard": lambda out: figure(ctx, values, out)}


def options(p: argparse.ArgumentParser) -> None:
    for key in ("methods", "tasks", "seeds"):
        p.add_argument(f"--{key}", default=None, help=f"comma-separated {key} (the workflow's, when it restricts them)")


def adjust(cfg: dict, a: argparse.Namespace) -> None:
    for key in ("methods", "tasks"):
        if getattr(a, key):
            cfg[key] = getattr(a, key).split(",")
    if a.seeds:
        cfg["seeds"] = [int(s) for s in a.seeds.split(",")]


if __name__ == "__main__":
    main("leaderboard", "Leaderboard", load_leaderboard_config, registry, build, None, options=options, adjust=adjust)
