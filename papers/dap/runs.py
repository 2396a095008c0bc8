"""DAP's runs: the main methods (Tables 1-4, 6-8) for every encoder initialisation and seed, the initial
encoder without pre-training (the tables' recomputed base-model rows; its first seed: no training step, only
XNLI's fine-tuning draws on the seed), and the section 5 ablations (Table 5, Figures 3-4) on the first
initialisation with ``ablation_seed``; with ``without_sources``, TR and DAP trained without each listed source of
the mini corpus (on ``ablation_seed``, Tatoeba only: the rows of Table 1 that show what a source adds)."""
from __future__ import annotations

from common.runs import Run, RunRegistry
from papers.dap.variants import INIT, MAIN, ablation_variants, without_source

# Section 4.4 (Tatoeba, cosine, both directions), 4.5 (BUCC, ratio margin k = 4), 4.6 (XNLI).
TASKS = ("tatoeba@cosine", "bucc@ratio-k4", "xnli@zero-shot")


def registry(cfg: dict) -> RunRegistry:
    inits = list(cfg["encoders"])
    reg = RunRegistry("dap", (Run(v, init, s, TASKS) for init in inits for v in MAIN for s in cfg["seeds"]))
    for init in inits:
        reg.add(Run(INIT, init, cfg["seeds"][0], TASKS))
    for points in ablation_variants(cfg.get("ablations", {}), cfg["dap"]).values():
        for _, variant in points:
            reg.add(Run(variant, inits[0], cfg["ablation_seed"], TASKS))
    for source in cfg.get("without_sources", []):
        for base in ("tr", "dap"):
            reg.add(Run(without_source(base, source), inits[0], cfg["ablation_seed"], TASKS[:1]))
    return reg
