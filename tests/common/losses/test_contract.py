"""Every loss module provides what common/losses/__init__.py says a loss module provides."""
import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from torch import nn

import common.losses

MODULES = [m.name for m in pkgutil.iter_modules(common.losses.__path__)]
TESTS = Path(__file__).parent


def test_the_contract_covers_every_loss_module():
    assert set(MODULES) == {"info_nce", "linear_cross_entropy", "sentence_ctl", "token_nll", "translation_ranking",
                               "word_ctl"}


@pytest.mark.parametrize("name", MODULES)
def test_a_loss_module_cites_its_source_and_is_tested_against_a_naive_reference(name):
    module = importlib.import_module(f"common.losses.{name}")
    assert re.search(r"et al\. \d{4}", module.__doc__ or ""), f"{name}: the docstring cites no source"
    losses = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, nn.Module)
              and v.__module__ == module.__name__ and v.__name__.endswith("Loss")]
    assert losses or callable(getattr(module, name, None)), f"{name}: no loss module or function {name}()"
    test = TESTS / f"test_{name}.py"
    assert test.exists() and re.search(r"naive|reference", test.read_text(), re.I), f"{name}: no test against a " \
                                                                                     "naive reference"
