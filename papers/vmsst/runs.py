"""VMSST's runs: every objective of Table 1 for every encoder setting (``encoders``: the paper's 6-layer and
24-layer random init and the pretrained mT5 init; smaller shapes at smoke and mini); Table 4's ablations on
``ablation_init`` (the paper's 24-layer random init); Table 6's four models trained on the ``table6_languages``
only; Table 7's larger batches for Contrastive and VMSST on ``batch_inits``. ``ablations`` may list a subset of
Table 4's (the smoke scale runs three; every variant's wiring is unit-tested).

Every setting also has ``init``, VMSST's model at step 0, on every seed (evaluations only): what training adds.
Table 6 runs only where ``table6_languages`` lists languages, Table 7 on ``batch_inits`` (the mini scale spends
their budget on Table 1's runs instead: papers/vmsst/config/mini.yaml).

Seeds: the runs a claim compares (Contrastive, BiTranslation and VMSST of every setting, the abstract's comparison;
Contrastive and VMSST at every batch size) run every seed of ``seeds`` (``batch_seeds`` for Table 7's larger
batches, when given); VMSST Contrastive and Table 6 the first seed; the ablations ``ablation_seed``."""
from __future__ import annotations

from common.runs import Run, RunRegistry
from papers.vmsst.settings import OBJECTIVES
from papers.vmsst.variants import ABLATIONS, INIT, batch_run

# Section 6.2: English STS, cross-lingual STS, Tatoeba, BUCC (cosine and margin), question retrieval;
# appendix Table 9's second STS protocol.
TASKS = ("sts-en@years-pearson", "sts-en@years-concat-spearman", "sts17@pearson", "tatoeba@cosine",
         "bucc@cosine-oracle", "bucc@ratio-k4-oracle", "question-retrieval@nq", "question-retrieval@mkqa")
TABLE6 = ("contrastive_l4", "bitranslation_l4", "vmsst_l4", "vmsst_full")


CLAIMED = ("contrastive", "bitranslation", "vmsst")  # every seed: the abstract's two comparisons
BATCH = ("contrastive", "vmsst")  # Table 7's objectives


def registry(cfg: dict) -> RunRegistry:
    v, seeds = cfg["tables"], cfg["seeds"]
    reg = RunRegistry("vmsst", (Run(o, init, s, TASKS) for init in cfg["encoders"] for o in (INIT, *OBJECTIVES)
                                for s in (seeds if o in (INIT, *CLAIMED) else seeds[:1])))
    for name in v.get("ablations", ABLATIONS):
        reg.add(Run(name, v["ablation_init"], cfg["ablation_seed"], TASKS))
    for name in TABLE6 if v["table6_languages"] else ():
        reg.add(Run(name, next(iter(cfg["encoders"])), seeds[0], TASKS))
    for init in v["batch_inits"]:
        for f in v["batch_factors"]:
            for o in BATCH:
                for s in v.get("batch_seeds", seeds):
                    reg.add(Run(batch_run(o, f), init, s, TASKS))
    return reg
