"""A run stops cleanly before its wall-clock limit or on SIGTERM / SIGUSR1: a checkpoint at the stop step, and the
rerun resumes to the same end as an uninterrupted run; timed checkpoints (``save_every_minutes``)."""
import os
import signal
import stat
import time

import pytest
import torch

from common.training.stopping import StopConditions, job_deadline, parse_slurm_time
from common.training.trainer import Trainer, TrainingArguments
from tests.common.training.test_precision import EXAMPLES, Tiny, collate


def test_slurm_durations():
    assert parse_slurm_time("59") == 59 and parse_slurm_time("4:05") == 245
    assert parse_slurm_time("1:00:00") == 3600 and parse_slurm_time("2-03:04:05") == 2 * 86400 + 3 * 3600 + 245
    assert all(parse_slurm_time(t) is None for t in ("UNLIMITED", "NOT_SET", ""))


def test_the_deadline_comes_from_the_job(tmp_path, monkeypatch):
    assert job_deadline({}) is None
    assert job_deadline({"XLING_DEADLINE": "1000.5", "SLURM_JOB_ID": "7"}) == 1000.5
    assert job_deadline({"SLURM_JOB_END_TIME": "2000", "SLURM_JOB_ID": "7"}) == 2000
    squeue = tmp_path / "squeue"  # what Slurm's squeue prints for '-h -j 7 -o %L'
    squeue.write_text('#!/bin/sh\n[ "$3" = 7 ] && [ "$5" = "%L" ] && echo "1:00:05"\n')
    squeue.chmod(squeue.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert job_deadline({"SLURM_JOB_ID": "7"}, now=100.0) == 100.0 + 3605
    assert job_deadline({"SLURM_JOB_ID": "8"}, now=100.0) is None  # squeue printed nothing


def test_stop_conditions():
    s = StopConditions(deadline=1000.0, margin=100.0)
    assert s.reason(step_seconds=10, now=800) is None
    assert s.reason(step_seconds=10, now=885).startswith("time limit")  # 885 + 100 + 2 x 10 >= 1000
    s.signal = signal.SIGUSR1
    assert s.reason(step_seconds=0, now=0) == "signal SIGUSR1"


def args(out, **kw):
    return TrainingArguments(output_dir=str(out), max_steps=6, global_batch_size=4, learning_rate=1e-2, log_every=1,
                             seed=3, tensorboard=False, **kw)


def params(trainer):
    return [p.detach().clone() for p in trainer.unwrap().parameters()]


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    t = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path_factory.mktemp("straight")))
    t.train()
    return params(t)


def test_a_run_near_its_time_limit_checkpoints_stops_and_resumes_exactly(tmp_path, monkeypatch, straight):
    monkeypatch.setenv("XLING_DEADLINE", str(time.time() + 120))  # inside the 10-minute margin from the start
    summary = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path)).train()
    assert summary["stopped_at"] == 1 and summary["reason"].startswith("time limit")
    assert (tmp_path / "checkpoints" / "latest").read_text().strip() == "step00000001"
    monkeypatch.delenv("XLING_DEADLINE")  # the resubmitted job has a new limit
    t = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path))
    assert t.train()["step"] == 6
    assert all(torch.equal(a, b) for a, b in zip(params(t), straight))


@pytest.mark.parametrize("signum", [signal.SIGUSR1, signal.SIGTERM])
def test_a_signal_checkpoints_at_the_next_step(tmp_path, straight, signum):
    sent = lambda step: os.kill(os.getpid(), signum) if step == 2 else None
    summary = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path), on_step=sent).train()
    assert summary == {"stopped_at": 2, "reason": f"signal {signal.Signals(signum).name}"}
    assert signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler)  # the handler is uninstalled
    t = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path))
    t.train()
    assert all(torch.equal(a, b) for a, b in zip(params(t), straight))


def test_timed_checkpoints(tmp_path):
    Trainer(Tiny(), EXAMPLES, collate, args(tmp_path, save_every_minutes=1e-9, keep_checkpoints=3)).train()
    assert sorted(p.name for p in (tmp_path / "checkpoints").glob("step*")) == [f"step0000000{i}" for i in (3, 4, 5)]


def test_the_rehearsed_time_limit_stops_once(tmp_path, straight):
    summary = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path, rehearse_time_limit_at=3)).train()
    assert summary == {"stopped_at": 3, "reason": "rehearsed time limit at step 3"}
    t = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path, rehearse_time_limit_at=3))  # the retry: goes on
    assert t.train()["step"] == 6
    assert all(torch.equal(a, b) for a, b in zip(params(t), straight))
