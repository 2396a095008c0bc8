"""A difference between two methods against training steps (where a claim stays inconclusive, a
measured curve shows whether more training would open the gap).

Each method's snapshots are evaluated with ``python -m common.eval --out-dir <dir>/seed<N>/step<S>`` (the trainer's
``--snapshot_steps``; the last step is the finished model), and at every step the difference B - A is paired by seed
with the claims' interval (:func:`common.report.claims.paired_difference`: with one seed, the test items' part only).
Language groups narrow a multilingual task's metric to a subset (``--group "seven=spa fra deu"``), to a training
source's languages from the corpus manifest (``--group "ntrex128 alone"``,
:func:`common.data.manifest.source_languages`) or leave it whole (``--group all``)::

    python -m common.report.gap_curve --task tatoeba@cosine --a TR=runs/tr --b DAP=runs/dap \\
        --steps 300 600 900 1200 --manifest corpus/manifest.json --group all --group "ntrex128 alone" \\
        --out figures/dap/calibration/dap_minus_tr

writes ``<out>.md``, ``.csv`` and ``.tex`` (a table: step, group, A, B, B - A, each seed's, interval, seeds, verdict),
``<out>.json``
and ``<out>.png``/``.pdf`` (B - A against steps, a panel per group, the interval as a band).

Several ``--task`` make one metric, their weighted mean on the same resamples of every task's items
(:class:`common.report.claims.Combined`, as VMSST's Score; ``--weight`` per task, a number or a fraction, equal when
left out; ``--metric`` names it in the table)::

    python -m common.report.gap_curve --task sts-en@years-pearson --weight 1/6 --task sts17@pearson --weight 1/6 ... \\
        --metric Score --a BiTranslation=gap/bitranslation --b VMSST=gap/vmsst --steps 500 1000 --out ...
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from common.data.manifest import load_manifest, source_languages
from common.eval.results import read_result
from common.eval.tasks import get_task
from common.io import write_json
from common.report.claims import Combined, ItemMetric, item_metric, paired_difference, verdict
from common.report.tables import Table, write_table

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GapPoint:
    step: int
    group: str
    a: float  # mean over seeds of A's metric on the group
    b: float
    diff: float  # mean over paired seeds of B - A
    lo: float
    hi: float
    seeds: int
    verdict: str
    per_seed: tuple[float, ...] = ()  # B - A of each paired seed, in seed order


def seed_dirs(root: Path) -> dict[int, Path]:
    """``<root>/seed<N>`` folders by seed id."""
    found = {int(p.name.removeprefix("seed")): p for p in root.glob("seed*") if p.name.removeprefix("seed").isdigit()}
    if not found:
        raise FileNotFoundError(f"{root}: no seed<N>/ folders of snapshot evaluations")
    return dict(sorted(found.items()))


def scores_at(root: Path, task: str, step: int) -> dict[int, dict[str, Any]]:
    """Seed id -> the task's scores at ``step`` (``<root>/seed<N>/step<S>/<task>.json``), each file read once."""
    out = {}
    for seed, folder in seed_dirs(root).items():
        path = folder / f"step{step}" / f"{task}.json"
        if not path.exists():
            raise FileNotFoundError(f"{path}: seed {seed} has no evaluation at step {step}")
        out[seed] = read_result(path).scores
    return out


def resolve_groups(specs: Sequence[str], manifest: dict[str, Any] | None) -> dict[str, list[str] | None]:
    """``all`` -> None (every language); ``name=l1 l2 ...`` -> those; a manifest source group by its name."""
    sources = source_languages(manifest) if manifest else {}
    groups: dict[str, list[str] | None] = {}
    for spec in specs:
        if spec == "all":
            groups["all"] = None
        elif "=" in spec:
            name, langs = spec.split("=", 1)
            groups[name.strip()] = langs.split()
        elif spec in sources:
            groups[spec] = sources[spec]
        else:
            known = ", ".join(sources) or "none: pass --manifest"
            raise ValueError(f"group {spec!r}: not 'all', not 'name=languages', not a source group ({known})")
    return groups


def metrics_at(root: Path, tasks: Sequence[str], weights: Sequence[float], step: int,
               groups: dict[str, list[str] | None]) -> dict[str, dict[int, ItemMetric]]:
    """Group -> seed id -> the metric at ``step``: the one task's, or the ``weights``-weighted mean of the tasks'
    on the same resample of every task's items."""
    per_task = [(get_task(t).type, scores_at(root, t, step)) for t in tasks]
    seeds = sorted(set.intersection(*(set(sc) for _, sc in per_task)))
    out: dict[str, dict[int, ItemMetric]] = {}
    for name, langs in groups.items():
        parts = {s: [item_metric(kind, sc[s], langs) for kind, sc in per_task] for s in seeds}
        out[name] = {s: p[0] if len(tasks) == 1 else Combined(p, weights) for s, p in parts.items()}
    return out


