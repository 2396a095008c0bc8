"""HICTL's runs by name (Tables 1 and 3):

* ``init`` -- the initial encoder, untrained (Table 1's XLM-R row: the published model);
* ``lm_only`` -- the baseline continued with MLM/TLM only on the same data and steps (our control, isolating what
  the contrastive terms add; the paper has no such row: its in-house XLM-R is XLM-R itself, fine-tuned by the
  authors, appendix C);
* ``hictl`` -- L_LM + L_S + L_W (Table 1 "Hictl");
* ``hictl_hns`` -- with the hard negatives of eqs. 5-6 (Table 1 "+ Hns", Table 3 "Full Model");
* ``hictl_hns_no-sctl``, ``hictl_hns_no-wctl``, ``hictl_hns_no-mt`` -- Table 3's ablations of the full model:
  without sentence-level CTL, without word-level CTL, without parallel (MT) data (monolingual sentences only).
"""
from __future__ import annotations

from common.runs import INIT

VARIANTS = {
    INIT: {"sentence": False, "word": False, "hard_negatives": False, "parallel": True, "train": False},
    "lm_only": {"sentence": False, "word": False, "hard_negatives": False, "parallel": True, "train": True},
    "hictl": {"sentence": True, "word": True, "hard_negatives": False, "parallel": True, "train": True},
    "hictl_hns": {"sentence": True, "word": True, "hard_negatives": True, "parallel": True, "train": True},
    "hictl_hns_no-sctl": {"sentence": False, "word": True, "hard_negatives": False, "parallel": True, "train": True},
    "hictl_hns_no-wctl": {"sentence": True, "word": False, "hard_negatives": True, "parallel": True, "train": True},
    "hictl_hns_no-mt": {"sentence": True, "word": True, "hard_negatives": True, "parallel": False, "train": True},
}
ABLATIONS = ("hictl_hns_no-sctl", "hictl_hns_no-wctl", "hictl_hns_no-mt")


def ablations(cfg: dict) -> list[str]:
    """The Table 3 ablations a config runs (``hictl.ablations``, default all), in Table 3's order."""
    chosen = cfg["hictl"].get("ablations", ABLATIONS)
    return [name for name in ABLATIONS if name in chosen]


def resolve(name: str) -> dict:
    if name not in VARIANTS:
        raise ValueError(f"unknown HICTL run {name!r}; expected one of {', '.join(VARIANTS)}")
    return dict(VARIANTS[name])
