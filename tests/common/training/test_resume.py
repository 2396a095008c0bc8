"""A run killed after a checkpoint and restarted ends exactly like an uninterrupted one."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from common.training.metrics_log import VOLATILE, read_metrics
from common.training.trainer import resumable_step

WORKER = Path(__file__).with_name("_resume_worker.py")


def run(*args, worker: Path = WORKER):
    env = {**os.environ, "DS_ACCELERATOR": "cpu", "OMP_NUM_THREADS": "1"}
    env.pop("WORLD_SIZE", None)
    subprocess.run([sys.executable, str(worker), *map(str, args)], check=True, env=env, capture_output=True,
                   timeout=600)


def test_exact_resume(tmp_path):
    run(tmp_path / "straight", 12, 4)
    run(tmp_path / "killed", 12, 4, 6)  # dies after step 6; last checkpoint at step 4
    assert (tmp_path / "killed" / "run" / "checkpoints" / "latest").read_text().strip() == "step00000004"
    assert resumable_step(tmp_path / "killed" / "run") == 4
    run(tmp_path / "killed", 12, 4)  # restarted with the same arguments
    a = torch.load(tmp_path / "straight" / "final.pt", weights_only=True)
    b = torch.load(tmp_path / "killed" / "final.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    log = lambda d: read_metrics(tmp_path / d / "run")
    strip = lambda rows: [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]
    assert strip(log("straight")) == strip(log("killed"))
    assert [r["step"] for r in log("killed")] == list(range(1, 13))


@pytest.mark.slow
def test_changed_arguments_refuse_to_resume(tmp_path):
    run(tmp_path / "a", 12, 4, 6)  # checkpoint at step 4
    env = {**os.environ, "DS_ACCELERATOR": "cpu", "OMP_NUM_THREADS": "1"}
    env.pop("WORLD_SIZE", None)
    proc = subprocess.run([sys.executable, str(WORKER), str(tmp_path / "a"), "12", "3"], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode != 0 and "other training arguments (save_every)" in proc.stderr


def test_two_trainers_in_one_process(tmp_path):
    """A second Trainer in the same process (a benchmark's rounds, a notebook) trains like the first: DeepSpeed's
    cached world group does not outlive the first run's process group."""
    run(tmp_path, worker=WORKER.with_name("_twice_worker.py"))
    first, second = ((tmp_path / run / "metrics.jsonl").read_text().splitlines() for run in ("first", "second"))
    assert len(first) == 3
    assert [json.loads(l)["loss"] for l in first] == [json.loads(l)["loss"] for l in second]


def test_a_latest_file_of_another_format_is_refused_naming_it(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest").write_text("global_step4\n")
    with pytest.raises(ValueError, match=r"checkpoints/latest: 'global_step4' is not a checkpoint tag of this "
                                         r"trainer \('step00000000'"):
        resumable_step(tmp_path)
    (tmp_path / "checkpoints" / "latest").write_text("step4")  # the tag's digits are 8
    with pytest.raises(ValueError, match="'step4' is not"):
        resumable_step(tmp_path)
