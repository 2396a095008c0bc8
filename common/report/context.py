"""What a report's tables, figures and claims read: the experiment's config, its results and corpus manifest, and
the paper's reported numbers (built by :func:`common.report.cli.main`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.report.results import ResultStore


@dataclass
class ReportContext:
    experiment: str
    scale: str
    cfg: dict[str, Any]
    store: ResultStore
    manifest: dict[str, Any]
    reported: dict[str, Any]  # the paper's numbers (papers/<p>/reported.yaml)
    results: Path  # results/<scale>/<experiment>
