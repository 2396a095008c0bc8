"""VMSST's routed variants (Table 4's "4 enc.", Table 6's unshared model) do the same work per pair as the twin
encoder and shared decoder on the same languages, so the census may count a step of the one for the other
(``papers.vmsst.variants.same_step_as``). Checked at a small width: FLOPs equal; saved activations at least the
stand-in's and at most that plus the 16-bit copies of the routed model's extra matrices
(``common.census.__main__.routed_extra_bytes``)."""
import itertools

import pytest

from common.census import __main__ as census
from common.census import architectures, probe
from common.config import load_config
from common.runs import Run
from papers.vmsst.variants import same_step_as

SMALL = {"hidden_size": 32, "num_layers": 2, "num_heads": 2, "intermediate_size": 64}


@pytest.fixture
def small(monkeypatch, tmp_path):
    monkeypatch.setitem(architectures.CONFIGS, "google/mt5-large",
                        {**architectures.CONFIGS["google/mt5-large"], "vocab_size": 600})
    cfg = load_config("vmsst", "paper")
    cfg["encoders"]["l6"].update(SMALL)
    cfg["training"]["max_length"] = 8
    manifest = probe.probe_corpus("vmsst", tmp_path / "corpus", "-", cfg["census"]["languages"])
    return cfg, manifest


@pytest.mark.parametrize("routed", ["vmsst_4enc", "vmsst_full"])
def test_a_routed_run_does_its_stand_ins_work_per_pair(small, tmp_path, routed):
    cfg, manifest = small
    same = same_step_as(routed)
    assert same is not None and same_step_as(same) is None
    rows = (2, 4, 8, 16)  # from a batch of two pairs, whose four sentences pass some encoders, to one passing all
    mine, theirs = (probe.count_steps("vmsst", cfg, Run(m, "l6", 1), rows, manifest, tmp_path / m)
                    for m in (routed, same))
    assert mine[-1].params > theirs[-1].params  # more encoders (and decoders): more parameters
    for a, b in zip(mine, theirs):
        assert a.flops == pytest.approx(b.flops, rel=1e-6)
        bound = census.routed_extra_bytes(a, b, a.rows, SMALL["hidden_size"])
        assert b.activation_bytes <= a.activation_bytes <= b.activation_bytes + bound


def test_the_census_counts_a_too_large_routed_run_by_its_stand_in(small, tmp_path, monkeypatch):
    """The first size check fails (as for the 2.5B-parameter l24 model on a 20 GB machine); the row keeps the routed
    model's own parameters and takes FLOPs and activations from the stand-in's counted step, plus the bound."""
    cfg, manifest = small
    room = itertools.chain([0.0], itertools.repeat(1e6))
    monkeypatch.setattr(probe, "available_gb", lambda: next(room))
    row = census._probe("vmsst", cfg, Run("vmsst_4enc", "l6", 1), manifest, tmp_path / "row")
    assert row["step_counted_as"] == "l6/vmsst" and "needs about" in row["too_large_here"]
    own, stand_in = (probe.count_steps("vmsst", cfg, Run(m, "l6", 1), (1, 2), manifest, tmp_path / m)
                     for m in ("vmsst_4enc", "vmsst"))
    direct = census._counted(own[-1], own, (1, 2))  # the routed model counted directly (it fits at this width)
    assert row["params"] == direct["params"] and row["optimizer_bytes"] == direct["optimizer_bytes"]
    for key in ("fixed", "per_row"):
        assert row["flops_fit"][key] == pytest.approx(direct["flops_fit"][key], rel=1e-6)

    def at(fit, rows):
        return fit["fixed"] + fit["per_row"] * rows

    for rows in (1, 2, 64):  # the activations at a micro batch: the direct count, at most the bound above it
        bound = census.routed_extra_bytes(own[-1], stand_in[-1], rows, SMALL["hidden_size"])
        assert at(direct["activation_fit"], rows) <= at(row["activation_fit"], rows) * (1 + 1e-9)
        assert at(row["activation_fit"], rows) <= (at(direct["activation_fit"], rows) + bound) * (1 + 1e-9)
