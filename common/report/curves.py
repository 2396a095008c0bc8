"""Learning curves: a paper's headline metric against training steps for its main methods, every seed a
line, so that a reader sees whether a run converged. The config's ``learning_curve`` names the methods, the steps
(the trainer saves a snapshot there: ``--snapshot_steps``) and the task; the workflow evaluates each snapshot
(``common/workflow/rules/evaluate.smk``, rule ``learning_curve_point``), the final model is the run's own
evaluation and step 0 the untrained encoder's (the ``init`` run) where the registry has one."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.eval.results import read_result

if TYPE_CHECKING:
    from common.report.context import ReportContext
    from common.runs import RunRegistry

FIGURE = "figure_learning_curve"


def point_path(results: Path | str, init: str, method: str, seed: int, step: int, task: str) -> str:
    """Where the workflow writes a snapshot's results JSON."""
    return f"{results}/curve/{init}/{method}/seed{seed}/step{step}/{task}.json"


def curve_steps(cfg: dict[str, Any]) -> list[int]:
    """The configured snapshot steps before the run's last (the last point is the run's own evaluation)."""
    return [s for s in cfg["learning_curve"]["steps"] if s < int(cfg["training"]["max_steps"])]


def on_curve(cfg: dict[str, Any], method: str, init: str) -> bool:
    """Whether run (method, init) is drawn: a curve method on the first encoder setting."""
    curve = cfg.get("learning_curve")
    return bool(curve and method in curve["methods"] and init == next(iter(cfg["encoders"])))


def point_paths(cfg: dict[str, Any], registry: RunRegistry, results: str) -> list[str]:
    """Every snapshot evaluation the figure reads (the workflow's targets)."""
    if not cfg.get("learning_curve"):
        return []
    task = cfg["learning_curve"]["task"]
    return [point_path(results, r.init, r.method, r.seed, s, task) for r in registry if on_curve(cfg, r.method, r.init)
            for s in curve_steps(cfg)]


def curve_points(ctx: ReportContext) -> dict[tuple[str, int], list[tuple[int, float]]]:
    """(method, seed) -> [(step, the task's main score)] from step 0 (where known) to the run's last step."""
    spec = ctx.cfg["learning_curve"]
    init, task = next(iter(ctx.cfg["encoders"])), spec["task"]
    store, last = ctx.store, int(ctx.cfg["training"]["max_steps"])
    steps = curve_steps(ctx.cfg)
    # step 0: the untrained run (``init``) of the same seed where it has one (a random init differs per seed), else
    # its first seed's (a pretrained encoder is the same on every seed)
    scored = {r.seed for r in store.registry if r.method == "init" and r.init == init and task in r.tasks}
    out: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for method in spec["methods"]:
        for seed in store.registry.seeds(method, init):
            start = [] if not scored else [
                (0, store.values("init", task, "main_score", init, [seed if seed in scored else min(scored)])[0])]
            points = [(s, read_result(point_path(ctx.results, init, method, seed, s, task)).scores["main_score"])
                      for s in steps]
            final = store.values(method, task, "main_score", init, [seed])[0]
            out[(method, seed)] = [*start, *points, (last, final)]
    return out


def learning_curve_figure(ctx: ReportContext, out: Path, labels: dict[str, str] | None = None) -> list[Path]:
    """The figure: one panel, a colour per method, a line per seed."""
    from common.report.figures import plt, save  # matplotlib only where a figure is drawn (the rules import this)

    points = curve_points(ctx)
    task = ctx.cfg["learning_curve"]["task"]
    fig, ax = plt.subplots(figsize=(5.5, 3.4), layout="constrained")
    colours = {m: f"C{i}" for i, m in enumerate(ctx.cfg["learning_curve"]["methods"])}
    for (method, seed), line in sorted(points.items()):
        ax.plot(*zip(*line), marker="o", ms=3, color=colours[method], alpha=0.8,
                label=f"{(labels or {}).get(method, method)}" if seed == min(s for m, s in points if m == method)
                else None)
    ax.set_xlabel("training step")
    ax.set_ylabel(task)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(f"Learning curves, scale '{ctx.scale}' (a line per seed)", fontsize=9)
    return save(fig, out / FIGURE)
