"""HICTL's runs: Table 1's models (the untrained initial encoder, the MLM/TLM-only baseline, HICTL, HICTL + hard
negatives) for every encoder setting and seed (the initial encoder too: XNLI fine-tunes it on the seed, and a claim
pairs it with HICTL seed by seed), Table 3's ablations of the full model on the first setting (``ablation_seed``;
``hictl.ablations`` may list a subset, or none as the ci scale does); every run on the config's XTREME tasks
(``hictl.tasks``: the ones with data at the scale), and Figure 4's t-SNE (``hictl-tsne``) for the initial encoder
and the full model (first seed)."""
from __future__ import annotations

from common.runs import Run, RunRegistry
from papers.hictl.variants import ablations

MAIN = ("init", "lm_only", "hictl", "hictl_hns")
FIGURE4 = ("init", "hictl_hns")


def registry(cfg: dict) -> RunRegistry:
    tasks, seeds = tuple(cfg["hictl"]["tasks"]), cfg["seeds"]
    first = next(iter(cfg["encoders"]))
    reg = RunRegistry("hictl")
    for init in cfg["encoders"]:
        for m in MAIN:
            for s in seeds:
                figure = m in FIGURE4 and s == seeds[0] and init == first
                reg.add(Run(m, init, s, tasks + (("hictl-tsne",) if figure else ())))
    for name in ablations(cfg):
        reg.add(Run(name, first, cfg["ablation_seed"], tasks))
    return reg
