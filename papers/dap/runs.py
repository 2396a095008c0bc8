"""DAP's runs: the main methods (Tables 1-4, 6-8) for every encoder initialisation and seed, the initial
encoder without pre-training (the tables' recomputed base-model rows; its first seed: no training step, only
XNLI's fine-tuning draws on the seed), and the section 5 ablations (Table 5, Figures 3-4) on the first
initialisation with ``ablation_seed``; with ``without_sources`` (source -> methods), those methods trained without
the source (on ``ablation_seed``, Tatoeba only: the rows of Table 1 that show what a source adds). ``task_seeds``
limits a task to the first N seeds of every method (a budget cut: the claims and tables then count N seeds for it).
Figure 1's evaluations and each section 5 axis's runs (its default point, the main DAP run on ``ablation_seed``,
included) belong to the workflow target of their output (``targets`` in the config, common/targets.py)."""
from __future__ import annotations

from common.runs import Run, RunRegistry
from common.targets import target_of
from papers.dap.variants import INIT, MAIN, SECTION5, ablation_variants, without_source

# Section 4.4 (Tatoeba, cosine, both directions), 4.5 (BUCC, ratio margin k = 4), 4.6 (XNLI).
TASKS = ("tatoeba@cosine", "bucc@ratio-k4", "xnli@zero-shot")
# Figure 1 (papers/dap/tasks.py): TR against DAP as the paper draws them, and the initial encoder they start from;
# on the first initialisation and seed, where the config asks for the figure
FIGURE1_TASK, FIGURE1_METHODS = "dap-tokens", ("init", "tr", "dap")


def registry(cfg: dict) -> RunRegistry:
    inits = list(cfg["encoders"])
    limit = cfg.get("task_seeds", {})
    reg = RunRegistry("dap", (Run(v, init, s, tuple(t for t in TASKS if i < limit.get(t, len(cfg["seeds"]))))
                              for init in inits for v in MAIN for i, s in enumerate(cfg["seeds"])))
    for init in inits:
        reg.add(Run(INIT, init, cfg["seeds"][0], TASKS))
    if cfg.get("figure1"):
        for method in FIGURE1_METHODS:
            reg.add(Run(method, inits[0], cfg["seeds"][0], (FIGURE1_TASK,)), target_of(cfg, "figure1_tokens"))
    for axis, points in ablation_variants(cfg.get("ablations", {}), cfg["dap"]).items():
        for _, variant in points:
            reg.add(Run(variant, inits[0], cfg["ablation_seed"], TASKS), target_of(cfg, SECTION5[axis]))
    for source, bases in cfg.get("without_sources", {}).items():
        for base in bases:
            reg.add(Run(without_source(base, source), inits[0], cfg["ablation_seed"], TASKS[:1]))
    return reg
