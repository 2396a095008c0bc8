from common.config import load_paper_config
from papers.moco.report import queue_age_note


def test_queue_age_note_against_hand_computed_ages():
    cfg = {"moco": {"queue_size": 64, "temperature": 0.04}, "pooling": "mean",
           "training": {"global_batch_size": 16, "max_steps": 10},
           "analysis": {"queue_size": 32, "queue_sizes": [16, 64], "small_batch": 4, "temperatures": [0.04],
                        "poolings": ["mean"]}}
    note = queue_age_note(cfg, load_paper_config("moco", "paper"))
    # 16 / 16 = 1 step of 10 (10 %), 64 / 16 = 4 steps (40 %); paper 409600 / 1024 = 400 of 78600 (0.51 %)
    assert note == ("Age of the oldest queued key, K / batch steps (share of the run): ours 16: 1 of 10 steps (10.0 %); "
                    "64: 4 of 10 steps (40.0 %); paper 409600: 400 of 78600 steps (0.5 %).")
