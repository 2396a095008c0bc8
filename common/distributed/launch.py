"""Start the ranks of one training job on one node: ``--nproc`` processes of ``python -m <module> <args>``.

    OMP_NUM_THREADS=8 python -m common.distributed.launch --nproc 8 -m papers.dap.train --scale paper ...

Each child gets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR (127.0.0.1) and MASTER_PORT, the variables DeepSpeed's
``init_distributed`` reads, and the launcher's OMP_NUM_THREADS (threads per rank). The launcher itself hosts the
rendezvous store on a port the OS picks when the store binds it (``TCPStore`` on port 0), and every rank connects
to it as a client (``TORCHELASTIC_USE_AGENT_STORE``, as under torchrun's agent): a port picked free and bound
later by rank 0 was taken in between by another job's connection once in a CI run (EADDRINUSE), so parallel jobs
on one machine could collide. Several nodes start their ranks with ``srun`` instead
(:mod:`common.workflow.launch`).

Why not DeepSpeed's launcher (or torchrun): SIGTERM (Slurm's preemption, ``scancel``) and SIGUSR1 reach this
process, which forwards them to every rank; the trainer answers both by saving a checkpoint at the next step and
exiting (:mod:`common.training.stopping`). DeepSpeed's launcher handles SIGINT and SIGTERM only
(``deepspeed/launcher/launch.py``), so SIGUSR1 kills it and orphans its ranks. The engine in each rank is
DeepSpeed's either way. When a rank fails, the others are stopped (SIGTERM, then SIGKILL after ``--grace``
seconds) and the launcher exits with the failed rank's code.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import time
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch.distributed import TCPStore

log = logging.getLogger("common.distributed.launch")
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1)


def child_env(env: dict[str, str], rank: int, nproc: int, port: int) -> dict[str, str]:
    return {**env, "RANK": str(rank), "LOCAL_RANK": str(rank), "LOCAL_WORLD_SIZE": str(nproc),
            "WORLD_SIZE": str(nproc), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
            "TORCHELASTIC_USE_AGENT_STORE": "True", "XLING_LAUNCHER": "launch"}


def rendezvous_store() -> TCPStore:
    """The job's rendezvous store, hosted by the launcher on a port the OS assigns as it binds (no race)."""
    from torch.distributed import TCPStore

    return TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)


def run(nproc: int, command: list[str], grace: float = 30.0, env: dict[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    store = rendezvous_store()  # alive until the ranks are done
    port = store.port
    log.info("%d ranks, master 127.0.0.1:%d", nproc, port)
    children = [subprocess.Popen([sys.executable, *command], env=child_env(env, i, nproc, port)) for i in range(nproc)]

    def forward(signum: int, _frame: FrameType | None) -> None:
        for c in children:
            if c.poll() is None:
                c.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in FORWARDED}
    try:
        failed = None
        while any(c.poll() is None for c in children):
            failed = next((c for c in children if c.poll() not in (None, 0)), None)
            if failed is not None:
                break
            time.sleep(0.2)
        failed = failed or next((c for c in children if c.returncode), None)
        if failed is not None:
            log.error("rank %d exited with %d; stopping the others", children.index(failed), failed.returncode)
            stop(children, grace)
            return failed.returncode if failed.returncode > 0 else 128 - failed.returncode
        return 0
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def stop(children: list[subprocess.Popen[bytes]], grace: float) -> None:
    for c in children:
        if c.poll() is None:
            c.terminate()
    deadline = time.time() + grace
    for c in children:
        try:
            c.wait(timeout=max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            c.kill()
            c.wait()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m common.distributed.launch", description=__doc__.splitlines()[0],
                                allow_abbrev=False)
    p.add_argument("--nproc", type=int, required=True, help="ranks on this node (one per GPU)")
    p.add_argument("--grace", type=float, default=30.0, help="seconds between SIGTERM and SIGKILL of the others")
    p.add_argument("-m", dest="module", required=True, help="the module each rank runs")
    a, rest = p.parse_known_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    sys.exit(run(a.nproc, ["-m", a.module, *rest], a.grace))


if __name__ == "__main__":
    main()
