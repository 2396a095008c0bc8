"""The census: what every paper-scale training job needs, counted from the code, before anything is submitted.

    snakemake census --cores 2                         # all four papers -> figures/census/paper.{md,json}
    python -m common.census --papers dap --out figures/census/paper

For each training job of a paper's run registry at paper scale (runs that differ only by seed are one row, their
count in ``seeds``): the step counted by :mod:`common.census.probe` at two batch sizes, scaled to the job's per-GPU
micro batch and steps by :mod:`common.census.estimate`; memory per GPU against the GPU's memory (``fits``), wall time
and GPU-hours on A100 and H100 at the stated MFU, and the paper's reported compute beside the sum. The JSON is what
the workflow reads for the paper-scale train rules' ``runtime``, ``mem_mb`` and GPU count
(:func:`common.workflow.launch.census_resources`), so the Slurm profile and the census cannot disagree.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import tempfile
import time
from pathlib import Path

from common.census import estimate as est
from common.census.crosscheck import crosschecks
from common.census.probe import count_step, probe_corpus
from common.config import load_config
from common.io import atomic_write, write_json

log = logging.getLogger(__name__)
PAPERS = ["moco", "hictl", "vmsst", "dap"]
PROBE_ROWS = (2, 4)  # two batch sizes for the fits (DAP's "both" needs two rows, queues divide by them)
# what each paper reports about its compute (the papers' own words; docs: shared/papers)
REPORTED = {"moco": ("4 V100, about 15 hours (section 3.1)", 60.0),
            "hictl": ("8 V100 (section 4.1); time not reported", None),
            "vmsst": ("a TPU v3 pod slice of 128 chips for a few days (section 6.4); not in GPU-hours", None),
            "dap": ("8 V100 for 1 day (section 4.2)", 192.0)}


def job_rows(paper: str, mfu: float, data_root: str) -> list[dict]:
    cfg = load_config(paper, "paper")
    registry = importlib.import_module(f"papers.{paper}.runs").registry(cfg)
    groups: dict[tuple[str, str], list] = {}
    for run in registry:
        groups.setdefault((run.init, run.method), []).append(run)
    t = cfg["training"]
    gpus, nodes = int(t.get("gpus", 1)), int(t.get("nodes", 1))
    ranks = max(1, gpus) * nodes
    rows = []
    with tempfile.TemporaryDirectory(prefix="census-") as tmp:
        manifest = probe_corpus(paper, Path(tmp), data_root)
        for (init, method), runs in groups.items():
            t0 = time.time()
            row = {"paper": paper, "job": f"{init}/{method}", "seeds": len(runs), "gpus": gpus, "nodes": nodes}
            try:
                counts = [count_step(paper, cfg, runs[0], n, manifest, Path(tmp) / f"{init}.{method}.{n}")
                          for n in PROBE_ROWS]
            except Exception as exc:  # a job the probe cannot build is listed with the reason, not dropped
                log.exception("census of %s/%s failed", paper, row["job"])
                rows.append({**row, "error": f"{type(exc).__name__}: {exc}"})
                continue
            row.update(_needs(counts, ranks, mfu))
            log.info("%s %s: %.1f GiB per GPU, %.0f A100-hours (%.0f s)", paper, row["job"],
                     row["memory_per_gpu_gib"], row["gpu_hours"]["a100"], time.time() - t0)
            rows.append(row)
    return rows


def _needs(counts, ranks: int, mfu: float) -> dict:
    c = counts[-1]
    training = c.training
    steps, batch = int(training["max_steps"]), int(training["global_batch_size"])
    micro = batch / ranks
    flops = est.Linear.through(PROBE_ROWS, (counts[0].flops, counts[1].flops))
    acts = est.Linear.through(PROBE_ROWS, (counts[0].activation_bytes, counts[1].activation_bytes))
    opt = est.optimizer_bytes(training.get("optimizer", "adamw"), c.trainable_params, c.matrix_shapes,
                              c.matrix_params)
    states = est.model_state_bytes(c.params, c.trainable_params, opt, int(training.get("zero_stage", 0)), ranks)
    per_gpu = sum(states.values()) + acts.at(micro)
    step_flops = flops.per_row * batch + flops.fixed * ranks
    run_flops = step_flops * steps
    hours = {k: est.wall_hours(run_flops, ranks, g, mfu) for k, g in est.GPUS.items()}
    return {"params": c.params, "trainable_params": c.trainable_params, "precision": training.get("precision"),
            "zero_stage": int(training.get("zero_stage", 0)), "optimizer": training.get("optimizer", "adamw"),
            "max_length": int(training["max_length"]), "global_batch": batch, "micro_batch_per_gpu": micro,
            "steps": steps, "pairs_seen": batch * steps,
            "model_states_gib": {k: v / est.GIB for k, v in states.items()},
            "activations_gib": acts.at(micro) / est.GIB, "memory_per_gpu_gib": per_gpu / est.GIB,
            "fits": {k: per_gpu / est.GIB <= g.memory_gib for k, g in est.GPUS.items()},
            "flops_per_step": step_flops, "flops_run": run_flops, "wall_hours": hours,
            "gpu_hours": {k: h * ranks for k, h in hours.items()},
            "checkpoint_disk_gib": est.checkpoint_disk_bytes(c.params, opt, int(training.get("keep_checkpoints", 2)))
            / est.GIB,
            "runtime_minutes": est.runtime_minutes(hours["a100"]), "mem_mb": est.host_mem_mb(c.params, ranks)}


def markdown(rows: list[dict], mfu: float, checks: dict) -> str:
    lines = ["# Census of the paper-scale training jobs", "",
             "Written by `python -m common.census` (`snakemake census`) from the code: each paper's recipe builds its "
             "model at the paper's size, one step is counted (FlopCounterMode; the bytes autograd saves), and "
             f"`common/census/estimate.py` scales it. Wall time at MFU {mfu:.0%} of the dense bf16 peak (A100 "
             "312, H100 989 TFLOP/s). GPU-hours count every seed of a row. Evaluation, corpus and NMT jobs are not "
             "counted here (their resources come from each paper's config).", ""]
    for paper in PAPERS:
        mine = [r for r in rows if r["paper"] == paper]
        if not mine:
            continue
        ok = [r for r in mine if "error" not in r]
        total = {k: sum(r["gpu_hours"][k] * r["seeds"] for r in ok) for k in est.GPUS}
        said, hours = REPORTED[paper]
        lines += [f"## {paper}", "",
                  f"GPU-hours of all {sum(r['seeds'] for r in mine)} training jobs: **{total['a100']:,.0f} A100-hours"
                  f"**, {total['h100']:,.0f} H100-hours. The paper: {said}"
                  + (f" = {hours:g} V100-hours for its main model." if hours else "."), "",
                  "| job | seeds | params (M) | GPUs | micro batch / GPU | memory / GPU (GiB): states + activations "
                  "| fits 80 GB | TFLOP / step | A100 h (wall) | H100 h (wall) | checkpoints (GiB) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in mine:
            if "error" in r:
                lines.append(f"| {r['job']} | {r['seeds']} | not counted: {r['error'][:120]} |||||||||")
                continue
            states = sum(r["model_states_gib"].values())
            lines.append(
                f"| {r['job']} | {r['seeds']} | {r['params'] / 1e6:,.0f} | {r['gpus'] * r['nodes']} | "
                f"{r['micro_batch_per_gpu']:g} | {r['memory_per_gpu_gib']:.1f} = {states:.1f} + "
                f"{r['activations_gib']:.1f} | {'yes' if r['fits']['a100'] else '**no**'} | "
                f"{r['flops_per_step'] / 1e12:,.1f} | {r['wall_hours']['a100']:,.1f} | {r['wall_hours']['h100']:,.1f} "
                f"| {r['checkpoint_disk_gib']:.1f} |")
        lines.append("")
    lines += ["## Cross-checks", "", *checks["lines"], ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--papers", nargs="+", default=PAPERS, choices=PAPERS)
    p.add_argument("--mfu", type=float, default=est.DEFAULT_MFU)
    p.add_argument("--data-root", default="../shared/data", help="unused by the synthetic probe corpora")
    p.add_argument("--out", default="figures/census/paper", help="writes <out>.md and <out>.json")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    rows = [r for paper in a.papers for r in job_rows(paper, a.mfu, a.data_root)]
    checks = crosschecks()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out.with_suffix(".json"), {"mfu": a.mfu, "gpus": {k: vars(g) for k, g in est.GPUS.items()},
                                          "jobs": rows, "crosschecks": checks["values"]})
    with atomic_write(out.with_suffix(".md")) as fh:
        fh.write(markdown(rows, a.mfu, checks))
    log.info("census of %d jobs -> %s.md", len(rows), out)


if __name__ == "__main__":
    main()
