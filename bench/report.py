"""``figures/bench/<machine>/<scale>/README.md``: every benchmark's table, and a summary of the goals.

    python -m bench.report --dir figures/bench/<machine>/mini train_step encode mining overheads scaling
"""
from __future__ import annotations

import argparse
import datetime
import logging
from pathlib import Path

from bench.results import read_record
from common.io import atomic_write

PLOTS = {"mining": "mining_time.png", "scaling": "scaling.png"}


def summary_line(rec: dict) -> list[str]:
    out = []
    for r in rec["rows"]:
        if r["met"] is None:
            continue
        verdict = "met" if r["met"] else "**not met**"
        shown = (f"ours/peer {r['ratio']:.3g}" if r["goal_on"] == "ratio"
                 else f"ours - peer {r['ours'] - r['peer']:+.2f}")
        goal = f"<= {r['goal']:g}" if r["goal_on"] == "ratio" else f"abs <= {r['goal']:g}"
        out.append(f"| {rec['title'].split(':')[0]} | {r['measure']} | {shown} | {goal} | {verdict} |")
    return out


def when(records: dict[str, dict]) -> str:
    """When the records were measured (their setup's ``measured`` day): one day for all, or each record's day when
    they differ (a benchmark rerun alone); a record written before the field existed says so."""
    days = {name: rec["setup"].get("measured") for name, rec in records.items()}
    if len(set(days.values())) == 1 and None not in days.values():
        return f"Measured by `snakemake bench/all` on {next(iter(days.values()))}"
    return (f"Report written on {datetime.date.today().isoformat()} from benchmarks measured on different days ("
            + "; ".join(f"{name}: {day or 'day not recorded'}" for name, day in days.items()) + ")")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True)
    p.add_argument("names", nargs="+")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    d = Path(a.dir)
    recs = [read_record(d / f"{n}.json") for n in a.names]
    machine = recs[0]["setup"].get("machine", "")
    lines = [f"# Benchmarks on {machine}", "",
             f"{when(dict(zip(a.names, recs)))}; every ratio is ours / the peer measured in the same process (below "
             "1: ours is cheaper). Each table below is also a file here (`<benchmark>.md`, with its raw "
             "measurements in `<benchmark>.json`).", "",
             "## Goals", "", "| benchmark | measure | measured | goal | verdict |", "|---|---|---|---|---|"]
    for rec in recs:
        lines += summary_line(rec)
    for name in a.names:
        lines += ["", (d / f"{name}.md").read_text().replace("# ", "## ", 1).rstrip()]
        if name in PLOTS:
            lines += ["", f"![{name}]({PLOTS[name]})"]
    with atomic_write(d / "README.md") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
