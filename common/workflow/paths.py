"""Artifact paths shared by the workflows: every path carries the scale, and model paths
the paper, encoder initialisation, variant and seed, so runs never overwrite each other."""
from __future__ import annotations

from dataclasses import dataclass


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
