"""Peak memory of one variant per fresh process: the harness of the memory benchmarks (``scripts/bench_*``).

A benchmark script calls :func:`measure_in_children` with its own path; each variant runs as
``python <script> <args> --child <variant>``, whose last stdout line is a JSON row measured with :func:`peak_rss_mb`
(``VmHWM``: a process's peak resident memory, which only grows, hence one process per variant; not ``ru_maxrss``,
which a child starts at its parent's peak: :mod:`common.rss`).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from common import measurements
from common.io import atomic_write, write_json
from common.rss import peak_rss_bytes

ROOT = Path(__file__).resolve().parent.parent


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB."""
    return peak_rss_bytes() / 2**20


def measure_in_children(script: str, args: list[str], variants: list[str]) -> list[dict]:
    rows = []
    for v in variants:
        proc = subprocess.run([sys.executable, script, *args, "--child", v], capture_output=True, text=True,
                              check=True)
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    return rows


def against_plain(row: dict, plain: dict) -> str:
    """The table cells ``peak MB | vs plain | seconds | vs plain |`` of a variant's row."""
    return (f"{row['peak_above_setup_mb']} | {row['peak_above_setup_mb'] / plain['peak_above_setup_mb']:.2f} | "
            f"{row['seconds']} | {row['seconds'] / plain['seconds']:.2f} |")


def write_figures(out: str | None, lines: list[str], record: dict) -> None:
    """Print the markdown table; with ``out``, write it to ``<out>.md`` and ``record`` to ``<out>.json`` (atomically),
    and append the run's rows to the folder's measurement log ``log.jsonl`` (:mod:`common.measurements`)."""
    print("\n".join(lines))
    if out:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path.with_suffix(".json"), record)
        with atomic_write(path.with_suffix(".md")) as fh:
            fh.write("\n".join(lines) + "\n")
        command = " ".join(["python", Path(sys.argv[0]).resolve().relative_to(ROOT).as_posix()
                            if Path(sys.argv[0]).resolve().is_relative_to(ROOT) else sys.argv[0], *sys.argv[1:]])
        measurements.append(path.parent / "log.jsonl", command, {"rows": record.get("rows", [])}, record=path.name)
