from common.config import load_paper_config
from common.io import write_json
from papers.moco.report import Results, claims, queue_age_note


def test_queue_age_note_against_hand_computed_ages():
    cfg = {"moco": {"queue_size": 64, "temperature": 0.04}, "pooling": "mean",
           "training": {"global_batch_size": 16, "max_steps": 10},
           "analysis": {"queue_size": 32, "queue_sizes": [16, 64], "small_batch": 4, "temperatures": [0.04],
                        "poolings": ["mean"]}}
    note = queue_age_note(cfg, load_paper_config("moco", "paper"))
    # 16 / 16 = 1 step of 10 (10 %), 64 / 16 = 4 steps (40 %); paper 409600 / 1024 = 400 of 78600 (0.51 %)
    assert note == ("Age of the oldest queued key, K / batch steps (share of the run): ours 16: 1 of 10 steps (10.0 %); "
                    "64: 4 of 10 steps (40.0 %); paper 409600: 400 of 78600 steps (0.5 %).")


def test_claims_count_seeds_and_compare_first_seeds(tmp_path):
    cfg = {"moco": {"queue_size": 64, "temperature": 0.04}, "pooling": "mean", "seeds": [1, 2],
           "training": {"global_batch_size": 16, "max_steps": 10},
           "analysis": {"queue_size": 32, "queue_sizes": [16, 64], "small_batch": 4, "temperatures": [0.04],
                        "poolings": ["mean"]}}

    def put(run, seed, sts, bucc=0.0, tatoeba=0.0):
        d = tmp_path / "eval" / "pair" / run / f"seed{seed}"
        write_json(d / "sts.json", {"scores": {"average_spearman": {"wmean": sts}}})
        write_json(d / "bucc.json", {"scores": {"main_score": bucc}})
        write_json(d / "tatoeba.json", {"scores": {"per_language": {"cmn": {"xx2en": tatoeba}}}})

    put("inbatch", 1, 50.0, 20.0, 60.0)
    put("inbatch", 2, 60.0, 20.0, 60.0)
    put("moco", 1, 58.0, 30.0, 50.0)  # STS: higher in seed 1, lower in seed 2, mean 56 > 55
    put("moco", 2, 54.0, 10.0, 50.0)  # BUCC mean 20 = 20: does not hold
    put("q16", 1, 57.0)  # first seeds: q16 57 < moco 58 -> 1 of 1 consecutive sizes improve
    put("q32", 1, 40.0, 10.0)
    put("q32_shared", 1, 19.0, 6.0)  # STS below half (fails), BUCC not below half
    rows = claims(Results(tmp_path, cfg), cfg).rows
    assert [r[4] for r in rows] == ["holds (MoCo higher in 1 of 2 seeds)", "does not hold (MoCo higher in 1 of 2 seeds)",
                                    "does not hold (MoCo higher in 0 of 2 seeds)", "1 of 1 (holds)", "holds", "does not hold"]
    assert rows[0][2:4] == [55.0, 56.0]
