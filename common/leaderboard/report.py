"""The leaderboard table and figure: methods x tasks, each cell the task's main score.

Every method was trained on the same corpus, from the same initial encoder, with the same steps,
batch and seeds (``config/<scale>.yaml``), and scored by the same registered tasks, so a column
compares methods on equal terms. A cell is the mean over seeds of the task's main score, its 95 % bootstrap
interval resampling seeds and test items jointly (:func:`common.report.claims.bootstrap`, the claims tables'
procedure) and the per-seed values; "n/a" marks a task that does not apply to a method's model (XNLI
fine-tunes one shared encoder, which MoCo-BERT's language-specific pair is not).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from common.config import load_leaderboard_config
from common.eval.tasks import get_task
from common.leaderboard.methods import METHODS, method, registry
from common.report.claims import Difference, bootstrap, item_metric
from common.report.cli import ReportContext, main
from common.report.figures import plt, save
from common.report.tables import Table


def cell(task: str, seeds: list[dict]) -> Difference:
    """The main score of ``task`` over the seeds' results (``scores`` of each JSON) with its interval. The
    item-level metric must reproduce every seed's main score, or the interval would describe another number;
    the tolerance admits the evaluators' float32 sums, not another quantity (an STS aggregation other than
    wmean, another split)."""
    metrics = [item_metric(get_task(task).type, s) for s in seeds]
    for i, (m, s) in enumerate(zip(metrics, seeds)):
        if abs(m.value() - s["main_score"]) > 1e-3:
            raise ValueError(f"{task}: the item-level metric of seed index {i} gives {m.value()}, its main score "
                             f"is {s['main_score']}")
    return bootstrap(metrics)


def scores(ctx: ReportContext) -> dict[str, dict[str, tuple[Difference, list[float]] | None]]:
    """method -> task -> (mean with interval, main score of every seed); None: the task does not apply."""
    out: dict[str, dict[str, tuple[Difference, list[float]] | None]] = {}
    init = ctx.store.registry.inits()[0]
    for m in ctx.cfg["methods"]:
        out[m] = {}
        for t in ctx.cfg["tasks"]:
            if not get_task(t).applies_to(method(m).embedder):
                out[m][t] = None
                continue
            seeds = ctx.store.scores(m, t, init)
            out[m][t] = cell(t, seeds), [s["main_score"] for s in seeds]
    return out


def table(ctx: ReportContext, values: dict) -> Table:
    tasks = ctx.cfg["tasks"]
    rows = []
    for m, per_task in values.items():
        cells = []
        for t in tasks:
            if per_task[t] is None:
                cells += ["n/a"] * 3
                continue
            d, per_seed = per_task[t]
            cells += [d.mean, f"[{d.lo:.1f}, {d.hi:.1f}]", " / ".join(f"{x:.1f}" for x in per_seed)]
        rows.append([METHODS[m].label, *cells])
    notes = [f"Scale '{ctx.scale}': {ctx.cfg['description'].strip()}",
             f"Every method: encoder '{next(iter(ctx.cfg['encoders']))}', {ctx.cfg['training']['max_steps']} steps x "
             f"{ctx.cfg['training']['global_batch_size']} pairs, seeds {ctx.cfg['seeds']}, the same corpus "
             f"(leakage rule dropped {ctx.manifest['leakage']['dropped_total']} training pairs).",
             "Main scores: " + "; ".join(f"{t} = {get_task(t).main_score}" for t in tasks) + ".",
             "95% CI: percentile bootstrap (1000 replicates) resampling seeds and test items jointly, as in the "
             "papers' claims tables; two methods whose intervals overlap may still differ (a paired comparison "
             "is tighter).",
             "n/a: the task needs one shared encoder to fine-tune; the method's model has language-specific encoders."]
    cols = ["method"] + [c for t in tasks for c in (t, f"{t} 95% CI", f"{t} per seed")]
    return Table("leaderboard", f"Cross-paper leaderboard, scale '{ctx.scale}' (main score, mean over seeds)", cols,
                 rows, notes)


def figure(ctx: ReportContext, values: dict, out: Path) -> list[Path]:
    tasks, methods = ctx.cfg["tasks"], list(values)
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(tasks) * len(methods) / 2), 3.4))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        xs = np.arange(len(tasks)) + (i - (len(methods) - 1) / 2) * width
        for x, t in zip(xs, tasks):
            if values[m][t] is None:
                continue
            d, per_seed = values[m][t]
            ax.bar(x, d.mean, width, color=f"C{i}", label=METHODS[m].label if t == next(
                t2 for t2 in tasks if values[m][t2] is not None) else None)
            ax.errorbar(x, d.mean, yerr=[[d.mean - d.lo], [d.hi - d.mean]], fmt="none", ecolor="k", capsize=2, lw=0.8)
            ax.plot([x] * len(per_seed), per_seed, "k.", markersize=3)
    ax.set_xticks(np.arange(len(tasks)), tasks, fontsize=8)
    ax.set_ylabel("main score")
    ax.set_title(f"Leaderboard, scale '{ctx.scale}': bars = mean over seeds, whiskers = 95 % CI, "
                 "dots = seeds", fontsize=9)
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
