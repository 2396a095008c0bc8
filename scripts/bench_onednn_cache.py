"""Peak memory and speed of a CPU training run against the size of oneDNN's primitive cache.

On the CPU, PyTorch's bf16 matmuls run through oneDNN, which keeps one compiled primitive per distinct shape in a
cache of ``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` entries (default 1,024). A layer whose row count changes with every
batch (the vocabulary heads of TLM and RTL, which run on the scored positions only) adds entries until the cache is
full: DAP's mini run grew from 3.2 GB at step 25 to 11.8 GB at step 1,200 (papers/dap/README.md). This benchmark
trains the same run for ``--steps`` steps once per capacity, one after the other in this job, and prints each run's
peak resident set and speed, with ratios against the first capacity given (the baseline; ``default`` is oneDNN's
own 1,024, set explicitly, since the training command line would otherwise bound an unset cache itself):

    python scripts/bench_onednn_cache.py --module papers.dap.train --method dap \\
        --corpus results/mini/dap/corpus/manifest.json --tokenizer results/mini/dap/tokenizer/minilm/shared \\
        --steps 150 --capacities default 64 16 --out /tmp/onednn-cache

Speed is the examples per second from the first logged step to the last (the trainer's ``metrics.jsonl``), so the
start-up and the first steps, where every capacity compiles its primitives, are left out.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from common.training.metrics_log import read_metrics
from common.training.onednn import ONEDNN_DEFAULT, VARIABLE

log = logging.getLogger(__name__)


def run(a: argparse.Namespace, capacity: str) -> dict[str, float | str]:
    out = Path(a.out) / f"capacity-{capacity}"
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(a.threads)
    env[VARIABLE] = str(ONEDNN_DEFAULT) if capacity == "default" else capacity
    cmd = [sys.executable, "-m", a.module, "--scale", a.scale, "--method", a.method, "--init", a.init, "--seed", "1",
           "--corpus", a.corpus, "--tokenizer", a.tokenizer, "--output_dir", str(out), "--max_steps", str(a.steps)]
    t0 = time.time()
    with open(Path(a.out) / f"capacity-{capacity}.log", "w") as fh:
        subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, check=True)
    rows = [r for r in read_metrics(out) if "examples_per_s" in r]
    return {"capacity": capacity, "wall_s": round(time.time() - t0, 1),
            "peak_mb_first": rows[0]["peak_memory_mb"], "peak_mb_last": rows[-1]["peak_memory_mb"],
            "first_step": rows[0]["step"], "last_step": rows[-1]["step"], "examples_per_s": span_speed(rows)}


def span_speed(rows: list[dict[str, float]]) -> float:
    """Examples per second from the first logged step to the last: each interval's rate times its length, summed,
    over the span's length."""
    examples = sum(r["examples_per_s"] * (r["elapsed_s"] - prev["elapsed_s"]) for prev, r in zip(rows, rows[1:]))
    return round(examples / (rows[-1]["elapsed_s"] - rows[0]["elapsed_s"]), 2)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--module", default="papers.dap.train", help="the training entry point")
    p.add_argument("--method", default="dap")
    p.add_argument("--init", default="minilm")
    p.add_argument("--scale", default="mini")
    p.add_argument("--corpus", required=True)
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--capacities", nargs="+", default=["default", "64", "16"],
                   help="ONEDNN_PRIMITIVE_CACHE_CAPACITY values; the first is the baseline ('default': oneDNN's 1,024)")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    Path(a.out).mkdir(parents=True, exist_ok=True)
    results = []
    for capacity in a.capacities:
        results.append(run(a, capacity))
        log.info("capacity %s: %s", capacity, results[-1])
    base = results[0]
    lines = [f"{a.module} --method {a.method}, {a.steps} steps, {a.threads} thread(s); baseline: capacity "
             f"{base['capacity']}",
             "| capacity | peak MB (first log) | peak MB (last log) | growth MB | growth / baseline "
             "| examples/s | speed / baseline |", "|---|---|---|---|---|---|---|"]
    for r in results:
        growth = float(r["peak_mb_last"]) - float(r["peak_mb_first"])
        base_growth = float(base["peak_mb_last"]) - float(base["peak_mb_first"])
        lines.append(f"| {r['capacity']} | {r['peak_mb_first']:.0f} (step {r['first_step']}) | {r['peak_mb_last']:.0f} "
                     f"(step {r['last_step']}) | {growth:.0f} | {growth / base_growth:.2f} | {r['examples_per_s']:.1f} "
                     f"| {float(r['examples_per_s']) / float(base['examples_per_s']):.2f} |")
    text = "\n".join(lines)
    (Path(a.out) / "results.json").write_text(json.dumps(results, indent=1))
    (Path(a.out) / "results.md").write_text(text + "\n")
    log.info("\n%s", text)


if __name__ == "__main__":
    main()
