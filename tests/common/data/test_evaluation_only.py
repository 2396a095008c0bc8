"""The evaluation-only corpus (``python -m common.data.corpus --evaluation-only``): the evaluation data of the full
corpus, byte for byte, and no training files listed; kinds without such a build refuse it by name."""
import json
from pathlib import Path

import pytest

from common.data.corpus import prepare
from common.io import sha256_file
from tests.conftest import DATA_ROOT

SPEC = dict(seed=3, n_languages=3, train_pairs_per_language=100, tatoeba_pairs=20, bucc_gold_per_split=4,
            bucc_sentences_per_split=60, sts_pairs=20, nli_items=12)


def evaluation_files(out: Path) -> dict[str, str]:
    """Every file the evaluations read under the corpus folder (BUCC, Tatoeba, STS), by path."""
    return {str(p.relative_to(out)): sha256_file(p) for sub in ("bucc", "tatoeba", "sts") if (out / sub).is_dir()
            for p in sorted((out / sub).rglob("*")) if p.is_file()}


def test_synthetic_evaluation_only_equals_the_full_corpus_on_its_evaluation_data(tmp_path):
    full = prepare("synthetic", tmp_path / "full", tmp_path, SPEC)
    only = prepare("synthetic", tmp_path / "only", tmp_path, SPEC, evaluation_only=True)
    assert full["train"] and only["train"] == {}
    assert evaluation_files(tmp_path / "full") == evaluation_files(tmp_path / "only") != {}
    rel = {k: json.dumps(v).replace(str(tmp_path / "full"), "X") for k, v in full.items() if k != "train"}
    assert rel == {k: json.dumps(v).replace(str(tmp_path / "only"), "X") for k, v in only.items() if k != "train"}


def test_a_kind_without_an_evaluation_only_build_refuses(tmp_path):
    with pytest.raises(ValueError, match="corpus kind 'paper' has no evaluation-only build"):
        prepare("paper", tmp_path / "c", tmp_path, {}, evaluation_only=True)


@pytest.mark.slow
@pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")
def test_mini_evaluation_only_writes_the_same_bucc_benchmark_and_no_training_file(tmp_path):
    """The mini BUCC-style benchmark's distractors avoid every training sentence: the evaluation-only build reads
    the training sources for that, and its BUCC files equal the full corpus's."""
    from common.config import load_config

    spec = load_config("leaderboard", "mini")["corpus"]["mini"]
    full = prepare("mini", tmp_path / "full", DATA_ROOT, spec)
    only = prepare("mini", tmp_path / "only", DATA_ROOT, spec, evaluation_only=True)
    assert only["train"] == {} and "nli_train" not in only and not (tmp_path / "only" / "train").exists()
    assert evaluation_files(tmp_path / "full") == evaluation_files(tmp_path / "only") != {}
    assert only["leakage"] == full["leakage"] and only["bucc_pairs"] == full["bucc_pairs"]
