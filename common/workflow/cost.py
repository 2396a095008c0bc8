"""What a workflow run cost, read back from the files Snakemake wrote: each job's ``benchmark:`` file (wall
seconds, CPU seconds, peak resident memory) and the run logs in ``.snakemake/log`` (when each invocation
started and ended). Each paper's README states its mini wall time; this is how it is measured.

    python -m common.workflow.cost /path/to/workdir --scale mini --paper moco --cores 2

Two numbers answer different questions. The **measured wall time** sums, over the invocations that ran a job of
this paper at this scale, the span from the invocation's start (its log's ``Date:``) to its end (``Elapsed time:``
when it finished; otherwise, killed or still running, the log's last write): a run stopped and resumed counts the
time it ran, and an invocation that also ran other papers' jobs counts whole. **CPU-s / cores** is what the jobs
would take with the cores always busy (a lower bound). A job that was interrupted and resumed (training resumes from
its last checkpoint) has a benchmark file of its last attempt only, so the benchmark sums undercount such a run.
"""
from __future__ import annotations

import argparse
import csv
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

# a Snakemake log: its header's start, a job's first line, and the last line of an invocation that finished
_DATE = re.compile(r"^\s*Date: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})$")
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4})\]$")  # before each job start and end
_JOB = re.compile(r"^(local)?rule \w+:$")
_ELAPSED = re.compile(r"^Elapsed time: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)$")


@dataclass(frozen=True)
class JobCost:
    """One job's benchmark file: ``stage`` is the first path part under ``benchmarks/<scale>/<paper>/``."""

    stage: str
    path: Path
    wall_s: float
    cpu_s: float
    max_rss_mb: float


def read_benchmark(path: Path, stage: str) -> JobCost:
    """A Snakemake benchmark TSV (header ``s  h:m:s  max_rss ... cpu_time``, one row per repeat; the first is
    used). Raises ``ValueError`` naming the file when it lacks a column or a number."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows:
        raise ValueError(f"{path}: an empty benchmark file")
    row = rows[0]
    try:  # Snakemake writes NA where it measured nothing
        wall, cpu, rss = (0.0 if row[k] == "NA" else float(row[k]) for k in ("s", "cpu_time", "max_rss"))
        return JobCost(stage, path, wall, cpu, rss)
    except KeyError as e:
        raise ValueError(f"{path}:2: no column {e.args[0]!r} (not a Snakemake benchmark file?)") from None
    except ValueError as e:
        raise ValueError(f"{path}:2: {e}") from None


def benchmarks(workdir: Path, scale: str, paper: str) -> list[JobCost]:
    """Every benchmark file of one paper at one scale, in path order."""
    root = workdir / "benchmarks" / scale / paper
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no benchmark files (has the workflow run in {workdir}?)")
    files = sorted(root.rglob("*.tsv"))
    return [read_benchmark(f, f.relative_to(root).parts[0].removesuffix(".tsv")) for f in files]


def invocation_spans(workdir: Path, scale: str, paper: str) -> list[tuple[datetime, datetime]]:
    """(start, end) of each Snakemake invocation in ``workdir`` that ran a job of ``paper`` at ``scale`` (dry runs
    and runs that did nothing have none), oldest first; see the module docstring for what start and end are."""
    spans = []
    for f in sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log")):
        text = f.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines()
        if f"logs/{scale}/{paper}/" not in text or not any(_JOB.match(line) for line in lines):
            continue
        dates = [datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S") for line in lines if (m := _DATE.match(line))]
        stamps = [datetime.strptime(m[1], "%a %b %d %H:%M:%S %Y") for line in lines if (m := _STAMP.match(line))]
        if not (dates or stamps):
            continue
        start = (dates or stamps)[0]
        elapsed = [e for line in lines if (e := _ELAPSED.match(line))]
        if elapsed:
            hours, minutes, seconds = elapsed[-1].groups()
            end = start + timedelta(hours=int(hours), minutes=int(minutes), seconds=float(seconds))
        else:
            end = datetime.fromtimestamp(f.stat().st_mtime)  # local time, as the log's own times
        spans.append((start, end))
    return spans


def _hours(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min"


def report(jobs: list[JobCost], spans: list[tuple[datetime, datetime]], cores: int) -> str:
    """A Markdown table of the jobs by stage (count, summed wall and CPU seconds, the largest peak RSS), then the
    measured wall time and the CPU-bound lower bound on ``cores`` cores."""
    stages: dict[str, list[JobCost]] = {}
    for j in jobs:
        stages.setdefault(j.stage, []).append(j)
    lines = ["| stage | jobs | wall-s (sum) | CPU-s (sum) | peak RSS (MB, max) |", "|---|---|---|---|---|"]
    for stage, js in stages.items():
        lines.append(f"| {stage} | {len(js)} | {sum(j.wall_s for j in js):,.0f} | {sum(j.cpu_s for j in js):,.0f} "
                     f"| {max(j.max_rss_mb for j in js):,.0f} |")
    cpu = sum(j.cpu_s for j in jobs)
    lines.append(f"| all | {len(jobs)} | {sum(j.wall_s for j in jobs):,.0f} | {cpu:,.0f} "
                 f"| {max((j.max_rss_mb for j in jobs), default=0):,.0f} |")
    wall = sum((b - a).total_seconds() for a, b in spans)
    lines += ["", f"- Measured wall time: {_hours(wall)} ({wall:,.0f} s) over {len(spans)} invocation(s) that ran "
              "jobs (each from its start to its end or last log line).",
              f"- CPU-s / {cores} cores: {_hours(cpu / cores)} (the jobs with every core busy; a lower bound)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workdir", type=Path, help="the workflow's working directory (snakemake -d)")
    p.add_argument("--scale", required=True)
    p.add_argument("--paper", required=True, help="the paper (or 'leaderboard') whose benchmark files to read")
    p.add_argument("--cores", type=int, default=2)
    a = p.parse_args(argv)
    print(report(benchmarks(a.workdir, a.scale, a.paper), invocation_spans(a.workdir, a.scale, a.paper), a.cores),
          end="")


if __name__ == "__main__":
    main()
