"""The census: what every paper-scale job needs, counted from the code, before anything is submitted.

    snakemake census --cores 2                         # all four papers -> figures/census/paper.{md,json}
    python -m common.census --papers dap --out figures/census/paper

For each training job of a paper's run registry at paper scale (runs that differ only by seed are one row, their
count in ``seeds``): the step counted by :mod:`common.census.probe` at two batch sizes and kept as fits
(:data:`COUNTED`; a later census shapes and prices the row again without a new count), its GPUs
(``training.job_gpus``: the fewest whose memory holds the global batch at one micro batch,
:mod:`common.census.shape`, or the config's; a run that only saves its encoder: its parameters on its one rank, no
step; :func:`common.runs.placement`), scaled to the job's per-GPU micro batch and steps by
:mod:`common.census.estimate`; memory per GPU against the GPU's memory (``fits``), wall time and GPU-hours on A100
and H100 at the job's MFU (measured for its recipe at its shape, else assumed: :mod:`common.census.measured`), its
Slurm limit and resubmissions, and the paper's reported compute beside the sum. The JSON is what the workflow reads
for the paper-scale train and evaluation rules' ``runtime``, ``mem_mb`` and GPU count
(:func:`common.workflow.launch.train_resources`, :func:`common.workflow.launch.job_census_gpus`), so the Slurm
profile and the census cannot disagree. HICTL's NMT jobs are counted by :mod:`common.census.nmt`, every paper's
evaluation jobs by :mod:`common.census.evaluation`, its corpus job by :mod:`common.census.corpus`.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from common.census import checkpointing, corpus, evaluation, measured, shape
from common.census import estimate as est
from common.census.crosscheck import crosschecks, describe
from common.census.probe import StepCount, TooLargeHere, count_parameters, count_steps, probe_corpus, recipe_of
from common.config import ROOT, ConfigError, load_config, load_yaml, papers
from common.io import atomic_write, read_json, write_json
from common.runs import Run, gpus_source, placement, saves_only

log = logging.getLogger(__name__)
PAPERS = papers("paper")  # every paper with a paper-scale config
# two batch sizes for the fits: (1, 2), or (2, 4) for a job that cannot take one row (DAP's "both" direction
# splits the batch in two halves)
PROBE_ROWS = ((1, 2), (2, 4))


def reported_compute(paper: str) -> tuple[str, float | None]:
    """What the paper reports about its compute, in its own words, and as V100-hours where it says
    (``compute`` in ``papers/<p>/reported.yaml``)."""
    path = ROOT / "papers" / paper / "reported.yaml"
    said = load_yaml(path).get("compute")
    if not isinstance(said, dict) or not {"said", "v100_hours"} <= said.keys():
        raise ConfigError(f"{path}: no 'compute: {{said: ..., v100_hours: ...}}' (what the paper reports about its "
                          "compute, quoted by the census)")
    return said["said"], said["v100_hours"]


def job_rows(paper: str, mfu: float, data_root: str, done: dict[str, dict[str, Any]],
             save: Callable[[list[dict[str, Any]]], None], figures: Path = measured.FIGURES) -> list[dict[str, Any]]:
    """The census rows of a paper's training jobs; ``done`` (job -> row of an earlier census run) keep what was
    counted (:data:`COUNTED`) and are shaped and priced again, and ``save(rows)`` is called after each new row (a
    long census resumes where it stopped). ``mfu``: the assumed MFU, for a job without a measurement under
    ``figures`` (:func:`common.census.measured.job_mfu`)."""
    cfg = load_config(paper, "paper")
    registry = importlib.import_module(f"papers.{paper}.runs").registry(cfg)
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in registry:
        groups.setdefault((run.init, run.method), []).append(run)
    t = {"gpus": 1, **cfg["training"]}  # a config without ``gpus`` is counted on one GPU
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="census-") as tmp:
        manifest = probe_corpus(paper, Path(tmp), data_root, cfg.get("census", {}).get("languages"))
        for (init, method), runs in groups.items():
            t0 = time.time()
            job = f"{init}/{method}"
            earlier = done.get(job)
            chosen, by_mode = counts_by_checkpointing(
                t, method, earlier,
                functools.partial(_count_job, paper, cfg, runs[0], manifest, Path(tmp) / f"{init}.{method}"),
                functools.partial(_shape_counted, method=method,
                                  mfu_at=functools.partial(_job_mfu, paper, job, mfu, figures)))
            counted = by_mode[chosen]["counted"]
            if earlier is not None and ({"not_counted", "error"} & counted.keys()):
                # counted in full before (a quieter machine), not now: the earlier row, on the config's GPUs
                log.warning("%s %s: kept from the earlier census (%s)", paper, job,
                            counted.get("not_counted") or counted.get("error"))
                rows.append(kept(earlier, len(runs), counted.get("not_counted") or counted["error"]))
                save(rows)
                continue
            row = {"paper": paper, "job": job, "seeds": len(runs), **by_mode[chosen]["row"]}
            if len(by_mode) > 1:  # the census chose: the choice, each candidate's count (kept for the next census)
                row.update(checkpointing=chosen, counted_by_checkpointing={
                    m: _kept_count(b["counted"]) for m, b in by_mode.items()},
                    checkpointing_candidates={m: {"gpus": b["row"].get("gpus"), "gpus_from": b["row"].get("gpus_from"),
                                                  "a100_hours": b["row"].get("gpu_hours", {}).get("a100")}
                                              for m, b in by_mode.items()})
            log.info("%s %s: %s GPUs (%s), %.1f GiB per GPU, MFU %.1f %% (%s), %.0f A100-hours (%.0f s)", paper, job,
                     row["gpus"], row["gpus_from"], row.get("memory_per_gpu_gib", float("nan")),
                     100 * row.get("mfu", float("nan")), row.get("mfu_source", "-"),
                     row.get("gpu_hours", {}).get("a100", float("nan")), time.time() - t0)
            rows.append(row)
            save(rows)
        if "nmt" in cfg:  # HICTL's fine-tuning jobs (section 4.2)
            from common.census import nmt

            rows += nmt.job_rows(cfg, mfu, Path(tmp) / "nmt", done)
            save(rows)
        rows += evaluation.job_rows(paper, cfg, registry, mfu, Path(tmp) / "eval", done)
        rows.append(corpus.job_row(paper, cfg, data_root))
        save(rows)
    return rows


def _count_job(paper: str, cfg: dict[str, Any], run: Run, manifest: dict[str, Any], work: Path,
               training: dict[str, Any]) -> dict[str, Any]:
    """A job's count under ``training`` (the config's section with one checkpointing mode), in a folder of its mode."""
    mode_cfg = {**cfg, "training": training}
    work = work / str(training.get("gradient_checkpointing"))
    return (_counted(count_parameters(paper, mode_cfg, run, manifest, work)) if saves_only(run.method)
            else _probe(paper, mode_cfg, run, manifest, work))


def _kept_count(counted: dict[str, Any]) -> dict[str, Any]:
    """What a row keeps of a count (:data:`COUNTED`)."""
    return {k: v for k, v in counted.items() if k in COUNTED}


def _shape_counted(counted: dict[str, Any], training: dict[str, Any], method: str,
                   mfu_at: Callable[[float, int], measured.Mfu]) -> dict[str, Any]:
    return shaped(_kept_count(counted), training, method, mfu_at)


def counts_by_checkpointing(t: dict[str, Any], method: str, earlier: dict[str, Any] | None,
                            count: Callable[[dict[str, Any]], dict[str, Any]],
                            shape_row: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]],
                            ) -> tuple[str, dict[str, dict[str, Any]]]:
    """A training job counted under each checkpointing candidate of ``t`` (both under ``auto``, else the config's
    own; a job that only saves its encoder under the config's), an earlier census's count reused where it has one:
    the mode the job takes (:func:`common.census.checkpointing.choose`) and, per mode, ``counted`` (``count``'s,
    the probe) and ``row`` (``shape_row(counted, training)``)."""
    modes = (t.get("gradient_checkpointing", False),) if saves_only(method) else checkpointing.candidates(t)
    by_mode: dict[str, dict[str, Any]] = {}
    for mode in modes:
        training = {**t, "gradient_checkpointing": mode}
        counted = _earlier_count(earlier, mode, len(modes) > 1)
        if counted is None or not reusable(counted, method):
            counted = count(training)
        by_mode[str(mode)] = {"counted": counted, "row": shape_row(counted, training)}
    chosen = checkpointing.choose({m: v["row"] for m, v in by_mode.items()}) if len(modes) > 1 else str(modes[0])
    return chosen, by_mode


def _earlier_count(earlier: dict[str, Any] | None, mode: Any, chosen_by_census: bool) -> dict[str, Any] | None:
    """An earlier census's count of a job under checkpointing ``mode``: its row where the config named the mode (and
    the row was counted under it; a row from before rows named their mode counts as the config's), the row's count of
    that candidate where the census chose (``auto``); None where it has none."""
    if earlier is None:
        return None
    if not chosen_by_census:
        same = earlier.get("counted_checkpointing", str(mode)) == str(mode)
        return earlier if same and "counted_by_checkpointing" not in earlier else None
    count: dict[str, Any] | None = earlier.get("counted_by_checkpointing", {}).get(str(mode))
    return count


def _job_mfu(paper: str, job: str, assumed: float, figures: Path, rows: float, length: int) -> measured.Mfu:
    return measured.job_mfu(paper, job, rows, length, assumed, figures)


def kept(earlier: dict[str, Any], seeds: int, why: str) -> dict[str, Any]:
    """An earlier census's row of a job counted on the config's GPUs, kept where it cannot be counted now (``why``):
    its Slurm limit and resubmissions under today's rule (:func:`common.census.estimate.runtime_minutes`)."""
    row = {**earlier, "seeds": seeds, "gpus_from": "paper", "kept_from_earlier": why}
    if "wall_hours" in row:
        hours = row["wall_hours"]["a100"]
        row["runtime_minutes"] = est.runtime_minutes(hours)
        row["resubmissions"] = est.resubmissions(hours, row["runtime_minutes"])
    return row


# What a training job's row keeps from its count (the rest follows from these, its shape and its MFU: :func:`shaped`)
COUNTED = ("params", "trainable_params", "optimizer_bytes", "precision", "zero_stage", "optimizer", "max_length",
           "global_batch", "micro_batch_cap", "steps", "pairs_seen", "keep_checkpoints", "activation_fit", "flops_fit",
           "step_counted_as", "too_large_here", "not_counted", "error", "counted_checkpointing")


def reusable(row: dict[str, Any], method: str) -> bool:
    """Whether an earlier census's row holds its count (its fits; a saved-only job's parameter counts), so that it
    is shaped and priced again without a new probe."""
    return "optimizer_bytes" in row and (saves_only(method) or "activation_fit" in row)


def _probe(paper: str, cfg: dict[str, Any], run: Run, manifest: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """A job's count (:data:`COUNTED`), or what could be counted of it and why not the rest."""
    for probe_rows in PROBE_ROWS:
        try:
            counts = count_steps(paper, cfg, run, probe_rows, manifest, workdir / "x".join(map(str, probe_rows)))
            return _counted(counts[-1], counts, probe_rows)
        except TooLargeHere as exc:  # parameters and model states; the step from a run doing the same per pair
            log.warning("%s %s/%s: %s", paper, run.init, run.method, exc)
            same = getattr(recipe_of(paper), "same_step_as", lambda method: None)(run.method)
            if same is None:
                return {**_counted(exc.partial), "not_counted": f"activations and FLOPs: {exc}"}
            try:
                counts = count_steps(paper, cfg, Run(same, run.init, run.seed), probe_rows, manifest,
                                     workdir / "same" / "x".join(map(str, probe_rows)))
                hidden = int(cfg["encoders"][run.init]["hidden_size"])
                fixed = routed_extra_bytes(exc.partial, counts[-1], 0, hidden)
                extra = est.Linear(fixed, routed_extra_bytes(exc.partial, counts[-1], 1, hidden) - fixed)
            except Exception as inner:  # noqa: BLE001 - the row keeps what was counted and says why not the rest
                log.exception("census of %s's stand-in %s/%s failed", run.method, run.init, same)
                return {**_counted(exc.partial),
                        "not_counted": f"activations and FLOPs: {exc}; its stand-in {same}: {inner}"}
            return {**_counted(exc.partial, counts, probe_rows, extra), "step_counted_as": f"{run.init}/{same}",
                    "too_large_here": str(exc)}
        except Exception as exc:  # a job the probe cannot build is listed with the reason, not dropped
            log.exception("census of %s %s/%s at %s rows failed", paper, run.init, run.method, probe_rows)
            error = f"{type(exc).__name__}: {exc}"
    return {"error": error}


def routed_extra_bytes(routed: StepCount, stand_in: StepCount, rows: int, hidden: int) -> int:
    """What a routed model's step saves beyond its stand-in's (:func:`_probe`) at ``rows`` pairs per GPU, at most:
    the 16-bit copies that autocast makes of the matrices the routed model has and the stand-in lacks (its other
    encoders and decoders, each visited by some sentence of a paper-scale batch), and per pair the routing's own
    tensors (the scattered encoder outputs and the selected ids; measured at two widths and two lengths:
    24 bytes per hidden unit and 16 per token; allowed: 32 and 24). Measured at a small width, the fixed excess
    was 4 % (four encoders) and 20 % (one encoder and decoder per language) of its bound
    (tests/papers/vmsst/test_variants.py)."""
    copies = {"bf16": 2, "fp16": 2}.get(routed.training.get("precision", "fp32"), 0)
    per_row = 32 * hidden + 24 * int(routed.training["max_length"])
    return copies * max(0, routed.matrix_params - stand_in.matrix_params) + rows * per_row


def _counted(c: StepCount, counts: Sequence[StepCount] = (), probe_rows: tuple[int, int] = (1, 2),
             extra: est.Linear | None = None) -> dict[str, Any]:
    """What a job's row keeps of its count: the parameter counts of its model (``c``), and with ``counts`` (the
    step counted at ``probe_rows``; another run's that does the same work per row where ``extra`` is what the job's
    own step saves beyond it: :func:`_probe`) the activation and FLOP fits, ``fixed + per_row * rows``."""
    training = c.training
    steps, batch = int(training["max_steps"]), int(training["global_batch_size"])
    row = {"params": c.params, "trainable_params": c.trainable_params,
           "optimizer_bytes": est.optimizer_bytes(training.get("optimizer", "adamw"), c.trainable_params,
                                                  c.matrix_shapes, c.matrix_params),
           "precision": training.get("precision"), "zero_stage": int(training.get("zero_stage", 0)),
           "optimizer": training.get("optimizer", "adamw"), "max_length": int(training["max_length"]),
           "global_batch": batch, "micro_batch_cap": int(training.get("micro_batch_per_gpu") or 0), "steps": steps,
           "pairs_seen": batch * steps, "keep_checkpoints": int(training.get("keep_checkpoints", 2)),
           "counted_checkpointing": str(training.get("gradient_checkpointing", False))}
    if counts:
        flops = est.Linear.through(probe_rows, (counts[0].flops, counts[1].flops))
        acts = est.Linear.through(probe_rows, (counts[0].activation_bytes, counts[1].activation_bytes))
        row["flops_fit"] = {"fixed": flops.fixed, "per_row": flops.per_row}
        extra = extra or est.Linear(0.0, 0.0)
        row["activation_fit"] = {"fixed": acts.fixed + extra.fixed, "per_row": acts.per_row + extra.per_row}
    return row


def _micro_batch(global_batch: int, micro_cap: int, ranks: int) -> tuple[int, int]:
    """The per-GPU micro batch and the micro-batches per step, as the trainer splits them
    (``training.micro_batch_per_gpu``: :func:`common.training.trainer.accumulation_steps`)."""
    from common.training.trainer import TrainingArguments, accumulation_steps

    args = TrainingArguments(output_dir="census", max_steps=1, global_batch_size=global_batch, learning_rate=1.0,
                             micro_batch_per_gpu=micro_cap)
    accum = accumulation_steps(args, ranks)
    return global_batch // (ranks * accum), accum


def _state_bytes(counted: dict[str, Any], ranks: int) -> dict[str, int]:
    return est.model_state_bytes(counted["params"], counted["trainable_params"], counted["optimizer_bytes"],
                                 counted["zero_stage"], ranks)


def shaped(counted: dict[str, Any], training: dict[str, Any], method: str,
           mfu_at: Callable[[float, int], measured.Mfu]) -> dict[str, Any]:
    """A training job's row from its count (:data:`COUNTED`): its GPUs (``training.job_gpus``: from memory,
    :func:`common.census.shape.memory_gpus`, or the config's), its micro batch, model states and memory per GPU,
    and its wall time, GPU-hours and Slurm figures at the MFU ``mfu_at(rows per GPU, length)`` gives
    (:func:`common.census.measured.job_mfu`)."""
    row = dict(counted)
    fit = counted.get("activation_fit")
    from_memory = None
    if fit is not None and "optimizer_bytes" in counted:
        acts = est.Linear(fit["fixed"], fit["per_row"])
        from_memory = shape.memory_gpus(counted["global_batch"], lambda n: sum(_state_bytes(counted, n).values()),
                                        acts.at, counted["micro_batch_cap"])
    gpus, nodes = placement(training, method, from_memory)
    row.update(gpus=gpus, nodes=nodes, gpus_from="one rank" if saves_only(method) else
               gpus_source(training, from_memory), paper_gpus=int(training.get("gpus", 0)))
    if "error" in counted:
        return row
    ranks = max(1, gpus) * nodes
    micro, accum = _micro_batch(counted["global_batch"], counted["micro_batch_cap"], ranks) if counted["steps"] \
        else (counted["global_batch"], 1)
    states = _state_bytes(counted, ranks)
    row.update(micro_batch_per_gpu=micro, accumulation_steps=accum, model_states_gib=est.states_gib(states),
               checkpoint_disk_gib=est.checkpoint_disk_bytes(counted["params"], counted["optimizer_bytes"],
                                                             counted["keep_checkpoints"]) / est.GIB,
               mem_mb=est.host_mem_mb(counted["params"], ranks))
    if "not_counted" in counted:
        return row
    at = mfu_at(micro, counted["max_length"])
    if fit is None:  # a job that only saves its encoder: no step, so no activations and no FLOPs
        return {**row, **est.needs(sum(states.values()), 0, 0.0, 0, ranks, at.value, training), "mfu": at.value,
                "mfu_source": at.source}
    flops = est.Linear(counted["flops_fit"]["fixed"], counted["flops_fit"]["per_row"])
    step_flops = flops.per_row * counted["global_batch"] + flops.fixed * ranks * accum
    return {**row, **est.needs(sum(states.values()), est.Linear(fit["fixed"], fit["per_row"]).at(micro), step_flops,
                               counted["steps"], ranks, at.value, training),
            "mfu": at.value, "mfu_source": at.source, "mfu_rung": at.rung}


def _micro(row: dict[str, Any]) -> str:
    """'256', or '256 x 4' for four accumulated micro-batches per step; '-' for a job that takes no step."""
    if row.get("steps") == 0:
        return "-"
    accum = row.get("accumulation_steps", 1)
    return f"{row['micro_batch_per_gpu']:g}" + (f" x {accum}" if accum > 1 else "")


HEADER = ["| job | seeds | params (M) | GPUs | {batch} | memory / GPU (GiB): states + activations | fits 80 GB "
          "| TFLOP / step | {seen} | EFLOP / run | MFU | A100 h (wall) | H100 h (wall) | Slurm limit (min) "
          "| resubmissions | checkpoints (GiB) |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
GPUS_FROM = {"memory": "memory", "paper": "paper's", "config": "config", "one rank": "saves"}


def _gpus(r: dict[str, Any]) -> str:
    """'4 (memory)': the job's GPUs and where the count comes from (:func:`common.runs.gpus_source`); '8 (memory,
    selective)' where the census chose the job's checkpointing (:mod:`common.census.checkpointing`)."""
    notes = [n for n in (GPUS_FROM.get(r.get("gpus_from", ""), ""), r.get("checkpointing", "")) if n]
    return f"{r['gpus'] * r['nodes']}" + (f" ({', '.join(notes)})" if notes else "")


def _mfu(r: dict[str, Any], assumed: float) -> str:
    """'6.2 % (nvidia-h100-80gb-hbm3/mfu-2026-12-05.json)' for a measured MFU, '30 % (assumed)' otherwise."""
    source = r.get("mfu_source", measured.ASSUMED)
    shown = source if source == measured.ASSUMED else "/".join(Path(source).parts[-2:])
    return f"{100 * r.get('mfu', assumed):.3g} % ({shown})"


def _line(r: dict[str, Any], mfu: float = est.DEFAULT_MFU) -> str:
    """A job's table row (``mfu``: the assumed MFU, for a row priced before rows named theirs)."""
    if "error" in r:
        return f"| {r['job']} | {r['seeds']} | not counted: {r['error'][:120]} ||||||||||||||"
    states = r["model_states_gib"]["total"]
    if "not_counted" in r:
        return (f"| {r['job']} | {r['seeds']} | {r['params'] / 1e6:,.0f} | {_gpus(r)} | "
                f"{_micro(r)} | {states:.1f} + activations not counted "
                f"({r['not_counted'].removeprefix('activations and FLOPs: ')}) | "
                f"{'yes' if states <= 80 else '**no**'} (states) | | {r['pairs_seen'] / 1e6:,.1f} | | | | | | "
                f"| {r['checkpoint_disk_gib']:.1f} |")
    bound = " (at most)" if r.get("upper_bound") else ""
    same = f" (step of {r['step_counted_as']}, see below)" if "step_counted_as" in r else ""
    step = r["flops_per_step"] > 0
    return (f"| {r['job']}{same} | {r['seeds']} | {r['params'] / 1e6:,.0f} | {_gpus(r)} | "
            f"{_micro(r)} | {r['memory_per_gpu_gib']:.1f} = {states:.1f} + "
            f"{r['activations_gib']:.1f} | {'yes' if r['fits']['a100'] else '**no**'} | "
            f"{r['flops_per_step'] / 1e12:,.1f} | {r['pairs_seen'] / 1e6:,.1f} | {r['flops_run'] / 1e18:,.2f}{bound} | "
            f"{_mfu(r, mfu) if step else '-'} | {r['wall_hours']['a100']:,.1f} | {r['wall_hours']['h100']:,.1f} | "
            f"{r['runtime_minutes']:,} | {r.get('resubmissions', 0)} | {r['checkpoint_disk_gib']:.1f} |")


def _hours(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {k: sum(r["gpu_hours"][k] * r["seeds"] for r in rows if "gpu_hours" in r) for k in est.GPUS}


def _percent_range(values: list[float]) -> str:
    lo, hi = f"{min(values):.1f}", f"{max(values):.1f}"
    return f"{lo} %" if lo == hi else f"{lo}-{hi} %"


def measured_mfu(root: Path = Path("figures/gpu")) -> list[str]:
    """Sentences on the MFU that the GPU acceptance measured (``figures/gpu/<device>/mfu*.json``, one file per run,
    written by ``scripts/bench_mfu.py`` at DAP's paper shapes) against the census's assumed one: per device, the
    range over its runs (one run is not a figure to plan on: two runs on an H100 gave TR 5.7 and 8.0 %)."""
    lines = []
    for folder in sorted({path.parent for path in root.glob("*/mfu*.json")}):
        runs = [(path, read_json(path)) for path in sorted(folder.glob("mfu*.json"))]
        runs = [(path, m) for path, m in runs if "peak_flops" in m and m.get("device") != "cpu"]
        if not runs:
            continue
        m = runs[0][1]
        figures = ", ".join(f"{k} {_percent_range([100 * r['variants'][k]['mfu'] for _, r in runs])}"
                            for k in m["variants"])
        files = ", ".join(f"`{path}`" for path, _ in runs)
        lines.append(f"Measured on an {m['device']} by the GPU acceptance ({files}; {len(runs)} "
                     f"run{'s' if len(runs) > 1 else ''}): MFU {figures} at DAP's paper shapes ({m['batch']} pairs "
                     f"per GPU, length {m['max_length']}, {m['precision']}). A job is priced at a measurement where "
                     "its recipe was measured at its own micro batch and length (its MFU column names the file); "
                     "every other job at the assumed MFU.")
    return lines


def _retries_sentence(need: int, have: int | None) -> str:
    if have is None:
        return ""
    return (f" The jobs need Slurm retries >= {need} (the most resubmissions plus {est.FAILURE_RETRIES} for a failure "
            f"or a preemption); `profiles/slurm` allows {have}" + ("." if have >= need else ": **too few**."))


def markdown(rows: list[dict[str, Any]], mfu: float, checks: dict[str, dict[str, float]],
             notes: list[str] | None = None, retries: int | None = None) -> str:
    """The census as markdown: per paper its GPU-hours beside the paper's own statement, a row per job (the NMT
    jobs in a table of their own); then the cross-checks (``checks``: :func:`common.census.crosscheck.crosschecks`'s
    figures). ``notes``: sentences on a measured MFU (:func:`measured_mfu`), after the first paragraphs; ``retries``:
    the Slurm profile's, against what the jobs need (:func:`common.census.estimate.required_retries`)."""
    lines = ["# Census of the paper-scale jobs", "",
             "Written by `python -m common.census` (`snakemake census`) from the code: each paper's recipe builds its "
             "model at the paper's size, one step is counted (FlopCounterMode; the bytes autograd saves), and "
             f"`common/census/estimate.py` scales it. Wall time at each job's MFU of the dense bf16 peak (A100 "
             "312, H100 989 TFLOP/s): the latest measurement of its recipe at its micro batch and length "
             "(`scripts/bench_mfu.py`'s `figures/gpu/<device>/mfu-<date>.json`, `common/census/measured.py`; the "
             f"MFU column names the file), else an assumed {mfu:.0%} (named 'assumed'). GPU-hours count every "
             "seed of a row. HICTL's NMT fine-tuning jobs are counted "
             "from fairseq's own model (`common/census/nmt.py`); each paper's evaluation jobs from the public sizes "
             "of the sets they read and the evaluated encoder, counted (`common/census/evaluation.py`); each paper's "
             "corpus job's host memory and disk from its samples and the evaluation sets its leakage filter reads "
             "(`common/census/corpus.py`, [below](#corpus-jobs)).", "",
             "GPUs: a training job takes the fewest GPUs of one node (1, 2, 4 or 8) whose memory holds its global "
             "batch at one micro batch (`training.job_gpus: memory`, `common/census/shape.py`: model states at that "
             "many ranks plus the activations of its share of the batch, at most 80 GB = 74.5 GiB per GPU), marked "
             "'memory'; 'paper's' where none does (the config's `gpus`, with its micro batches) or the config asks "
             "for the paper's count (`job_gpus: paper`). The global batch, and every loss over it, is the same at "
             "every count. Under `training.gradient_checkpointing: auto` the census counts a job with selective and "
             "with full activation checkpointing, shapes it under each, and takes the one with the fewer GPU-hours "
             "among those that fit the GPUs' memory (within "
             f"{checkpointing.TIE:.0%} of each other: the one on fewer GPUs), named beside its GPUs "
             "(`common/census/checkpointing.py`). Slurm limit: the A100 wall time x "
             f"{est.MARGIN:g}, at most {est.MAX_RUNTIME_MINUTES:,} minutes; resubmissions: how often a job "
             "checkpoints at its limit and is submitted again, ceil(wall time / (limit - stop margin)) - 1."
             + _retries_sentence(est.required_retries(rows), retries), ""]
    for sentence in notes or []:
        lines += [sentence, ""]
    for paper in PAPERS:
        mine = [r for r in rows if r["paper"] == paper and "kind" not in r]
        nmt = [r for r in rows if r["paper"] == paper and r.get("kind") == "nmt"]
        evals = [r for r in rows if r["paper"] == paper and r.get("kind") == "eval"]
        if not mine:
            continue
        total = _hours(mine)
        said, hours = reported_compute(paper)
        partial = sum(r["seeds"] for r in mine if "gpu_hours" not in r)
        lines += [f"## {paper}", "",
                  f"GPU-hours of all {sum(r['seeds'] for r in mine)} training jobs: **{total['a100']:,.0f} A100-hours"
                  f"**, {total['h100']:,.0f} H100-hours"
                  + (f" (without the {partial} job(s) whose step could not be counted here)" if partial else "")
                  + f". The paper: {said}"
                  + (f" = {hours:g} V100-hours for its main model." if hours else "."), "",
                  *(h.format(batch="micro batch / GPU (x accumulated)", seen="pairs seen (M)") for h in HEADER),
                  *(_line(r, mfu) for r in mine), ""]
        for r in mine:
            if "kept_from_earlier" in r:
                lines += [f"{r['job']}: kept from an earlier census, on the config's GPUs at the assumed MFU (not "
                          f"counted this time: {r['kept_from_earlier'].removeprefix('activations and FLOPs: ')}); "
                          "a census on a machine with the memory free counts it and shapes it from memory.", ""]
            if "step_counted_as" in r:
                lines += [f"{r['job']}: {r['too_large_here']}. Its FLOPs and activations per step are those of "
                          f"{r['step_counted_as']}, counted: the two models route each sentence through one of several "
                          "modules of one shape, so per pair they do the same work. Its activations add, as a bound, "
                          "the 16-bit copies of the matrices it has beyond that model (`routed_extra_bytes`); its "
                          "parameters and model states are its own, counted on the meta device (the recipe's "
                          "`same_step_as`).", ""]
        if nmt:
            t = _hours(nmt)
            lines += [f"### {paper}: NMT fine-tuning (fairseq)", "",
                      f"GPU-hours of all {len(nmt)} NMT training jobs: **at most {t['a100']:,.0f} A100-hours**, "
                      f"{t['h100']:,.0f} H100-hours: stage 1 and the random-init baselines stop when the validation "
                      "loss stops improving, so their `max_update` is a cap (EFLOP marked 'at most'). Batches of "
                      f"{nmt[0]['max_length']}-token sentences on both sides (common/census/nmt.py); translation "
                      "(fairseq-generate) is not counted.", "",
                      *(h.format(batch="sentences / GPU (x update-freq)", seen="sentences seen (M)") for h in HEADER),
                      *(_line(r, mfu) for r in nmt), ""]
        if evals:
            lines += [f"### {paper}: evaluation jobs", "", *evaluation.markdown(evals), ""]
    lines += corpus.markdown([r for p in PAPERS for r in rows if r["paper"] == p and r.get("kind") == "corpus"])
    lines += ["## Cross-checks", "", *describe(checks), ""]
    return "\n".join(lines)


def profile_retries(path: Path = ROOT / "profiles" / "slurm" / "config.yaml") -> int:
    """The Slurm profile's ``retries`` (resubmissions of a failed job, a timed-out one included)."""
    value = load_yaml(path).get("retries")
    if not isinstance(value, int):
        raise ConfigError(f"{path}: no integer 'retries'")
    return value


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--papers", nargs="+", default=PAPERS, choices=PAPERS)
    p.add_argument("--mfu", type=float, default=est.DEFAULT_MFU)
    p.add_argument("--data-root", default="../shared/data",
                   help="NTREX-128's sentences size the corpus jobs (the probe corpora are synthetic)")
    p.add_argument("--out", default="figures/census/paper", help="writes <out>.md and <out>.json")
    p.add_argument("--render", action="store_true", help="only write <out>.md again from <out>.json")
    p.add_argument("--fresh", action="store_true", help="count every job again (default: keep the rows of <out>.json)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    out = Path(a.out)
    rows: list[dict[str, Any]]
    if a.render:
        saved = read_json(out.with_suffix(".json"))
        rows, checks, mfu = saved["jobs"], saved["crosschecks"], saved["mfu"]
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        old = read_json(out.with_suffix(".json")) if out.with_suffix(".json").exists() else {"jobs": []}
        if old.get("mfu", a.mfu) != a.mfu or a.fresh:
            old = {"jobs": []}
        rows = []

        def save(new: list[dict[str, Any]], checks: dict[str, dict[str, float]] | None = None) -> None:
            """Every row so far (this run's, then the earlier runs' of other papers), in the papers' order."""
            mine = {(r["paper"], r["job"]) for r in rows + new}
            kept = [r for r in old["jobs"] if (r["paper"], r["job"]) not in mine]
            every = sorted(kept + rows + new, key=lambda r: PAPERS.index(r["paper"]))
            write_json(out.with_suffix(".json"), {"mfu": a.mfu, "gpus": {k: vars(g) for k, g in est.GPUS.items()},
                                                  "jobs": every, "crosschecks": checks or old.get("crosschecks")})

        for paper in a.papers:
            done = {r["job"]: r for r in old["jobs"] if r["paper"] == paper and "memory_per_gpu_gib" in r}
            rows += job_rows(paper, a.mfu, a.data_root, done, save)
        checks, mfu = crosschecks(), a.mfu
        save([], checks)
        saved = read_json(out.with_suffix(".json"))
        rows = saved["jobs"]
    with atomic_write(out.with_suffix(".md")) as fh:
        fh.write(markdown(rows, mfu, checks, measured_mfu(), profile_retries()))
    need, have = est.required_retries(rows), profile_retries()
    if have < need:
        log.warning("profiles/slurm allows %d retries; the census's jobs need %d: raise it", have, need)
    log.info("census of %d jobs -> %s.md", len(rows), out)


if __name__ == "__main__":
    main()
