"""How often the claims' verdicts call noise a finding, and how often they find a real difference: simulated pairs of
systems scored by :func:`common.report.claims.paired_difference`.

    python -m common.report.calibration --out figures/bench/claims_calibration   # the committed table

Each trial draws a test set of ``items`` binary items (item difficulty: a logit from N(0.5, 1)) and two systems
trained with ``seeds`` seeds. Seed s of either system moves every logit by a shared offset (paired seeds: the same data
order) plus its own; every (item, seed) outcome is drawn anew (item-by-seed noise). Under the null both systems have
the same distribution, optionally with fixed per-item differences of mean zero (``item_effect``: +c_i for B and -c_i
for A, c_i from N(0, item_effect), so the population means stay equal); ``effect`` adds a true difference to B's
logits. With ``cluster`` > 1 the items come in clusters of that size (an XNLI premise's three hypotheses, a Tatoeba
pair's two directions) that share their fixed difference c, and the bootstrap draws clusters whole unless
``respect_clusters`` is off (the naive item bootstrap, to show what clustering costs). The rate of verdicts that are
not "inconclusive" is the false-finding rate under the null and the power otherwise. Measured (2026-11-27, seed 3;
seed offsets 0.05, fixed differences of sd 2.0 shared within clusters of 3, 360 items: ``CLUSTERED``): drawn whole,
3.4 % and 4.4 % of 1000 null pairs called findings at 3 and 5 seeds (the committed table's 2000: 3.4 % and 4.9 %);
drawn item by item, 12.3 % of 300 at 3 seeds (the table: 12.8 % and 20.3 %). The rule's limit:
with few clusters and the items' part dominating (24 clusters of 5, sd 2.0) it called 5.5 % and 7.7 % at 3 and 5
seeds, the normal quantile on a bootstrap over few clusters being narrow; the tables' tasks have hundreds of
clusters or more (Tatoeba 1,000 pairs a language, XNLI ~280 premises at mini, BUCC 150 gold pairs a language pair).
"""
from __future__ import annotations

import argparse
import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from common.report.claims import AlignedAccuracies, Difference, MeanOfAccuracies, paired_difference, verdict

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scenario:
    seeds: int
    effect: float = 0.0  # added to B's logits (0: the null)
    item_effect: float = 0.0  # sd of fixed per-item system differences of mean zero
    items: int = 120
    seed_sd: float = 0.3  # shared per-seed offset (paired seeds)
    system_seed_sd: float = 0.2  # each system's own per-seed offset
    cluster: int = 1  # items per cluster; a cluster's items share their fixed difference c
    respect_clusters: bool = True  # the bootstrap draws clusters whole (False: each item alone)


def _outcomes(logits: np.ndarray, rng: np.random.Generator) -> str:
    hits = rng.random(logits.shape) < 1 / (1 + np.exp(-logits))
    return "".join("1" if h else "0" for h in hits)


def _half_widths(d: Difference) -> dict[str, float]:
    """The interval's half-width under our rule and the alternatives it was chosen over, from the same parts."""
    s, v_seed, v_items = d.seeds, d.se_seed ** 2, d.se_items ** 2
    t = student_t.ppf(0.975, s - 1)
    welch_df = (v_seed + v_items) ** 2 * (s - 1) / v_seed ** 2 if v_seed > 0 else math.inf
    return {"ours": (d.hi - d.lo) / 2, "t_whole": t * math.sqrt(v_seed + v_items),
            "welch": student_t.ppf(0.975, welch_df) * math.sqrt(v_seed + v_items), "t_seeds": t * math.sqrt(v_seed)}


RULES = {"ours": "ours: t(S-1) seeds' part, z items' part, in quadrature",
         "t_whole": "t(S-1) on the whole variance", "welch": "Welch-Satterthwaite df, whole variance",
         "t_seeds": "t-test on the seeds' differences alone"}


