"""The training command line every paper shares (HF ``run_glue.py``-style dataclasses).

A paper supplies a :class:`Recipe` -- how to read its training examples, build its model and
collator for one method, and save the trained model as an embedder folder -- and its ``train.py``
is ``main(Recipe(), argv)``. This module does the rest, identically for every paper: logging,
threads, config resolution (the paper's own config, or the leaderboard's shared settings merged
with the paper's method settings), the DeepSpeed trainer with resume, and the rank-0 save of the
model, ``summary.json`` and the resolved config beside it::

    python -m papers.dap.train --scale smoke --method dap --init scratch --seed 1 \\
        --corpus results/smoke/dap/corpus/manifest.json --tokenizer results/smoke/dap/tokenizer/scratch \\
        --output_dir results/smoke/dap/models/scratch/dap/seed1
"""
from __future__ import annotations

import logging
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn
from transformers import HfArgumentParser

from common.config import load_experiment_config
from common.data.manifest import load_manifest
from common.distributed.collectives import rank
from common.io import read_json, write_json
from common.precision import run_precision
from common.training.finite import TrainingDiverged, require_finite_weights
from common.training.malloc import keep_freed_memory
from common.training.onednn import bound_primitive_cache
from common.training.provenance import changed_settings
from common.training.stopping import EXIT_RESUME
from common.training.trainer import LaunchArguments, Trainer, TrainingArguments, resumable_arguments, resumable_step

log = logging.getLogger(__name__)


@dataclass
class RunArguments(LaunchArguments):
    scale: str = field(metadata={"help": "smoke | mini | paper"})
    method: str = field(metadata={"help": "the paper's method or variant name (see its variants.py)"})
    init: str = field(metadata={"help": "encoder initialisation, a key of the config's 'encoders'"})
    seed: int = field(metadata={"help": "random seed"})
    corpus: str = field(metadata={"help": "corpus manifest.json"})
    tokenizer: str = field(metadata={"help": "tokenizer folder (with xx/ and en/ for language-specific encoders)"})
    output_dir: str = field(metadata={"help": "run folder"})
    experiment: str | None = field(default=None, metadata={
        "help": "whose config to use: the paper's own (default) or 'leaderboard' (shared settings for every method)"})


@dataclass
class Built:
    """What a recipe builds for one run."""

    model: nn.Module
    collate: Callable[[list[Any], torch.Generator], dict[str, Any]]
    save: Callable[[nn.Module, Path], None]  # writes the embedder folder (rank 0, after training)
    method: dict[str, Any] = field(default_factory=dict)  # resolved method settings, saved beside the model
    training_overrides: dict[str, Any] = field(default_factory=dict)  # e.g. a variant's own batch size


class Recipe(Protocol):
    paper: str

    def examples(self, cfg: dict[str, Any], run: RunArguments, manifest: dict[str, Any]) -> Sequence[Any]: ...

    def build(self, cfg: dict[str, Any], run: RunArguments, manifest: dict[str, Any],
              examples: Sequence[Any]) -> Built: ...


def snapshotter(run: RunArguments, built: Built, resolved: dict[str, Any]) -> Callable[[int], None]:
    """Rank 0 saves the model as an embedder folder at each of ``run.snapshot_steps``, under
    ``<output_dir>/snapshots/step<N>/`` (written beside, then renamed: a folder that exists is complete)."""
    steps = set(run.snapshot_steps)

    def on_step(step: int) -> None:
        if step not in steps or rank() != 0:
            return
        final = Path(run.output_dir) / "snapshots" / f"step{step}"
        model = built.model
        was_training = model.training
        save_model(built, model, final, {**resolved, "snapshot_step": step})
        model.train(was_training)
        log.info("snapshot of step %d -> %s", step, final)

    return on_step


