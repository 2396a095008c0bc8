"""The DAP variants: main models (Tables 1-4) and the section 5 ablations.

Registry of names used in paths and tables:

* ``tr`` — translation ranking only; ``tr_tlm`` — TR + translation language modelling;
  ``dap`` — TR + RTL (the method, K=2, rho=1, xx->en);
* ``init`` — the initial encoder without DAP's pre-training (the tables' "mBERT / XLM-R (recomputed)" rows of
  Tables 1-3 and the "mBERT" / "XLM-R" rows of Table 4): no training step, pooled as every variant is
  (section 3.2's [CLS], eq. 3, at paper scale);
* ``dap_dir-en2xx`` / ``dap_dir-both`` — RTL direction (Table 5; ``xx2en`` is ``dap``);
* ``dap_rho-<r>`` — reconstruction ratio (Figure 3; ``rho`` 1.0 is ``dap``);
* ``dap_k-<K>`` — RTL head depth (Figure 4; K=2 is ``dap``);
* ``<tr|dap>_no-<source>`` — TR or DAP trained without one source of the mini corpus (a ``data_root`` folder, e.g.
  ``tr_no-anki_pairs``; what the Tatoeba-domain Anki pairs add), the other pairs as they are. A pair
  that two sources share is kept once, under the first (common/data/corpus_mini.py), so leaving that source out
  drops it too (DAP's mini corpus: one Turkish pair of Anki and NTREX-128).
"""
from __future__ import annotations

import re
from typing import Any

from common.runs import INIT

MAIN = ("tr", "tr_tlm", "dap")
LABEL = {"tr": "TR", "tr_tlm": "TR+TLM", "dap": "DAP", INIT: "no pre-training"}
_OBJECTIVES = {"tr": ("tr",), "tr_tlm": ("tr", "tlm"), "dap": ("tr", "rtl")}
_ABLATION = re.compile(r"^dap_(dir-(?P<dir>xx2en|en2xx|both)|rho-(?P<rho>[0-9.]+)|k-(?P<k>[0-9]+))$")
_WITHOUT = re.compile(r"^(?P<base>tr|dap)_no-(?P<source>[a-z0-9_]+)$")
DIRECTIONS = ("xx2en", "en2xx", "both")


def without_source(base: str, source: str) -> str:
    """The variant name of ``base`` trained without ``source``."""
    return f"{base}_no-{source}"


def label(name: str) -> str:
    """A variant's name in the tables: ``LABEL``'s, or 'TR without anki_pairs' for a source left out."""
    w = _WITHOUT.match(name)
    return f"{LABEL[w['base']]} without {w['source']}" if w else LABEL[name]


def is_without_source(name: str) -> bool:
    return bool(_WITHOUT.match(name))


def resolve(name: str, dap_cfg: dict) -> dict:
    """Method settings of variant ``name``: objectives plus the DAP hyper-parameters."""
    cfg = {k: dap_cfg[k] for k in ("rtl_layers", "rho", "direction")}
    if name == INIT:  # the encoder as it starts: TR's model, no step taken
        return {"objectives": ["tr"], **cfg, "train": False}
    if name in _OBJECTIVES:
        return {"objectives": list(_OBJECTIVES[name]), **cfg}
    w = _WITHOUT.match(name)
    if w:
        return {"objectives": list(_OBJECTIVES[w["base"]]), **cfg, "exclude_sources": [w["source"]]}
    m = _ABLATION.match(name)
    if not m:
        raise ValueError(f"unknown DAP variant {name!r}; expected one of {MAIN}, {INIT!r} or "
                         "dap_dir-*/dap_rho-*/dap_k-*/<tr|dap>_no-<source>")
    if m["dir"]:
        cfg["direction"] = m["dir"]
    elif m["rho"]:
        cfg["rho"] = float(m["rho"])
        if not 0 < cfg["rho"] <= 1:
            raise ValueError(f"{name}: rho must be in (0, 1]")
    else:
        cfg["rtl_layers"] = int(m["k"])
    return {"objectives": ["tr", "rtl"], **cfg}


# each section 5 ablation axis and the table (or figure) it fills; a scale whose config leaves an axis out
# (``ablations`` in papers/dap/config/<scale>.yaml) neither trains its runs nor writes its table
SECTION5 = {"direction": "table5_direction", "rho": "figure3_rho", "rtl_layers": "figure4_depth"}


def section5_outputs(ablations: dict) -> list[str]:
    """The section 5 tables and figures a config asks for, in the paper's order."""
    return [name for axis, name in SECTION5.items() if ablations.get(axis)]


def ablation_variants(ablations: dict, dap_cfg: dict) -> dict[str, list[tuple[Any, str]]]:
    """For each ablation axis, (value, variant name) pairs; the default value maps to ``dap``."""
    out: dict[str, list[tuple[Any, str]]] = {}
    for value in ablations.get("direction", []):
        out.setdefault("direction", []).append((value, "dap" if value == dap_cfg["direction"] else f"dap_dir-{value}"))
    for value in ablations.get("rho", []):
        out.setdefault("rho", []).append((value, "dap" if float(value) == float(dap_cfg["rho"])
                                          else f"dap_rho-{value}"))
    for value in ablations.get("rtl_layers", []):
        out.setdefault("rtl_layers", []).append((value, "dap" if int(value) == int(dap_cfg["rtl_layers"])
                                                 else f"dap_k-{value}"))
    return out
