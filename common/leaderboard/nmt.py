"""The leaderboard's NMT column: every method's encoder through HICTL's two-stage recipe (section 3.2 / 4.2,
:mod:`common.nmt.recipe`) on one translation pair, beside the random-init Transformer.

The config's ``nmt`` section is the NMT schema of every experiment (``config/defs.yaml``) with one setting; its
systems default to every leaderboard method with an NMT run of its own (``Method.nmt``; a step-0 row's backbone is
the initial encoder's) plus ``random``. The pre-trained encoders are the methods' seed
``encoder_seed`` (1 in every config; a ``leaderboard_seeds`` restriction without it still trains that seed for the
column): one NMT run per method, not one per seed -- the fine-tuning is the expensive part, and the
column asks whether a method's encoder helps translation at all, not how it varies over pre-training seeds. A
method whose model is a language-specific pair (MoCo-BERT) is fine-tuned from the side that reads the source
language. The column's number is the final model's BLEU (stage 2, or the random-init model) on the setting's
first test set, with a bootstrap interval over the test sentences.
"""
from __future__ import annotations

from typing import Any

from common.languages import ENGLISH
from common.leaderboard.methods import METHODS, method
from common.nmt import plan as plan

SETTING = "leaderboard"
NMT_TASK = "nmt"  # the column's name in a tasks restriction (``--config leaderboard_tasks=[...]``, ``--tasks``)
# where the column is a workflow target of its own (``nmt.own_target``): its report's folder beside the table, and
# the table there that the leaderboard's NMT column is read from (common/leaderboard/report_nmt.py)
REPORT_DIR, REPORT_TABLE = "nmt", "leaderboard_nmt"


def restrict_nmt(cfg: dict[str, Any]) -> None:
    """Apply a tasks list that may name the NMT column: without ``nmt`` in it, the config loses its NMT section."""
    if NMT_TASK not in cfg["tasks"]:
        cfg.pop("nmt", None)
    cfg["tasks"] = [t for t in cfg["tasks"] if t != NMT_TASK]


def nmt_config(cfg: dict[str, Any]) -> dict[str, Any] | None:
    """The ``nmt`` section as :mod:`common.workflow.rules.nmt` reads it (systems and encoder sides filled in), or
    None when the config has no NMT column. ``cfg["methods"]`` may be a restriction of the config's methods."""
    if not cfg.get("nmt"):
        return None
    nmt = {**cfg["nmt"], "settings": {name: dict(spec) for name, spec in cfg["nmt"]["settings"].items()}}
    if list(nmt["settings"]) != [SETTING] or len(nmt["settings"][SETTING]["finetune"]) != 1:
        raise ValueError(f"the leaderboard's nmt section has one setting, {SETTING!r}, with one 'finetune' pair")
    spec = nmt["settings"][SETTING]
    systems = spec.get("systems", [*(m for m in cfg["methods"] if m in METHODS and method(m).nmt), plan.RANDOM])
    unknown = [s for s in systems if s != plan.RANDOM and s not in METHODS]
    if unknown:
        raise ValueError(f"leaderboard nmt systems {unknown}: not registered methods (common/leaderboard/methods.py) "
                         f"or {plan.RANDOM!r}")
    spec["systems"] = [s for s in systems if s in cfg["methods"] or s == plan.RANDOM]
    if not any(s != plan.RANDOM for s in spec["systems"]):
        return None  # a restriction that leaves no method with an NMT run
    spec["final_only"] = True
    source = spec["finetune"][0].split("-")[0]
    nmt["encoder_side"] = {m: "en" if source in ENGLISH else "xx" for m in spec["systems"]
                           if m != plan.RANDOM and method(m).embedder == "dual-encoder"}
    return nmt


def column(nmt: dict[str, Any]) -> plan.Translation:
    """The translation a system's NMT cell reports (``system`` left empty)."""
    spec = nmt["settings"][SETTING]
    pair = spec["finetune"][0]
    return plan.Translation(SETTING, "", f"stage2-{pair}", pair, plan.tests_of(spec, pair, "")[0])


def translation(nmt: dict[str, Any], system: str) -> plan.Translation:
    t = column(nmt)
    model = t.pair if system == plan.RANDOM else t.model
    return plan.Translation(t.setting, system, model, t.pair, t.test)