def save_model(built: Built, model: nn.Module, folder: Path, resolved: dict[str, Any]) -> None:
    """The model as an embedder folder with the resolved config beside it (``training_config.json``), written as
    ``<folder>.tmp`` and renamed: a folder that exists is complete."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    built.save(model, tmp)
    write_json(tmp / "training_config.json", resolved)
    write_model_card(tmp, resolved)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


def write_model_card(folder: Path, resolved: dict[str, Any]) -> None:
    """The saved folder's model card (common/models/card.py): method and paper, initial encoder, training data with
    its counts and the leakage rule, hyper-parameters, seed, commit and data digests; results come with the report."""
    from common.config import ROOT, load_yaml
    from common.eval.results import git_commit, versions
    from common.models import card, st_format

    if not (folder / "embedder.json").exists():  # a recipe that saves no embedder folder gets no card
        return
    meta = read_json(folder / "embedder.json")
    side = folder / "xx" if meta["kind"] == "dual-encoder" else folder
    modules = [m.name for m in st_format.read_modules(side)] if (side / st_format.MODULES).exists() else [meta["kind"]]
    if meta["kind"] == "dual-encoder":
        modules = [f"Router(xx, en: {' → '.join(modules)})"]
    reported = ROOT / "papers" / resolved["paper"] / "reported.yaml"
    source = load_yaml(reported).get("source") if reported.exists() else None
    card.write_card(folder, card.training_facts(resolved, source, modules, meta["kind"], git_commit(), versions()))


def refuse_other_settings(output_dir: str, cfg: dict[str, Any]) -> None:
    """Stop before resuming checkpoints that a run with other config settings wrote (``cfg``: the config as loaded,
    its precision as configured). The trainer compares only its own arguments, so a changed method section
    (``moco.momentum``) would otherwise resume the old run's last checkpoint and finish it under the new settings
    (common/training/provenance.py). The precision compared is the configured one (``configured_precision``), not
    the one a CPU that emulates bf16 ran (common/precision.py); a run saved before that was recorded skips it."""
    saved = read_json(Path(output_dir) / "training_args.json")
    old = saved.get("config")
    if old is None:
        return
    new = cfg
    configured = saved.get("configured_precision")
    if configured is None:
        new = {**cfg, "training": {k: v for k, v in cfg["training"].items() if k != "precision"}}
        old = {**old, "training": {k: v for k, v in old["training"].items() if k != "precision"}}
    else:
        old = {**old, "training": {**old["training"], "precision": configured}}
    if changed := changed_settings(old, new):
        raise SystemExit(f"{Path(output_dir) / 'checkpoints'} holds a run trained with other config settings "
                         f"({', '.join(changed)}); delete that folder to start over, or restore the settings to "
                         "resume")


def refuse_missing_snapshots(run: RunArguments) -> None:
    """Stop before resuming checkpoints that are past a requested snapshot step whose snapshot is missing (a
    learning curve's steps changed after the checkpointed run passed them): the resumed run could not write it, and
    the curve's evaluation would fail later on the missing folder. A snapshot is saved before the checkpoint of its
    step (Trainer._loop), so a checkpoint of step N implies every snapshot up to N that its run was asked for."""
    out = Path(run.output_dir)
    reached = resumable_step(out)
    if reached is None:
        return
    missing = [s for s in run.snapshot_steps if s <= reached and not (out / "snapshots" / f"step{s}").is_dir()]
    if missing:
        raise SystemExit(f"{out / 'checkpoints'} is at step {reached}, past the snapshot steps {missing} it did not "
                         "save (the learning curve's steps changed); delete that folder to retrain with them")


def main(recipe: Recipe, argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log.info("oneDNN primitive cache: %d entries", bound_primitive_cache())  # before the first matmul
    keep_freed_memory(on_cpu=not torch.cuda.is_available())  # before the first large tensor
    (run,) = HfArgumentParser(RunArguments).parse_args_into_dataclasses(args=argv)
    run.experiment = experiment = run.experiment or recipe.paper
    cfg = load_experiment_config(experiment, recipe.paper, run.scale)
    if run.init not in cfg["encoders"]:
        raise SystemExit(f"unknown --init {run.init!r}; the {experiment} {run.scale} config defines "
                         f"{sorted(cfg['encoders'])}")
    t = cfg["training"]
    resumed = resumable_arguments(run.output_dir)
    if resumed is not None:  # before anything is built: a refused run costs nothing
        refuse_other_settings(run.output_dir, cfg)
        refuse_missing_snapshots(run)
    configured = t.get("precision", "fp32")
    # what runs, in the saved config too; a resumed run keeps the precision it ran at
    t["precision"] = run_precision(configured, run.scale,
                                   resumed=None if resumed is None else resumed.get("precision", "fp32"))
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", t.get("threads", 1))))
    manifest = load_manifest(run.corpus)
    examples = recipe.examples(cfg, run, manifest)
    torch.manual_seed(run.seed)
    built = recipe.build(cfg, run, manifest, examples)
    overrides = {**built.training_overrides, **({"max_steps": run.max_steps} if run.max_steps is not None else {}),
                 "rehearse_time_limit_at": run.rehearse_time_limit_at,
                 "gradient_checkpointing": run.gradient_checkpointing}
    args = TrainingArguments.from_config(t, output_dir=run.output_dir, seed=run.seed, stop_after=run.stop_after,
                                         **overrides)
    resolved = {"paper": recipe.paper, "experiment": experiment, "run": vars(run), "method": built.method,
                "config": cfg, "configured_precision": configured, "n_examples": len(examples)}
    trainer = Trainer(built.model, examples, built.collate, args, config_to_save=resolved,
                      on_step=snapshotter(run, built, resolved) if run.snapshot_steps else None,
                      snapshot_steps=run.snapshot_steps)
    try:
        summary = trainer.train()
    except TrainingDiverged as exc:  # one line naming the step and the last good checkpoint, no traceback
        log.error("%s", exc)
        raise SystemExit(f"error: {exc}") from None
    if summary.get("reason") == "stop_after":
        log.info("stopped after step %d (stop_after)", summary["stopped_at"])
        return
    if "stopped_at" in summary:  # a time limit or a signal: the checkpoint is saved, a rerun resumes from it
        log.warning("exiting with %d after step %d (%s); rerun the same command to resume",
                    EXIT_RESUME, summary["stopped_at"], summary["reason"])
        sys.exit(EXIT_RESUME)
    if trainer.rank == 0:
        out = Path(run.output_dir)
        require_finite_weights(trainer.unwrap(), summary["step"], trainer.last_checkpoint, "trained model's weights")
        save_model(built, trainer.unwrap(), out / "model", resolved)
        write_json(out / "summary.json", summary)
