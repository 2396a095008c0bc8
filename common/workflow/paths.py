"""Artifact paths shared by the workflows: every path carries the scale, and model paths
the paper, encoder initialisation, variant and seed, so runs never overwrite each other."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.config import REHEARSAL_SCALES


@dataclass(frozen=True)
class Paths:
    results_root: str
    figures_root: str
    scale: str
    paper: str

    @property
    def results(self) -> str:
        return f"{self.results_root}/{self.scale}"

    @property
    def corpus(self) -> str:
        """Per paper: each paper's config chooses its own training languages and sources."""
        return f"{self.paper_results}/corpus"

    @property
    def paper_results(self) -> str:
        return f"{self.results}/{self.paper}"

    @property
    def figures(self) -> str:
        return f"{self.figures_root}/{self.paper}/{self.scale}"

    def log(self, name: str) -> str:
        return f"logs/{self.scale}/{self.paper}/{name}.log"

    def bench(self, name: str) -> str:
        return f"benchmarks/{self.scale}/{self.paper}/{name}.tsv"

    def run_dir(self, init: str, variant: str, seed: int | str) -> str:
        return f"{self.paper_results}/models/{init}/{variant}/seed{seed}"

    def eval_json(self, init: str, variant: str, seed: int | str, task: str) -> str:
        return f"{self.paper_results}/eval/{init}/{variant}/seed{seed}/{task}.json"


def mirror_dir(config: dict[str, Any]) -> str | None:
    """The rehearsal's local mirror of every download (built by the top-level ``mirror`` rule from the rehearsal
    configs, so it serves the ``ci`` scale's cut of them too), or None."""
    return f"{config['results_root']}/rehearsal/mirror" if config["scale"] in REHEARSAL_SCALES else None


def download_args(config: dict[str, Any]) -> list[str]:
    """The download source of a corpus or model job, as command-line arguments (a rule quotes each: ``{...:q}``):
    the rehearsal's mirror, a site mirror, or the real hosts (none)."""
    if mirror := mirror_dir(config):
        return ["--mirror", mirror]
    return ["--base-url", config["download_base_url"]] if config.get("download_base_url") else []


def download_inputs(config: dict[str, Any]) -> list[str]:
    """What a download job waits for: the rehearsal's mirror, when there is one."""
    return [f"{mirror}/done.json"] if (mirror := mirror_dir(config)) else []


def model_done(config: dict[str, Any], folder: str) -> str:
    """The completion marker of a pinned checkpoint's download (:mod:`common.models.hub`)."""
    return f"{config['cache_root']}/models/{folder}/done.json"
