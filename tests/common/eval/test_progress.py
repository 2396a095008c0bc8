"""Evaluation progress (common/eval/progress.py) with a fake clock: items done, rate and time left of the running
stage, logged and added to TensorBoard; the loops only count."""
import logging

import pytest

from common.eval import progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_report_gives_items_rate_and_time_left(caplog):
    clock = Clock()
    p = progress.Progress(clock=clock)
    assert p.report() is None  # nothing before the first stage
    p.start("embedding 1,000 deu sentences", 1000, task="tatoeba@cosine")
    clock.now += 10.0
    for _ in range(25):
        p.advance(10)  # 250 items in 10 s
    with caplog.at_level(logging.INFO, logger="common.eval.progress"):
        r = p.report()
    assert (r.done, r.total, r.rate, r.left, r.elapsed) == (250, 1000, 25.0, 30.0, 10.0)
    assert ("tatoeba@cosine: embedding 1,000 deu sentences: 250/1,000 items, 25.0 items/s, ~0m30s left of the "
            "stage; job: 250 items in 0m10s") in caplog.text
    p.start("fine-tuning, 40 steps", 40)  # a new stage keeps the task, restarts the rate
    clock.now += 4.0
    p.advance(8)
    r = p.report()
    assert (r.task, r.done, r.rate, r.left, r.elapsed, r.job_done) == ("tatoeba@cosine", 8, 2.0, 16.0, 14.0, 258)


def test_no_item_yet_has_no_time_left():
    clock = Clock()
    p = progress.Progress(clock=clock)
    p.start("fine-tuning, 5 steps", 5, task="xnli@zero-shot")
    clock.now += 3.0
    assert p.report().left is None and "~? left" in p.report().line()


def test_tensorboard_scalars(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    clock = Clock()
    p = progress.Progress(str(tmp_path), clock=clock)
    p.start("embedding", 100, task="sts-en@wmean")
    clock.now += 40.0
    p.advance(20)
    p.report()
    p.close()
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    done = acc.Scalars("eval_progress/sts-en@wmean/items_done")
    left = acc.Scalars("eval_progress/sts-en@wmean/seconds_left")
    assert [(e.step, e.value) for e in done] == [(40, 20.0)]
    assert left[0].value == pytest.approx(160.0)


def test_heartbeat_reports_every_interval_and_once_at_the_end():
    clock = Clock()
    p = progress.Progress(clock=clock)
    p.start("embedding", 10, task="t")
    waits = []

    class Stop:  # stands in for the heartbeat's Event: two intervals pass, then the job ends
        def wait(self, interval):
            waits.append(interval)
            return len(waits) > 2

        def set(self):
            pass

    beat = progress.Heartbeat(p, interval=30.0)
    beat._stop = Stop()
    beat._run()
    assert waits == [30.0, 30.0, 30.0] and len(p.reports) == 2


def test_the_encoder_loop_counts_every_sentence():
    import torch

    from common.models.encoder import encode_sentences

    class Tok:
        def __call__(self, batch, **kw):
            import numpy as np

            n = max(len(s) for s in batch)
            return {"input_ids": np.ones((len(batch), n), dtype=np.int64),
                    "attention_mask": np.ones((len(batch), n), dtype=np.int64)}

    class Enc(torch.nn.Module):
        def forward(self, ids, mask):
            return ids.float()[:, :1].repeat(1, 3), None

    counted = []
    encode_sentences(Enc(), Tok(), ["a", "bb", "ccc", "dddd", "bb"], batch_size=2, on_batch=counted.append)
    assert counted == [2, 2]  # 4 distinct sentences in batches of 2
