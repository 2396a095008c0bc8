"""Evaluate any encoder on registered tasks; one MTEB-style results JSON per task.

    python -m common.eval --task tatoeba@cosine --task bucc@ratio-k4 \\
        --model-dir results/smoke/dap/models/scratch/dap/seed1/model \\
        --corpus results/smoke/dap/corpus/manifest.json --scale smoke --out-dir results/smoke/dap/eval/scratch/dap/seed1

writes ``<out-dir>/<task>.json`` for each task (the model is loaded once, and sentences that two
tasks embed alike are embedded once). ``--model`` takes any sentence-transformers or Hugging Face model instead
(:mod:`common.models.outside`): ``NAME@REVISION`` (a Hub commit, read offline), ``package:<module>/<folder>`` or a
folder; a plain Hugging Face model needs ``--pooling``; a model's declared prompts are used where one is named after
the task or its MTEB type, else its default prompt. ``--max-length`` caps the tokens per sentence (the protocol's
cap, e.g. the leaderboard's ``eval.max_length``). Progress (items, rate, time left) is logged every 30 seconds
(:mod:`common.eval.progress`). ``--list`` prints the registered tasks with their protocols.
"""
from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import torch

from common.config import SCALES
from common.data.manifest import load_manifest
from common.eval import progress
from common.eval.results import write_result
from common.eval.task_types import EvalContext, evaluate
from common.eval.tasks import TASKS, Task, get_task, load_tasks
from common.io import read_json
from common.models.embedder import load_model, read_embedder_meta
from common.precision import run_precision
from common.training.metrics_log import write_eval_scores

log = logging.getLogger("common.eval")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m common.eval", description=__doc__.splitlines()[0])
    p.add_argument("--list", action="store_true", help="list the registered tasks and exit")
    p.add_argument("--task", action="append", default=[], help="a registered task id (repeat for several)")
    p.add_argument("--model-dir", help="a model folder this repository saved (embedder.json)")
    p.add_argument("--model", help="any encoder: NAME@REVISION (Hub commit, offline), package:<module>/<folder>, or a "
                                   "folder (sentence-transformers or Hugging Face)")
    p.add_argument("--pooling", default=None, help="a plain Hugging Face model's pooling: cls, mean, max, "
                                                   "mean_sqrt_len_tokens, weightedmean, lasttoken")
    p.add_argument("--max-length", type=int, default=None, help="tokens per sentence (default: the model's own)")
    p.add_argument("--corpus", help="corpus manifest.json (where the evaluation data is)")
    p.add_argument("--scale", choices=SCALES)
    p.add_argument("--seed", type=int, default=1, help="seed of the model's run (also seeds fine-tuning tasks)")
    p.add_argument("--batch-size", type=positive_int, default=128, help="encoding batch size (at least 1)")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="bf16: encode and fine-tune under autocast (CPU AMX, GPU tensor cores)")
    p.add_argument("--model-name", default=None, help="experiment/init/method of the run, recorded in the JSON")
    p.add_argument("--out-dir")
    p.add_argument("--tensorboard", default=None,
                   help="also add each task's scores to this TensorBoard folder (the training run's tensorboard/)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if a.list:
        load_tasks()
        for t in sorted(TASKS.values(), key=lambda t: t.id):
            print(f"{t.id:22s} {t.description}. Main score: {t.main_score}. [{t.reference}]")
        return
    missing = [n for n in ("corpus", "scale", "out_dir") if getattr(a, n) is None]
    missing += [] if a.task else ["task"]
    missing += [] if a.model_dir or a.model else ["model-dir or --model"]
    if missing:
        p.error("missing " + ", ".join("--" + m.replace("_", "-") for m in missing))
    if a.model_dir and a.model:
        p.error("give --model-dir or --model, not both")
    tasks = [get_task(t) for t in a.task]  # unknown ids fail before any work
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    a.precision = run_precision(a.precision, a.scale)
    if a.model:
        embedder, meta = load_model(a.model, pooling=a.pooling, max_length=a.max_length, batch_size=a.batch_size,
                                    precision=a.precision)
        model_dir, name = embedder.path, a.model_name or meta["name"]
        model_record = {"name": name, **meta}
    else:
        meta = read_embedder_meta(a.model_dir)
        model_dir, embedder, name = Path(a.model_dir), None, a.model_name
        model_record = {"name": name, "path": str(a.model_dir), **meta}
    ctx = EvalContext(model_dir=model_dir, manifest=load_manifest(a.corpus), scale=a.scale, seed=a.seed,
                      batch_size=a.batch_size, precision=a.precision, cache=len(tasks) > 1,
                      manifest_path=Path(a.corpus), _embedder=embedder)
    if a.max_length is not None:
        ctx.embedder.max_length = a.max_length
        model_record["max_length"] = a.max_length
    with progress.tracking(f"{a.tensorboard}/eval_progress" if a.tensorboard else None) as tracker:
        for i, task in enumerate(tasks):
            torch.manual_seed(a.seed)
            t0 = time.time()
            tracker.start(f"task {i + 1} of {len(tasks)} starting", 0, task=task.id)
            prompt = prompt_for(task, model_record.get("prompts") or {}, model_record.get("default_prompt_name"))
            ctx.use_prompt(prompt)
            result = evaluate(task, ctx)
            write_result(Path(a.out_dir) / f"{task.id}.json", task=task.id, split=result.split or task.split,
                         languages=result.languages, scores=result.scores,
                         model={**model_record, "prompt": prompt}, scale=a.scale, seed=a.seed,
                         config={"task": task.declaration(a.scale), "embedder": meta, "precision": a.precision,
                                 **({"prompt": prompt} if prompt else {})},
                         data_files=result.files,
                         evaluation_time=time.time() - t0)
            log.info("%s main_score=%.2f", task.id, result.scores["main_score"])
            if a.tensorboard:
                write_eval_scores(a.tensorboard, trained_steps(model_dir), task.id, result.scores)


# MTEB's task type of each task type here: a model's prompt may be named after it (as MTEB looks prompts up)
MTEB_TYPES = {"tatoeba": "BitextMining", "bucc": "BitextMining", "sts-en": "STS", "sts-en-years": "STS",
              "sts17": "STS", "question-retrieval": "Retrieval", "xnli": "PairClassification",
              "pawsx": "PairClassification"}


def prompt_for(task: Task, prompts: dict[str, str], default: str | None) -> str | None:
    """The prompt a model declares for ``task``: one named after the task id, else after its MTEB task type, else the
    model's default prompt; None when it declares none (tasks that fine-tune the encoder take none)."""
    if task.embedders is not None:  # a fine-tuning task trains the encoder on its own inputs
        return None
    for key in (task.id, MTEB_TYPES.get(task.type)):
        if key and key in prompts:
            return prompts[key]
    return prompts.get(default) if default else None


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1 (a batch size below 1 would encode nothing)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1")
    return value


def trained_steps(model_dir: Path) -> int:
    """The training step a saved model comes from (its run's summary.json; 0 when unknown)."""
    summary = model_dir.parent / "summary.json"
    return int(read_json(summary).get("step", 0)) if summary.exists() else 0


if __name__ == "__main__":
    main()
