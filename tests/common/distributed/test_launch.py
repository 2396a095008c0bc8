"""The per-node launcher (common/distributed/launch.py): each rank's variables, a failed rank stops the others and
sets the exit code, SIGUSR1 reaches every rank."""
import json
import os
import signal
import subprocess
import sys
import time

from tests.conftest import ROOT

CHILD = "tests.common.distributed._launch_child"


def launch(out, mode, nproc=2, **kw):
    env = {**os.environ, "OMP_NUM_THREADS": "3", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "common.distributed.launch", "--nproc", str(nproc), "--grace", "5",
                             "-m", CHILD, str(out), mode], env=env, cwd=ROOT, **kw)


def test_each_rank_gets_its_variables(tmp_path):
    assert launch(tmp_path, "env").wait(timeout=120) == 0
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert [(r["RANK"], r["LOCAL_RANK"], r["WORLD_SIZE"]) for r in ranks] == [("0", "0", "2"), ("1", "1", "2")]
    assert {r["MASTER_ADDR"] for r in ranks} == {"127.0.0.1"} and len({r["MASTER_PORT"] for r in ranks}) == 1
    assert {r["OMP_NUM_THREADS"] for r in ranks} == {"3"} and {r["XLING_LAUNCHER"] for r in ranks} == {"launch"}


def test_a_failed_rank_stops_the_others(tmp_path):
    t0 = time.time()
    assert launch(tmp_path, "fail").wait(timeout=120) == 3
    assert time.time() - t0 < 60  # rank 0 would sleep 120 s


def test_sigusr1_reaches_every_rank(tmp_path):
    proc = launch(tmp_path, "signal")
    deadline = time.time() + 60
    while not all((tmp_path / f"ready{r}").exists() for r in range(2)) and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGUSR1)
    assert proc.wait(timeout=120) == 0
    assert [(tmp_path / f"usr1_{r}").read_text() for r in range(2)] == ["True", "True"]
