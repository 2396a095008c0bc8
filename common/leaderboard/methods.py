"""The leaderboard's methods: one registration each.

A :class:`Method` names the paper whose training recipe trains it, that paper's name for it, and
the embedder kind its saved model has (which decides the tasks it can be scored on, e.g. XNLI's
cross-encoder fine-tuning needs one shared encoder). Adding a paper's method to the leaderboard is
one line here plus its method section under ``papers:`` in ``config/<scale>.yaml``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.eval.tasks import get_task
from common.runs import INIT, Run, RunRegistry


@dataclass(frozen=True)
class Method:
    name: str
    paper: str
    variant: str
    label: str
    reference: str
    embedder: str = "sentence-encoder"
    trained: bool = True  # False: the initial encoder as every method starts from it (one seed: nothing is drawn)
    nmt: bool = True  # False: no NMT run of its own (its backbone is another row's, which has the run)


METHODS: dict[str, Method] = {m.name: m for m in (
    Method(INIT, "dap", INIT, "initial encoder (no training)", "the encoder every method starts from",
           trained=False),
    Method("tr", "dap", "tr", "TR (in-batch translation ranking)", "DAP eq. 5 (Feng et al. 2022)"),
    Method("tr_tlm", "dap", "tr_tlm", "TR+TLM", "DAP section 4 baseline (LaBSE-style)"),
    Method("dap", "dap", "dap", "DAP (TR + RTL)", "Li et al. 2023"),
    Method("moco", "moco", "moco", "MoCo-BERT (dual momentum contrast)", "Wang et al. 2021", "dual-encoder"),
    Method("contrastive", "vmsst", "contrastive", "Contrastive (symmetric in-batch, dot product)",
           "VMSST section 6.3 (Wieting et al. 2023)"),
    Method("bitranslation", "vmsst", "bitranslation", "BiTranslation (translation terms only)", "VMSST section 6.3"),
    Method("vmsst", "vmsst", "vmsst", "VMSST (variational source separation)", "Wieting et al. 2023"),
    Method("vmsst_step0", "vmsst", INIT, "VMSST at step 0 (the initial encoder with VMSST's new heads)",
           "VMSST's model before its first update: what its row starts from", trained=False, nmt=False),
    Method("lm_only", "hictl", "lm_only", "MLM/TLM only", "HICTL Table 1 baseline (Wei et al. 2021)"),
    Method("hictl", "hictl", "hictl_hns", "HICTL (sentence + word CTL, hard negatives)", "Wei et al. 2021"),
)}


def method(name: str) -> Method:
    if name not in METHODS:
        raise KeyError(f"unknown leaderboard method {name!r}; registered: {', '.join(METHODS)}")
    return METHODS[name]


def registry(cfg: dict[str, Any]) -> RunRegistry:
    """Every method x seed on the config's one initial encoder (the untrained one on the first seed only), scored on
    the tasks that apply to it."""
    (init,) = cfg["encoders"]
    return RunRegistry("leaderboard", (
        Run(m, init, seed, tuple(t for t in cfg["tasks"] if get_task(t).applies_to(method(m).embedder)))
        for m in cfg["methods"] for seed in (cfg["seeds"] if method(m).trained else cfg["seeds"][:1])))
