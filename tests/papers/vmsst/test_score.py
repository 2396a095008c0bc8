from pathlib import Path

import pytest
import yaml

from papers.vmsst.score import score, score_of_row

REPORTED = yaml.safe_load((Path(__file__).parents[3] / "papers" / "vmsst" / "reported.yaml").read_text())


def test_score_reproduces_every_row_of_table_1():
    rows = [(setting, model, row) for setting, models in REPORTED["table1"].items() for model, row in models.items()]
    assert len(rows) == 12
    for setting, model, row in rows:
        assert score_of_row(row) == pytest.approx(row[9], abs=0.0501), (setting, model)  # 0.05 plus float error


def test_score_hand_computed():
    # (65.5 + 66.8 + 63.1 + (66.2 + 84.0) / 2 + 34.1 + 17.6) / 6 = 322.2 / 6
    assert score(65.5, 66.8, 63.1, 66.2, 84.0, 34.1, 17.6) == pytest.approx(53.7)
