"""A training run's trace: ``metrics.jsonl`` (one JSON line per logged step) and TensorBoard event files beside
it (``<run>/tensorboard/``: the same scalars -- losses, learning rate, throughput, peak memory -- plus the
evaluation scores that ``python -m common.eval --tensorboard`` adds under ``eval/``). Watch a cluster run with
``tensorboard --logdir <results_root>/paper/<paper>/models`` (docs/cluster.md, "Watching a run").

Rank 0 writes. On resume from step N, lines after N are dropped from ``metrics.jsonl`` and TensorBoard is told to
purge events after N (``purge_step``), so both read as one uninterrupted run. Everything that reads the log back
(reports, the rehearsal's acceptance, the benchmarks) goes through :func:`read_metrics`.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.io import DataFormatError, atomic_write, iter_json_lines
from common.rss import peak_rss_bytes

if TYPE_CHECKING:  # torch is imported where it is used: a report that reads the log back does not pay for it
    import torch

log = logging.getLogger(__name__)
FILE = "metrics.jsonl"
# keys whose values depend on the machine and its load, not on the run's arithmetic (tests compare the rest)
VOLATILE = ("elapsed_s", "examples_per_s", "peak_memory_mb")


def peak_memory_mb(device: torch.device) -> float:
    """Peak memory of this rank: allocated on its GPU, or the process's resident set on the CPU."""
    if device.type == "cuda":
        import torch

        return float(torch.cuda.max_memory_allocated(device) / 2**20)
    return peak_rss_bytes() / 2**20  # VmHWM: ru_maxrss would start at the launching process's peak


class MetricsLog:
    def __init__(self, out: Path, enabled: bool, tensorboard: bool = True):
        self.path = out / FILE
        self.enabled = enabled
        self.tb_dir = out / "tensorboard" if tensorboard else None
        self.writer = None

    def start(self, step: int) -> None:
        """Open the log at ``step`` (0, or the step a run resumes from): lines after ``step`` are dropped."""
        if not self.enabled:
            return
        if self.path.exists():  # at step 0 too: a retried run that never reached a checkpoint starts its log anew
            text = self.path.read_text(encoding="utf-8")
            if text and not text.endswith("\n"):  # the run stopped while it wrote a line: that line is torn
                log.warning("%s: dropping a torn last line (the run stopped while writing it): %r", self.path,
                            text[text.rfind("\n") + 1:][:80])
                with atomic_write(self.path) as fh:
                    fh.write(text[: text.rfind("\n") + 1])
            keep = [r for r in read_metrics(self.path) if r["step"] <= step]
            with atomic_write(self.path) as fh:  # a stop during the rewrite keeps the old log whole
                fh.write("".join(json.dumps(r) + "\n" for r in keep))
        if self.tb_dir is not None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.tb_dir), purge_step=step + 1 if step else None)

    def write(self, record: dict[str, Any]) -> None:
        if not self.enabled:
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        if self.writer is not None:
            for key, value in record.items():
                if key != "step" and isinstance(value, int | float):
                    self.writer.add_scalar(f"train/{key}", value, record["step"])
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def read_metrics(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a run's log in the order written: ``path`` is the run's folder or its ``metrics.jsonl``.

    Blank lines are skipped; a line that is not a JSON object with an integer ``"step"`` raises a
    :class:`~common.io.DataFormatError` naming the file and the line.
    """
    path = Path(path)
    if path.is_dir():
        path = path / FILE
    records = []
    for lineno, record in iter_json_lines(path):
        if not isinstance(record, dict) or not isinstance(record.get("step"), int):
            raise DataFormatError(path, lineno, 'expected a JSON object with an integer "step"')
        records.append(record)
    return records


def write_eval_scores(tb_dir: str | Path, step: int, task: str, scores: dict[str, Any]) -> None:
    """Add a task's numeric scores to a run's TensorBoard folder (``eval/<task>/<score>`` at the model's step)."""
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(Path(tb_dir) / "eval")) as writer:
        for key, value in scores.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                writer.add_scalar(f"eval/{task}/{key}", value, step)