def findings(sc: Scenario, trials: int, seed: int = 0, replicates: int = 200) -> dict[str, float]:
    """Per interval rule (:data:`RULES`), the fraction of ``trials`` whose interval excludes zero (a verdict other
    than 'inconclusive'); the rules share every simulated pair and bootstrap."""
    rng = np.random.default_rng(seed)
    found = dict.fromkeys(RULES, 0)
    for trial in range(trials):
        mu = rng.normal(0.5, 1.0, sc.items)
        ids = np.arange(sc.items) // sc.cluster  # (items,): each item's cluster
        c = rng.normal(0.0, sc.item_effect, ids[-1] + 1)[ids] if sc.item_effect else np.zeros(sc.items)
        a: list[MeanOfAccuracies] = []
        b: list[MeanOfAccuracies] = []
        for _ in range(sc.seeds):
            shared = rng.normal(0.0, sc.seed_sd)
            for system, logits in ((a, mu - c), (b, mu + c + sc.effect)):
                outcomes = [_outcomes(logits + shared + rng.normal(0.0, sc.system_seed_sd), rng)]
                system.append(MeanOfAccuracies(outcomes) if sc.cluster == 1 else
                              AlignedAccuracies(outcomes, ids.tolist() if sc.respect_clusters else None))
        d = paired_difference(a, b, replicates=replicates, seed=trial)
        halves = _half_widths(d)
        assert (verdict(d) != "inconclusive") == (abs(d.mean) > halves["ours"] * (1 - 1e-12))
        for rule, half in halves.items():
            found[rule] += abs(d.mean) > half
    return {rule: n / trials for rule, n in found.items()}


def expected_points(sc: Scenario) -> float:
    """The true accuracy difference B - A in points that ``sc.effect`` makes (items over N(0.5, 1))."""
    mu = np.random.default_rng(0).normal(0.5, 1.0, 1_000_000)
    return 100 * float(np.mean(1 / (1 + np.exp(-mu - sc.effect)) - 1 / (1 + np.exp(-mu))))


def limit(trials: int, nominal: float = 0.05) -> float:
    """The nominal rate plus three Monte Carlo standard errors."""
    return nominal + 3 * math.sqrt(nominal * (1 - nominal) / trials)


# correlated items whose fixed differences dominate: 120 clusters of 3 items (an XNLI premise's hypotheses)
CLUSTERED: dict[str, Any] = {"item_effect": 2.0, "cluster": 3, "items": 360, "seed_sd": 0.05, "system_seed_sd": 0.05}


def main(argv: list[str] | None = None) -> None:
    from common.io import atomic_write

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--out", default="figures/bench/claims_calibration")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    rows = []
    for seeds in (3, 4, 5):  # the claims tables' seed counts: DAP 3, VMSST 4, MoCo-BERT 5
        for name, sc in (("null", Scenario(seeds)), ("null, fixed item differences", Scenario(seeds, item_effect=0.5)),
                         ("true difference +0.25 logit", Scenario(seeds, effect=0.25)),
                         ("true difference +0.5 logit", Scenario(seeds, effect=0.5)),
                         ("null, clustered items drawn whole", Scenario(seeds, **CLUSTERED)),
                         ("null, clustered items drawn one by one", Scenario(seeds, respect_clusters=False,
                                                                             **CLUSTERED))):
            rate = findings(sc, a.trials)
            name += f" ({expected_points(sc):+.1f} points)" if sc.effect else ""
            rows.append(f"| {seeds} | {name} | " + " | ".join(f"{rate[r]:.3f}" for r in RULES) + " |")
            log.info("%d seeds, %s: %s", seeds, name, rate)
    text = "\n".join([
        "# Claims' intervals: false findings under the null, power under a true difference", "",
        f"`python -m common.report.calibration --trials {a.trials}` (common/report/calibration.py: {a.trials} "
        "simulated pairs of systems per row, 120 binary items, 200 item-bootstrap replicates; the clustered rows: 360 "
        "items in 120 clusters of 3 sharing a fixed difference of sd 2.0 logits, seed offsets 0.05). A null row must "
        f"stay at or below {limit(a.trials):.3f} (5 % plus three Monte Carlo standard errors). Each column: the rate "
        "of intervals that exclude zero (a verdict other than 'inconclusive') under one rule, on the same pairs; the "
        "first is the claims tables' (common/report/claims.py), the others the rules it was chosen over.", "",
        "| seeds | scenario | " + " | ".join(RULES.values()) + " |", "|---|---|" + "---|" * len(RULES), *rows, ""])
    with atomic_write(f"{a.out}.md") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
