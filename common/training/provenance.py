"""What a training's result depends on in its experiment config: the sections it reads, as one digest the workflow's
train rule records among its params, and compared key by key before a run resumes its checkpoints.

A training module reads its settings from the experiment config itself (``common.config.load_experiment_config``),
not from its command line. Without the digest snakemake would see no change when, say, ``training.max_steps``
changes and would keep the old models; without the comparison a rerun would resume the old run's last checkpoint
(``Trainer`` compares only its own ``TrainingArguments``, not a method's section such as ``moco.momentum``) and save
the old model again. Both cover every section a training may read and leave out only those that choose which runs
exist, how they are evaluated, reported or costed, and what a cluster job asks for, so a change to those reruns no
training and still lets a preempted one resume.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

# TrainingArguments that change when and how a run is saved or watched, not its arithmetic: a resume may change them
# (Trainer._check_resumable)
NOT_ARITHMETIC = frozenset({"stop_after", "output_dir", "save_every_minutes", "stop_margin_minutes", "tensorboard",
                            "keep_checkpoints", "rehearse_time_limit_at"})

# sections no training reads: the run lists (seeds, ablation_seed, task_seeds, analysis: a run's name carries its
# settings, papers/moco/variants.py), the learning curve's steps (the train rule passes them as --snapshot_steps),
# evaluation (but for the length the saved encoder keeps, EVAL_READ_BY_TRAINING), the efficiency benchmark, the NMT
# fine-tuning (its own rule, whose params carry its settings) and the cluster resources
NOT_READ_BY_TRAINING = frozenset({"description", "seeds", "ablation_seed", "task_seeds", "analysis", "learning_curve",
                                  "eval", "efficiency", "nmt", "resources"})
EVAL_READ_BY_TRAINING = ("max_length",)  # every paper's train module saves its encoder with eval.max_length
# training keys that set where a run executes or how it is saved, not its arithmetic: the job's ranks and threads
# (a run resumes across world sizes), the rehearsal's simulated time limit, and what the trainer ignores on resume
TRAINING_NOT_COMPARED = NOT_ARITHMETIC | {"gpus", "threads", "rehearse_time_limit"}


def training_view(cfg: dict[str, Any]) -> dict[str, Any]:
    """The part of ``cfg`` (an experiment config as a training loads it) that a training reads."""
    view = {k: v for k, v in cfg.items() if k not in NOT_READ_BY_TRAINING}
    if isinstance(view.get("training"), dict):
        view["training"] = {k: v for k, v in view["training"].items() if k not in TRAINING_NOT_COMPARED}
    view["eval"] = {k: cfg.get("eval", {}).get(k) for k in EVAL_READ_BY_TRAINING}
    return json.loads(json.dumps(view, default=str))  # as training_args.json holds it: tuples as lists


def training_digest(cfg: dict[str, Any]) -> str:
    """A short, stable digest of ``training_view(cfg)``: equal for configs that differ only in the sections no
    training reads or in key order."""
    text = json.dumps(training_view(cfg), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def changed_settings(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The dotted keys (``training.max_steps``, ``moco.momentum``) whose values a training reads and that differ
    between two experiment configs, sorted; a section present in only one is named whole."""
    def walk(a: Any, b: Any, prefix: str) -> list[str]:
        if isinstance(a, dict) and isinstance(b, dict):
            return [c for k in sorted(a.keys() | b.keys(), key=str)
                    for c in walk(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k))]
        return [] if a == b else [prefix]
    return walk(training_view(old), training_view(new), "")
