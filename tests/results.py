"""Hand-made results files for report tests: a scores dict completed to a full :class:`ResultRecord`."""
from dataclasses import asdict

from common.eval.results import ResultRecord
from common.io import write_json


def write_scores(path, record: dict) -> None:
    """``record`` holds at least ``scores``; the provenance fields and a missing ``main_score`` (0.0) get placeholders a
    report never reads."""
    full = asdict(ResultRecord(task_name="t", split="test", languages=[], scores={}, model={}, scale="test", seed=1,
                               config_hash="", git_commit=None, versions={}, data_sha256="", evaluation_time=0.0))
    scores = {"main_score": 0.0, **record["scores"]}
    write_json(path, {**full, **record, "scores": scores})
