"""Evaluate any saved model of the repository on registered tasks; one MTEB-style results JSON per task.

    python -m common.eval --task tatoeba@cosine --task bucc@ratio-k4 \\
        --model-dir results/smoke/dap/models/scratch/dap/seed1/model \\
        --corpus results/smoke/dap/corpus/manifest.json --scale smoke --out-dir results/smoke/dap/eval/scratch/dap/seed1

writes ``<out-dir>/<task>.json`` for each task (the model is loaded once, and sentences that two
tasks embed alike are embedded once). ``--list`` prints the registered tasks with their protocols.
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
from common.eval.results import write_result
from common.eval.task_types import EvalContext, evaluate
from common.eval.tasks import TASKS, get_task, load_tasks
from common.io import read_json
from common.models.embedder import read_embedder_meta
from common.precision import run_precision
from common.training.metrics_log import write_eval_scores

log = logging.getLogger("common.eval")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m common.eval", description=__doc__.splitlines()[0])
    p.add_argument("--list", action="store_true", help="list the registered tasks and exit")
    p.add_argument("--task", action="append", default=[], help="a registered task id (repeat for several)")
    p.add_argument("--model-dir")
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
    missing = [n for n in ("model_dir", "corpus", "scale", "out_dir") if getattr(a, n) is None]
    missing += [] if a.task else ["task"]
    if missing:
        p.error("missing " + ", ".join("--" + m.replace("_", "-") for m in missing))
    tasks = [get_task(t) for t in a.task]  # unknown ids fail before any work
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    meta = read_embedder_meta(a.model_dir)
    a.precision = run_precision(a.precision, a.scale)
    ctx = EvalContext(model_dir=Path(a.model_dir), manifest=load_manifest(a.corpus), scale=a.scale, seed=a.seed,
                      batch_size=a.batch_size, precision=a.precision, cache=len(tasks) > 1,
                      manifest_path=Path(a.corpus))
    for task in tasks:
        torch.manual_seed(a.seed)
        t0 = time.time()
        result = evaluate(task, ctx)
        write_result(Path(a.out_dir) / f"{task.id}.json", task=task.id, split=result.split or task.split,
                     languages=result.languages, scores=result.scores,
                     model={"name": a.model_name, "path": str(a.model_dir), **meta}, scale=a.scale, seed=a.seed,
                     config={"task": task.declaration(a.scale), "embedder": meta, "precision": a.precision},
                     data_files=result.files,
                     evaluation_time=time.time() - t0)
        log.info("%s main_score=%.2f", task.id, result.scores["main_score"])
        if a.tensorboard:
            write_eval_scores(a.tensorboard, trained_steps(Path(a.model_dir)), task.id, result.scores)


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
