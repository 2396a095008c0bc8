"""One benchmark's record: rows of ours vs the peer, the ratio, the goal and whether it is met.

Every row compares two costs measured in the same process (seconds per step, seconds per 1,000
sentences, ...), so ``ratio = ours / peer`` is below 1 when ours is cheaper; a goal is an upper bound
on that ratio (``ratio <= goal``), or, for a quality row (``goal_on="difference"``), on the absolute
difference ``|ours - peer|``. A row without a peer reports a single figure (``peer`` None).
The record is written as JSON (``<name>.json``) and as a Markdown table (``<name>.md``).
"""
from __future__ import annotations

import datetime
import logging
import os
import platform
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from common import measurements
from common.io import atomic_write, read_json, write_json

log = logging.getLogger(__name__)


@dataclass
class Row:
    measure: str  # what was measured, with its shapes
    ours: float
    peer: float | None = None
    unit: str = "s"
    ours_label: str = "ours"
    peer_label: str = ""
    goal: float | None = None  # upper bound on ours / peer (or on |ours - peer|)
    note: str = ""  # what limits an unmet goal, or how to read the row
    goal_on: str = "ratio"  # "ratio" | "difference"

    @property
    def ratio(self) -> float | None:
        return None if self.peer in (None, 0) else self.ours / self.peer

    @property
    def met(self) -> bool | None:
        if self.goal is None or self.peer is None:
            return None
        if self.goal_on == "difference":
            return abs(self.ours - self.peer) <= self.goal
        return self.ratio is not None and self.ratio <= self.goal

    def goal_text(self) -> str:
        if self.goal is None:
            return ""
        return f"abs(ours - peer) <= {self.goal:g}" if self.goal_on == "difference" else f"<= {self.goal:g}"

    def as_dict(self) -> dict:
        return {**asdict(self), "ratio": self.ratio, "met": self.met}


@dataclass
class Record:
    name: str
    title: str
    setup: dict = field(default_factory=dict)  # threads, dtype, model, shapes ...
    rows: list[Row] = field(default_factory=list)
    series: dict = field(default_factory=dict)  # raw measurements behind the plots

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        r = f" ratio {row.ratio:.3f}" if row.ratio is not None else ""
        g = f" (goal {row.goal_text()}: {'met' if row.met else 'NOT met'})" if row.goal is not None else ""
        peer = f" vs {row.peer_label} {row.peer:.4g} {row.unit}" if row.peer is not None else ""
        log.info("%s: %s %.4g %s%s%s%s", row.measure, row.ours_label, row.ours, row.unit, peer, r, g)
        return row

    def write(self, out_dir: str | Path) -> None:
        """``<name>.json`` and ``<name>.md``, and one row in the folder's measurement log ``log.jsonl``
        (:mod:`common.measurements`: date, commit, machine and CPU flags, the command, each row's figures), so the
        folder keeps every run while the JSON holds the latest; the setup gains the day of the measurement
        (``measured``), so a README that gathers records measured on different days can say which is which."""
        self.setup.setdefault("measured", datetime.date.today().isoformat())
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / f"{self.name}.json", {"name": self.name, "title": self.title, "setup": self.setup,
                                                "rows": [r.as_dict() for r in self.rows], "series": self.series})
        with atomic_write(out / f"{self.name}.md") as fh:
            fh.write(markdown(self))
        figures = {r.measure: {"ours": r.ours, "peer": r.peer, "unit": r.unit, "ratio": r.ratio} for r in self.rows}
        measurements.append(out / "log.jsonl", " ".join(["python", "-m", f"bench.{self.name}", *sys.argv[1:]]),
                            figures, record=self.name)


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:.4g}"


def markdown(rec: Record) -> str:
    lines = [f"# {rec.title}", "", "Setup: " + ", ".join(f"{k} = {v}" for k, v in rec.setup.items()), "",
             "| measure | ours | peer | unit | ours / peer | goal | met | note |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rec.rows:
        met = "" if r.met is None else ("met" if r.met else "**not met**")
        peer = f"{_num(r.peer)} ({r.peer_label})" if r.peer is not None else ""
        goal = r.goal_text()
        lines.append(f"| {r.measure} | {_num(r.ours)} ({r.ours_label}) | {peer} | {r.unit} | {_num(r.ratio)} | "
                     f"{goal} | {met} | {r.note} |")
    return "\n".join(lines) + "\n"


def read_record(path: str | Path) -> dict:
    return read_json(path)


# The fastest matrix-product instructions a CPU has, best first (its /proc/cpuinfo flag, the name's suffix). Two CPUs
# sold under one model name can differ in them, and CPU benchmarks with them: a 2-core "AMD EPYC" with AVX2 only
# emulates bf16 5-20x slower than fp32, another with AVX-512 BF16 ran a bf16 matrix product 3.7-4.3x faster than fp32
# (docs/scales.md).
CPU_TIERS = (("amx_bf16", "amx"), ("avx512_bf16", "avx512bf16"), ("avx512f", "avx512"), ("avx2", "avx2"))


def cpu_name(cpuinfo: str, cores: int | None) -> str:
    """The CPU's model name without its trademarks and clock, its matrix-product tier (``CPU_TIERS``) and its cores,
    from the text of ``/proc/cpuinfo``: ``AMD-EPYC-avx512bf16-2cores``."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():  # one block per logical CPU: the first one's fields
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    model, flags = fields.get("model name") or platform.processor() or "cpu", set(fields.get("flags", "").split())
    for noise in ("(R)", "(TM)", "CPU", "Processor", "@"):
        model = model.replace(noise, " ")
    words = [w for w in model.split() if not w.endswith("GHz")]
    words += [name for flag, name in CPU_TIERS if flag in flags][:1]
    return "-".join(words) + f"-{cores}cores"


def machine() -> str:
    """A short description of the machine the benchmarks run on: the GPU's name, or the CPU's (:func:`cpu_name`).
    Folders named before the tier was part of the name (``figures/bench/AMD-EPYC-2cores``, ``Intel-Xeon-2cores``)
    keep their names; docs/scales.md says which CPU each was."""
    import torch

    if torch.cuda.is_available():
        return torch.cuda.get_device_name().replace(" ", "-")
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    return cpu_name(cpuinfo, os.cpu_count())


def setup_threads(threads: int) -> dict:
    """Pin torch's intra-op threads (both sides of a comparison run with the same count)."""
    import torch

    torch.set_num_threads(threads)
    return {"threads": threads, "torch": torch.__version__, "machine": machine()}
