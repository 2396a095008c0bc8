"""The MoCo-BERT runs: main models (Tables 1-3, 8) and the section 3.4 analysis runs.

Registry of names used in paths and tables:

* ``init`` -- the encoders before any training (step 0), the starting point of every run;
* ``moco`` -- dual momentum contrast with the main queue size (section 3.1);
* ``inbatch`` -- the in-batch-negatives baseline, same encoders, data and schedule;
* ``moco_nli`` -- ``moco`` plus the NLI multi-task loss (appendix B, Table 3 bottom);
* ``q<K>[_b<B>][_t<tau>][_shared][_pool-<mode>]`` -- analysis runs. Section 3.4: "unless
  explicitly mentioned, we use a memory queue size 204800", half the main queue; each
  config's ``analysis.queue_size`` plays that role. ``_b``: batch size (the small-batch
  point of Figure 2), ``_t``: temperature (Table 4), ``_shared``: no momentum encoder
  (Table 5), ``_pool-``: pooling (Table 6).
"""
from __future__ import annotations

import re

from common.runs import INIT

MAIN = ("moco", "inbatch", "moco_nli")
_ANALYSIS = re.compile(r"^q(?P<q>\d+)(_b(?P<b>\d+))?(_t(?P<t>[0-9.]+))?(?P<shared>_shared)?"
                       r"(_pool-(?P<pool>mean|max|cls))?$")


def resolve(name: str, cfg: dict) -> dict:
    """Settings of run ``name``: queue size, temperature, momentum mode, pooling, batch, negatives, NLI."""
    m, t = cfg["moco"], cfg["training"]
    s = {"queue_size": m["queue_size"], "temperature": m["temperature"], "momentum_mode": "ema",
         "pooling": cfg["pooling"], "global_batch_size": t["global_batch_size"], "negatives": "queue", "nli": False,
         "max_steps": t["max_steps"]}
    if name == INIT:
        return {**s, "max_steps": 0}
    if name == "moco":
        return s
    if name == "inbatch":
        return {**s, "negatives": "in_batch", "queue_size": 0, "momentum_mode": "shared"}
    if name == "moco_nli":
        return {**s, "nli": True}
    g = _ANALYSIS.match(name)
    if not g:
        raise ValueError(f"unknown MoCo-BERT run {name!r}; expected init, {', '.join(MAIN)} or "
                         "q<K>[_b<B>][_t<tau>][_shared][_pool-<mode>]")
    s["queue_size"] = int(g["q"])
    if g["b"]:
        s["global_batch_size"] = int(g["b"])
    if g["t"]:
        s["temperature"] = float(g["t"])
    if g["shared"]:
        s["momentum_mode"] = "shared"
    if g["pool"]:
        s["pooling"] = g["pool"]
    if s["queue_size"] % s["global_batch_size"]:
        raise ValueError(f"run {name!r}: queue size {s['queue_size']} is not a multiple of the global batch "
                         f"{s['global_batch_size']} (MoCo's ring buffer needs whole batches)")
    return s


def _num(x: float) -> str:
    return f"{x:g}"


def analysis_runs(cfg: dict) -> dict[str, list[tuple]]:
    """(value, run name) per figure/table of section 3.4."""
    a, m = cfg["analysis"], cfg["moco"]
    q = f"q{a['queue_size']}"
    # the main queue size with default settings is the main run itself
    base = "moco" if a["queue_size"] == m["queue_size"] else q
    return {
        "figure2_queue": [(k, "moco" if k == m["queue_size"] else f"q{k}") for k in a["queue_sizes"]],
        "figure2_small_batch": [(a["small_batch"], f"{q}_b{a['small_batch']}")],
        "table4_temperature": [(tau, base if tau == m["temperature"] else f"{q}_t{_num(tau)}")
                               for tau in a["temperatures"]],
        "table5_momentum": [("momentum", base), ("shared", f"{q}_shared")],
        "table6_pooling": [(p, base if p == cfg["pooling"] else f"{q}_pool-{p}") for p in a["poolings"]],
    }


def all_runs(cfg: dict) -> list[str]:
    names = ["init", *MAIN]
    for pts in analysis_runs(cfg).values():
        names += [n for _, n in pts if n not in names]
    return names
