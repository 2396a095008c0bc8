from types import SimpleNamespace

import pytest

from common.config import load_paper_config
from common.report.results import ResultStore
from papers.moco.report import claims, momentum_note, queue_age_note
from papers.moco.runs import registry
from tests.results import write_scores


def test_queue_age_note_against_hand_computed_ages():
    cfg = {"moco": {"queue_size": 64, "temperature": 0.04}, "pooling": "mean",
           "training": {"global_batch_size": 16, "max_steps": 10},
           "analysis": {"queue_size": 32, "queue_sizes": [16, 64], "small_batch": 4, "temperatures": [0.04],
                        "poolings": ["mean"]}}
    note = queue_age_note(cfg, load_paper_config("moco", "paper"))
    # 16 / 16 = 1 step of 10 (10 %), 64 / 16 = 4 steps (40 %); paper 409600 / 1024 = 400 of 78600 (0.51 %)
    assert note == ("Age of the oldest queued key, K / batch steps (share of the run): ours "
                    "16: 1 of 10 steps (10.0 %); "
                    "64: 4 of 10 steps (40.0 %); paper 409600: 400 of 78600 steps (0.5 %).")



def test_momentum_note_against_hand_computed_horizons():
    cfg = {"moco": {"momentum": 0.8}, "training": {"max_steps": 400}}
    # 1 / (1 - 0.8) = 5 steps of 400 (1.25 %); paper 1 / (1 - 0.999) = 1000 of 78600 (1.27 %)
    assert momentum_note(cfg, load_paper_config("moco", "paper")) == (
        "Momentum horizon 1 / (1 - m) as a share of the run: ours m = 0.8: 5.0 of 400 steps (1.25 %); "
        "paper m = 0.999: 1000.0 of 78600 steps (1.27 %).")

def test_claims_give_intervals_and_verdicts(tmp_path):
    """Hand-made results with known answers: MoCo right on every Tatoeba sentence where in-batch is wrong on
    every one (B - A = 100, interval [100, 100]: holds); identical STS and BUCC outcomes (B - A = 0: inconclusive);
    queue 64 strictly worse than queue 32 everywhere (reversed)."""
    cfg = {"moco": {"queue_size": 64, "temperature": 0.04, "momentum": 0.8}, "pooling": "mean", "seeds": [1, 2],
           "training": {"global_batch_size": 32, "max_steps": 400},
           "analysis": {"queue_size": 64, "queue_sizes": [32, 64], "small_batch": 8, "temperatures": [0.04],
                        "poolings": ["mean"]}}
    sts_items = {"pred": [0.1, 0.5, 0.3, 0.9, 0.7], "gold": [1.0, 2.0, 3.0, 4.0, 5.0]}
    worse = {"pred": [0.9, 0.7, 0.5, 0.3, 0.1], "gold": [1.0, 2.0, 3.0, 4.0, 5.0]}

    hit = "0" + "1" * 10 + "0" * 9  # 10 of the 19 gold sources found

    def put(run, seed, tatoeba="0000", sts=sts_items, tp=hit):
        d = tmp_path / "eval" / "pair" / run / f"seed{seed}"
        write_scores(d / "sts-en@wmean.json", {"scores": {"datasets": {"STS12": {"items": {"a": sts}}}}})
        write_scores(d / "bucc@distance-k3.json", {"scores": {"per_pair": {"zh-en": {"test_items": {
            "gold": "0" + "1" * 19, "tp": tp, "fp": "1" + "0" * 19}}}}})
        write_scores(d / "tatoeba@cosine.json", {"scores": {"items": {"cmn": {"xx2en": tatoeba, "en2xx": tatoeba}}}})

    for seed in (1, 2):
        put("init", seed, tatoeba="0001")
        put("inbatch", seed, tatoeba="0000")
        put("moco", seed, tatoeba="1111")
        put("q32", seed, sts=sts_items)
        put("q64_shared", seed, sts=worse, tp="0" * 20)
    for seed in (1, 2):  # the main run is also the queue-64 point of Figure 2
        put("moco", seed, tatoeba="1111", sts=worse)
    cfg["description"] = "Toy pairs."
    manifest = {"train_languages": ["cmn"], "leakage": {"dropped_total": 3}}
    table = claims(SimpleNamespace(store=ResultStore(tmp_path, registry(cfg)), cfg=cfg, scale="mini",
                                   manifest=manifest))
    # which data trained the models, as every table says
    assert table.notes[0].startswith("Ours: scale 'mini' — Toy pairs. Language pair cmn-en.")
    assert "Leakage rule dropped 3 training pairs." in table.notes[0]
    rows = {(r[0], r[2]): r for r in table.rows}
    tat = rows[("queue beats in-batch negatives", "Tatoeba (both directions)")]
    assert (tat[8], tat[9], tat[11], tat[12]) == (100.0, "[100.0, 100.0]", 2, "holds")
    aligned = rows[("training aligns the encoders (above them before training)", "Tatoeba (both directions)")]
    # 100 - 25 in both seeds (a quarter of the pairs found before training): no seed spread; the items' part, from
    # the spread of the difference over resampled pairs (sd ~ 22 for 3 of 4 pairs changed), keeps the interval above 0
    assert (aligned[5].mean, aligned[8], aligned[11], aligned[12]) == (25.0, 75.0, 2, "holds")
    assert rows[("queue beats in-batch negatives", "BUCC F1")][12] == "inconclusive"
    assert rows[("larger queues help", "STS avg (wmean)")][12] == "reversed"  # queue 64 (worse STS) vs queue 32
    assert rows[("training without momentum fails", "STS avg (wmean)")][12] == "inconclusive"  # both 'worse'
    bucc = rows[("training without momentum fails", "BUCC F1")]
    # F1 = 2 TP / (TP + FP + gold)
    assert bucc[5].mean == 0.0 and bucc[7].mean == pytest.approx(200 * 10 / (10 + 1 + 19))
    assert bucc[12] == "holds"  # w/o momentum finds nothing
    record = next(r for r in table.records if r["id"] == "no-momentum-fails.bucc")  # claims.json's record
    assert (record["where"], record["a"], record["verdict"], record["seeds"]) == ("Table 5", "w/o momentum", "holds", 2)


def test_every_seed_only_for_the_runs_a_claim_compares():
    """Mini's 5 seeds go to the runs the claims pair; MoCo-BERT+NLI (no claim) and the ablations take the first."""
    from common.config import load_paper_config

    cfg = load_paper_config("moco", "mini")
    reg = registry(cfg)
    assert reg.seeds("moco", "pair") == reg.seeds("inbatch", "pair") == reg.seeds("q32", "pair") == [1, 2, 3, 4, 5]
    assert reg.seeds("init", "pair") == reg.seeds("q64_shared", "pair") == [1, 2, 3, 4, 5]
    assert reg.seeds("moco_nli", "pair") == reg.seeds("q64_t0.1", "pair") == [1]
    assert sum(1 for r in reg if "tatoeba@cosine" in r.tasks) == 7 * 5 + 7  # 7 compared runs, 7 on one seed
