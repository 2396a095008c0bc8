"""The cross-paper claims index: every paper's declared claims at a scale, each with the verdict of the paper's last
report, counted by paper and verdict.

    python -m common.report.claims_index --scale mini      # -> figures/claims/mini.md and .json

A paper's claims are the declarations of ``papers/<p>/claims.py`` (``declare(cfg)``, and ``nmt_declare(cfg)`` where
the paper has an NMT report), listed from its config alone; its verdicts are the records its reports wrote
(``figures/<p>/<scale>/claims.json``, ``nmt/claims.json``: :mod:`common.report.claim`). A claim the reports have
not evaluated yet is listed as such, so the index also says what a scale has still to run.
"""
from __future__ import annotations

import argparse
import importlib
import logging
from collections import Counter
from pathlib import Path
from typing import Any

from common.config import ROOT, load_config, papers
from common.io import DataFormatError, atomic_write, read_json, write_json
from common.records import check
from common.report.claim import REPORTED_COLUMN, REPORTED_NOTE, Claim, ClaimRecord
from common.report.tables import Table, to_markdown

log = logging.getLogger(__name__)
REPORTS = {"declare": "claims.json", "nmt_declare": "nmt/claims.json"}  # a declaration -> the report it goes to
NOT_RUN = "not evaluated yet"


def claiming_papers(scale: str) -> list[str]:
    """The papers of this scale (:func:`common.config.papers`) that declare claims (a ``papers/<p>/claims.py``)."""
    return [p for p in papers(scale) if (ROOT / "papers" / p / "claims.py").exists()]


def declared(paper: str, cfg: dict[str, Any]) -> list[tuple[Claim, str]]:
    """A paper's claims at the config's scale, each with the report file its verdict goes to."""
    module = importlib.import_module(f"papers.{paper}.claims")
    return [(c, report) for fn, report in REPORTS.items() if hasattr(module, fn) for c in getattr(module, fn)(cfg)]


def read_claim_records(path: Path) -> list[dict[str, Any]]:
    """The records of a report's ``claims.json``, each checked against :class:`ClaimRecord` (an error names the
    file, the record and the field)."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise DataFormatError(path, None, "records: missing, or not a list of claim records")
    for i, record in enumerate(data["records"]):
        check(record, ClaimRecord, f"{path}: records/{i}")
    records: list[dict[str, Any]] = data["records"]
    return records


def index(scale: str, figures: Path) -> tuple[Table, list[dict[str, Any]]]:
    """The index table (one row per declared claim) and its records."""
    records: list[dict[str, Any]] = []
    for paper in claiming_papers(scale):
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for report in REPORTS.values():
            path = figures / paper / scale / report
            if path.exists():
                found.update({(report, r["id"]): r for r in read_claim_records(path)})
        for claim, report in declared(paper, load_config(paper, scale)):
            r = found.get((report, claim.id), {})
            records.append({"paper": paper, "id": claim.id, "where": claim.where, "statement": claim.statement,
                            "metric": claim.metric, "setting": claim.setting, "sign": claim.sign,
                            "verdict": r.get("verdict", NOT_RUN), "difference": r.get("difference"),
                            "lo": r.get("lo"), "hi": r.get("hi"), "seeds": r.get("seeds"), "reported": claim.reported})
    rows = [[r["paper"], r["id"], r["where"], r["statement"], r["metric"], r["setting"] or "–", r["difference"],
             f"[{r['lo']:.1f}, {r['hi']:.1f}]" if r["lo"] is not None else "–", r["reported"] or "–", r["seeds"],
             r["verdict"]]
            for r in records]
    counts = {p: Counter(r["verdict"].removesuffix(" on 1 seed") for r in records if r["paper"] == p)
              for p in dict.fromkeys(r["paper"] for r in records)}
    summary = "; ".join(f"{p}: {sum(c.values())} claims (" + ", ".join(f"{v} {n}" for v, n in sorted(c.items())) + ")"
                        for p, c in counts.items())
    return Table("index", f"Every paper's claims at scale '{scale}'",
                 ["paper", "id", "where", "claim", "metric", "setting", "B − A", "95% CI", REPORTED_COLUMN, "seeds",
                  "verdict"], rows,
                 [summary + ".", "Declared in papers/<p>/claims.py; verdicts from each paper's last report "
                  f"(figures/<p>/{scale}/claims.json), '{NOT_RUN}' where it has none. Method: common/report/claims.py.",
                  REPORTED_NOTE]
                 ), records


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", required=True)
    p.add_argument("--figures", default="figures")
    p.add_argument("--out", default=None, help="default: <figures>/claims/<scale> (.md and .json)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    table, records = index(a.scale, Path(a.figures))
    out = Path(a.out or Path(a.figures) / "claims" / a.scale)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(out.with_suffix(".md")) as fh:
        fh.write(to_markdown(table))
    write_json(out.with_suffix(".json"), {"scale": a.scale, "records": records})
    log.info("%d claims -> %s.md (%s)", len(records), out, table.notes[0])


if __name__ == "__main__":
    main()
