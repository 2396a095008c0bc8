"""Scaling of our training step: step time against the global batch, and against the number
of gloo processes sharing this machine's cores at a fixed global batch.

Every point is one run of ``python -m bench.train_step --ours-only`` (TR on all-MiniLM-L6-v2, length
``--max-length``, steady-state seconds per step), launched with ``torchrun --nproc_per_node P`` for P
processes, each with ``threads / P`` intra-op threads, so every point uses the same cores. Plots:
seconds per step and pairs per second against the global batch (log-log), and pairs per second against P.

    python -m bench.scaling --out figures/bench/<machine>/smoke --batches 16 32 64 --processes 1 2
"""
from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.results import Record, Row, setup_threads
from common.io import read_json

log = logging.getLogger(__name__)


def point(batch: int, processes: int, threads: int, max_length: int, warmup: int, steps: int) -> float:
    """Seconds per step of one configuration, measured in its own process(es)."""
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "point.json"
        per = max(1, threads // processes)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}",
               "-m", "bench.train_step"] if processes > 1 else [sys.executable, "-m", "bench.train_step"]
        cmd += ["--out", tmp, "--ours-only", str(result), "--batch", str(batch), "--max-length", str(max_length),
                "--warmup", str(warmup), "--steps", str(steps), "--threads", str(per)]
        env = {**os.environ, "OMP_NUM_THREADS": str(per)}
        for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
            env.pop(var, None)
        subprocess.run(cmd, check=True, env=env, timeout=3600, stdout=subprocess.DEVNULL)
        return read_json(result)["s_per_step"]


def plot(batches: list[dict], procs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    b = [p["batch"] for p in batches]
    ax1.loglog(b, [p["s_per_step"] for p in batches], "o-", label="s / step")
    ax1.loglog(b, [p["batch"] / p["s_per_step"] for p in batches], "s--", label="pairs / s")
    ax1.set_xticks(b, [str(x) for x in b])
    ax1.minorticks_off()
    ax1.set_xlabel("global batch (pairs)")
    ax1.set_title("one process")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=8)
    ax2.plot([p["processes"] for p in procs], [p["batch"] / p["s_per_step"] for p in procs], "o-")
    ax2.set_xlabel("gloo processes (same cores)")
    ax2.set_ylabel("pairs / s")
    ax2.set_xticks([p["processes"] for p in procs])
    ax2.set_title(f"global batch {procs[0]['batch'] if procs else ''}")
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(path.with_suffix(f".{ext}"), dpi=150)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--batches", type=int, nargs="+", default=[16, 32, 64, 128])
    p.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    p.add_argument("--process-batch", type=int, default=64, help="global batch of the process sweep")
    p.add_argument("--max-length", type=int, default=32)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    setup = setup_threads(a.threads) | {"model": "all-MiniLM-L6-v2", "objective": "TR", "max_length": a.max_length,
                                         "warmup": a.warmup, "steps": a.steps}
    batches = []
    for b in a.batches:
        batches.append({"batch": b, "s_per_step": point(b, 1, a.threads, a.max_length, a.warmup, a.steps)})
        log.info("batch %d: %.3f s/step", b, batches[-1]["s_per_step"])
    procs = []
    for n in a.processes:
        procs.append({"processes": n, "batch": a.process_batch,
                      "s_per_step": point(a.process_batch, n, a.threads, a.max_length, a.warmup, a.steps)})
        log.info("%d processes: %.3f s/step", n, procs[-1]["s_per_step"])
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    plot(batches, procs, out / "scaling")
    rec = Record("scaling", "Scaling of our TR training step: global batch and gloo processes", setup,
                 series={"batch": batches, "processes": procs})
    small, large = batches[0], batches[-1]
    per_pair = (large["s_per_step"] / large["batch"]) / (small["s_per_step"] / small["batch"])
    rec.add(Row(f"time per pair, batch {large['batch']} vs batch {small['batch']}",
                large["s_per_step"] / large["batch"], small["s_per_step"] / small["batch"], "s / pair",
                f"batch {large['batch']}", f"batch {small['batch']}",
                note=f"{per_pair:.2f}: below 1 when larger batches use the cores better"))
    if len(procs) > 1:
        one, many = procs[0], procs[-1]
        rec.add(Row(f"step time, global batch {a.process_batch}, {many['processes']} processes vs "
                    f"{one['processes']}", many["s_per_step"], one["s_per_step"], "s / step",
                    f"{many['processes']} gloo processes x {max(1, a.threads // many['processes'])} threads",
                    f"{one['processes']} process x {max(1, a.threads // one['processes'])} threads",
                    note="the cost of data parallelism on one machine: gathers, gradient all-reduce"))
    rec.write(out)


if __name__ == "__main__":
    main()
