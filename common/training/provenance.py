"""What a training's result depends on in its experiment config: the settings it reads, as one digest the workflow's
train rule records among its params, and compared key by key before a run resumes its checkpoints.

A training module reads its settings from the experiment config itself (``common.config.load_experiment_config``),
not from its command line. Without the digest snakemake would see no change when, say, ``training.max_steps``
changes and would keep the old models; without the comparison a rerun would resume the old run's last checkpoint
(``Trainer`` compares only its own ``TrainingArguments``, not a method's section such as ``moco.momentum``) and
finish it under the new settings. Both cover every setting a training may read and leave out only those that
choose which runs exist, how they are evaluated, reported or costed, where a job runs and what it asks a cluster
for: a change to those reruns no training and still lets a preempted one resume. The digest is per experiment
config, not per run: a change to one method's section reruns every training of that paper (and each then refuses
its old checkpoints). tests/common/training/test_provenance.py checks that every section of every config schema is
classified here.
"""
from __future__ import annotations

import json
from typing import Any

from common.io import sha256_json

# TrainingArguments that change when and how a run is saved or watched, not its arithmetic: a resume may change them
# (Trainer._check_resumable)
NOT_ARITHMETIC = frozenset({"stop_after", "output_dir", "save_every_minutes", "stop_margin_minutes", "tensorboard",
                            "keep_checkpoints", "rehearse_time_limit_at", "gradient_checkpointing"})
# top-level sections a training reads (every paper's config schema and the leaderboard's shared sections; an unlisted
# one counts as read, and the tests ask that every schema's sections be listed here or below)
READ_BY_TRAINING = frozenset({"scale", "corpus", "tokenizer", "encoders", "pooling", "training", "dap", "hictl",
                              "moco", "vmsst", "tables"})
# sections no training reads: documentation (description, departures), the run lists (seeds, ablation_seed,
# task_seeds, ablations, without_sources, analysis: a run's name carries its settings, papers/moco/variants.py), the
# learning curve's steps (the train rule passes them as --snapshot_steps), DAP's Figure 1 (an evaluation task), the
# workflow targets (which target writes an output),
# evaluation (but for PARTLY_READ), the
# efficiency benchmark, the census, the NMT fine-tuning (its own rules, whose params carry its settings), the cluster
# resources, and the leaderboard's own sections (its methods, tasks, papers and outside models: a training reads the
# shared sections plus papers.<paper>, common.config.load_experiment_config)
NOT_READ_BY_TRAINING = frozenset({"description", "departures", "seeds", "ablation_seed", "task_seeds", "ablations",
                                  "without_sources", "analysis", "learning_curve", "figure1", "eval", "efficiency",
                                  "census", "nmt", "resources", "methods", "tasks", "papers", "outside_models",
                                  "targets", "readout"})
# of a section otherwise read or not: the keys a training reads (every train module saves its encoder with
# eval.max_length; VMSST's 4-language runs train on tables.table6_languages) ...
PARTLY_READ: dict[str, tuple[str, ...]] = {"eval": ("max_length",), "tables": ("table6_languages",)}
# ... and the keys it does not: where a run executes (ranks, where their count comes from, nodes, threads,
# launcher: a ZeRO-0 run resumes across world sizes), documentation (epochs), the rehearsal's simulated time limit,
# what the trainer ignores on resume, and the evaluation tasks and the ablations to run of HICTL's section
# (papers/hictl/runs.py)
NOT_READ_KEYS: dict[str, frozenset[str]] = {
    "training": NOT_ARITHMETIC | {"gpus", "job_gpus", "nodes", "threads", "launcher", "epochs", "rehearse_time_limit"},
    "hictl": frozenset({"tasks", "ablations"}),
}


def training_view(cfg: dict[str, Any]) -> dict[str, Any]:
    """The part of ``cfg`` (an experiment config as a training loads it) that a training reads: a section this
    module does not list (a new paper's method section) counts as read."""
    view = {k: v for k, v in cfg.items() if k not in NOT_READ_BY_TRAINING}
    for section, keys in PARTLY_READ.items():
        if section in cfg:
            view[section] = {k: cfg[section].get(k) for k in keys}
    for section, ignored in NOT_READ_KEYS.items():
        if isinstance(view.get(section), dict):
            view[section] = {k: v for k, v in view[section].items() if k not in ignored}
    as_saved: dict[str, Any] = json.loads(json.dumps(view, default=str))  # as training_args.json: tuples as lists
    return as_saved


def digest(value: Any) -> str:
    """A short, stable digest of a JSON-able value, independent of key order (a rule param's value)."""
    return sha256_json(value)[:16]


def training_digest(cfg: dict[str, Any]) -> str:
    """The digest of ``training_view(cfg)``: equal for configs that differ only in what no training reads."""
    return digest(training_view(cfg))


def changed_settings(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The dotted keys (``training.max_steps``, ``moco.momentum``) whose values a training reads and that differ
    between two experiment configs, sorted; a section present in only one is named whole."""
    def walk(a: Any, b: Any, prefix: str) -> list[str]:
        if isinstance(a, dict) and isinstance(b, dict):
            return [c for k in sorted(a.keys() | b.keys(), key=str)
                    for c in walk(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k))]
        return [] if a == b else [prefix]
    return walk(training_view(old), training_view(new), "")
