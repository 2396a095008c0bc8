"""What a report's tables, figures and claims read: the experiment's config, its results and corpus manifest, and
the paper's reported numbers (built by :func:`common.report.cli.main`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.report.results import ResultStore
from common.runs import MAIN_TARGET
from common.targets import target_of


@dataclass
class ReportContext:
    experiment: str
    scale: str
    cfg: dict[str, Any]
    store: ResultStore
    manifest: dict[str, Any]
    reported: dict[str, Any]  # the paper's numbers (papers/<p>/reported.yaml)
    results: Path  # results/<scale>/<experiment>
    target: str = MAIN_TARGET  # the workflow target whose outputs the report writes (common/targets.py)

    def wants(self, output: str) -> bool:
        """Whether this report writes ``output`` (a table or figure name): whether its target does."""
        return target_of(self.cfg, output) == self.target