def gap_curve(task: str | Sequence[str], a: Path, b: Path, steps: Sequence[int], groups: dict[str, list[str] | None],
              replicates: int = 1000, weights: Sequence[float] | None = None) -> list[GapPoint]:
    """B - A at every step and group; ``task``: one task id, or several with ``weights`` (:func:`metrics_at`)."""
    tasks = [task] if isinstance(task, str) else list(task)
    if weights is not None and len(weights) != len(tasks):
        raise ValueError(f"{len(weights)} weights for {len(tasks)} tasks ({', '.join(tasks)})")
    w = list(weights) if weights is not None else [1 / len(tasks)] * len(tasks)
    points = []
    for step in steps:
        at_a, at_b = metrics_at(a, tasks, w, step, groups), metrics_at(b, tasks, w, step, groups)
        for name in groups:
            ma, mb = at_a[name], at_b[name]
            d = paired_difference(ma, mb, replicates=replicates)
            shared = sorted(ma.keys() & mb.keys())
            va, vb = [ma[s].value() for s in shared], [mb[s].value() for s in shared]
            mean_a, mean_b = sum(va) / len(va), sum(vb) / len(vb)
            each = tuple(y - x for x, y in zip(va, vb))
            points.append(GapPoint(step, name, mean_a, mean_b, d.mean, d.lo, d.hi, d.seeds, verdict(d), each))
            log.info("step %d %s: %.2f -> %.2f, %+.2f [%.2f, %.2f]", step, name, mean_a, mean_b, d.mean, d.lo, d.hi)
    return points


def table(points: list[GapPoint], task: str, label_a: str, label_b: str, name: str,
          notes: Sequence[str] = ()) -> Table:
    """The points as a report table (:func:`common.report.tables.write_table` writes it); ``notes``: the paper's
    own difference, to stand beside ours."""
    rows: list[list[Any]] = [[f"{p.step:,}", p.group, p.a, p.b, p.diff, " / ".join(f"{x:.1f}" for x in p.per_seed),
                              f"[{p.lo:.1f}, {p.hi:.1f}]", p.seeds, p.verdict] for p in points]
    return Table(name, f"{label_b} − {label_a} against training steps, {task}",
                 ["step", "languages", label_a, label_b, f"{label_b} − {label_a}", "per seed", "95% CI", "seeds",
                  "verdict"], rows,
                 ["Interval and verdict: common/report/claims.py (paired by seed; one seed: the test items' part "
                  "only, which says nothing of another seed). Made by common/report/gap_curve.py.", *notes])


def figure(points: list[GapPoint], task: str, label_a: str, label_b: str, out: Path) -> list[Path]:
    from common.report.figures import plt, save

    groups = list(dict.fromkeys(p.group for p in points))
    fig, axes = plt.subplots(1, len(groups), figsize=(3.0 * len(groups), 2.8), layout="constrained", squeeze=False)
    for ax, g in zip(axes[0], groups):
        line = [p for p in points if p.group == g]
        steps = [p.step for p in line]
        ax.fill_between(steps, [p.lo for p in line], [p.hi for p in line], alpha=0.25, color="C0")
        ax.plot(steps, [p.diff for p in line], marker="o", ms=3, color="C0")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_title(g, fontsize=9)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"{label_b} − {label_a}, {task}")
    return save(fig, out)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", action="append", required=True,
                    help="a registered task id (the snapshot JSONs' file name); several: their weighted mean")
    ap.add_argument("--weight", type=lambda x: float(Fraction(x)), action="append",
                    help="one per --task, in order, a number or a fraction such as 1/6 (default: equal)")
    ap.add_argument("--metric", help="the metric's name in the table (default: the task id, or the ids joined)")
    ap.add_argument("--a", required=True, help="LABEL=folder of the baseline's seed<N>/step<S>/ evaluations")
    ap.add_argument("--b", required=True, help="LABEL=folder of the compared method's")
    ap.add_argument("--steps", type=int, nargs="+", required=True)
    ap.add_argument("--group", action="append", default=[], help="'all', 'name=l1 l2 ...' or a source group")
    ap.add_argument("--manifest", help="corpus manifest.json (for source groups)")
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--note", action="append", default=[], help="a note under the table: the paper's number")
    ap.add_argument("--out", required=True, help="output path without suffix")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    (label_a, dir_a), (label_b, dir_b) = (s.split("=", 1) for s in (args.a, args.b))
    groups = resolve_groups(args.group or ["all"], load_manifest(args.manifest) if args.manifest else None)
    points = gap_curve(args.task, Path(dir_a), Path(dir_b), args.steps, groups, args.replicates, args.weight)
    metric = args.metric or " + ".join(args.task)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_table(table(points, metric, label_a, label_b, out.name, args.note), out.parent)
    write_json(out.with_suffix(".json"), {"task": metric, "tasks": args.task, "weights": args.weight, "a": label_a,
                                          "b": label_b, "groups": groups, "points": [asdict(p) for p in points]})
    figure(points, metric, label_a, label_b, out)


if __name__ == "__main__":
    main()
