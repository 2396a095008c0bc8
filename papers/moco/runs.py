"""MoCo-BERT's runs: every run a claim compares (the main run and in-batch negatives, the untrained encoders,
Figure 2's queue sizes, Table 5) for every seed; the other runs (MoCo-BERT+NLI of Tables 1-3 and 8, which no claim
compares; the analysis runs of Tables 4, 6 and Figure 2's small batch) for the first seed, which keeps the mini run
within its 4-hour limit (figures/moco/calibration/README.md, "What the workflow cost"); Figure 3 (t-SNE) and
Table 10 (nearest neighbours) for the main model's first seed. Both encoders form one model, ``init`` "pair"."""
from __future__ import annotations

from common.runs import Run, RunRegistry
from papers.moco.variants import MAIN, all_runs, analysis_runs

INIT = "pair"
# Table 1 (Tatoeba), Table 2 (BUCC, distance margin k = 3, eq. 4), Tables 3 and 8 (English STS).
TASKS = ("tatoeba@cosine", "bucc@distance-k3", "sts-en@wmean")
SHOWCASE = ("moco-tsne", "moco-neighbors")


def claim_runs(cfg: dict) -> set[str]:
    """Runs a claim compares (every seed): MoCo-BERT and in-batch negatives ('queue beats in-batch negatives'), the
    encoders before training ('training aligns the encoders'), the Figure 2 queue sizes ('larger queues help') and
    Table 5's pair ('training without momentum fails')."""
    a = analysis_runs(cfg)
    return ({"moco", "inbatch", "init"} | {n for _, n in a["figure2_queue"]}
            | {n for _, n in a["table5_momentum"]})


def registry(cfg: dict) -> RunRegistry:
    seeds = cfg["seeds"]
    compared = claim_runs(cfg)
    ordered = dict.fromkeys([*MAIN, *all_runs(cfg)])  # the main runs first
    reg = RunRegistry("moco", (Run(r, INIT, s, TASKS) for r in ordered
                               for s in (seeds if r in compared else seeds[:1])))
    reg.add(Run("moco", INIT, seeds[0], SHOWCASE))
    return reg
