"""MoCo-BERT's claims, declared (:mod:`common.report.claim`): the queue of keys beats in-batch negatives (the
abstract and section 1: in-batch negatives "can suffer from the issue of easy negatives"; the paper's motivation,
which no table of the paper measures against an in-batch model of the same setup), larger queues help (Figure 2,
section 3.4), training without the momentum encoder fails (Table 5, section 3.4); and
Table 1's premise that the training aligns the two encoders: MoCo-BERT above the same encoders before training on the
headline task (the paper's unaligned row is mBERT; here the encoders it starts from, every seed: the Chinese one's
random initialisation depends on the seed)."""
from __future__ import annotations

from pathlib import Path

from common.config import load_yaml
from common.report.claim import Claim, reported, task_side
from papers.moco.runs import INIT, TASKS
from papers.moco.variants import analysis_runs

TATOEBA, BUCC, STS = TASKS
METRICS = {"sts": ("STS avg (wmean)", STS), "bucc": ("BUCC F1", BUCC),
           "tatoeba": ("Tatoeba (both directions)", TATOEBA)}


REPORTED = load_yaml(Path(__file__).with_name("reported.yaml"))


def _claim(key: str, where: str, statement: str, metric: str, a: tuple[str, str], b: tuple[str, str],
           paper: str = "") -> Claim:
    name, task = METRICS[metric]
    return Claim(f"{key}.{metric}", "moco", where, statement, name,
                 task_side(a[0], a[1], task, INIT), task_side(b[0], b[1], task, INIT), reported=paper)


def _paper_queue(k1: int, k2: int) -> str:
    """Figure 2 is a plot: the paper's numbers for queues ``k1`` → ``k2`` where they are its two points inferred from
    its tables (papers/moco/reported.yaml: 204,800 and 409,600), else none."""
    points = REPORTED["figure2_queue"]["points"]
    if k1 not in points or k2 not in points:
        return ""
    return reported(points[k1], points[k2], f"queue {k1:,} → {k2:,} (inferred)")


def _paper_momentum(metric: str) -> str:
    """Table 5: without the momentum encoder ("shared") against with it."""
    rows = REPORTED["table5_momentum"]
    return reported(rows["shared"][metric], rows["momentum"][metric])


def declare(cfg: dict) -> list[Claim]:
    runs = analysis_runs(cfg)
    claims = [_claim("training-aligns", "Table 1", "training aligns the encoders (above them before training)",
                     "tatoeba", ("before training", "init"), ("MoCo-BERT", "moco"),
                     # Table 1: mBERT-base, the paper's unaligned row, against MoCo-BERT's two directions
                     reported(next(r["accuracy"] for r in REPORTED["table1_tatoeba"]["rows"]
                                   if r["model"].startswith("mBERT")),
                              sum(REPORTED["table1_tatoeba"]["moco"].values()) / 2, "mBERT → MoCo-BERT"))]
    claims += [_claim("queue-beats-inbatch", "abstract, section 1", "queue beats in-batch negatives", m,
                     ("in-batch", "inbatch"), ("MoCo-BERT", "moco")) for m in ("sts", "bucc", "tatoeba")]
    sizes = runs["figure2_queue"]  # consecutive sizes of Figure 2
    claims += [_claim(f"larger-queues-help.{k1}-{k2}", "Figure 2", "larger queues help", "sts",
                      (f"queue {k1}", r1), (f"queue {k2}", r2), _paper_queue(k1, k2))
               for (k1, r1), (k2, r2) in zip(sizes, sizes[1:])]
    (shared,) = [n for v, n in runs["table5_momentum"] if v == "shared"]
    (momentum,) = [n for v, n in runs["table5_momentum"] if v == "momentum"]
    claims += [_claim("no-momentum-fails", "Table 5", "training without momentum fails", m,
                      ("w/o momentum", shared), ("with momentum", momentum), _paper_momentum(m))
               for m in ("sts", "bucc")]
    return claims
