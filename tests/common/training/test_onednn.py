"""common/training/onednn.py: the training command line bounds oneDNN's primitive cache before it builds a model,
unless the environment chose a capacity."""
import os

import pytest

from common.training import cli
from common.training.onednn import CAPACITY, VARIABLE, bound_primitive_cache
from papers.dap.train import DAPRecipe


def test_the_environment_s_capacity_wins(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert bound_primitive_cache() == CAPACITY == 64
    monkeypatch.setenv(VARIABLE, "1024")
    assert bound_primitive_cache() == 1024


def test_the_training_command_line_sets_it_first(monkeypatch, tmp_path):
    monkeypatch.delenv(VARIABLE, raising=False)
    with pytest.raises(SystemExit, match="unknown --init 'nope'"):  # stops after the cache, before any model
        cli.main(DAPRecipe(), ["--scale", "smoke", "--method", "tr", "--init", "nope", "--seed", "1", "--corpus",
                               "c.json", "--tokenizer", "t", "--output_dir", str(tmp_path)])
    assert os.environ[VARIABLE] == str(CAPACITY)
