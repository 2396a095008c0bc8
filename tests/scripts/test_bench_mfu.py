"""``scripts/bench_mfu.py``, the training step's speed ladder, through its CPU code paths at tiny widths: every rung of
every shape (CUDA graphs are GPU-only), the model FLOPs shared by a shape's rungs, the ratios, the peer row, the
figures and the run log; a compiled rung that the budget cannot hold is skipped and named. (Its figures mean nothing
on a CPU: these tests check what it writes, not how fast.)"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_mfu", ROOT / "scripts" / "bench_mfu.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


FAST = ["--device", "cpu", "--tiny", "--steps", "1", "--rounds", "2", "--warmup", "1", "--peak-tflops", "0.1"]


def test_the_ladder_of_dap_and_tr_with_the_peer(bench, tmp_path):
    out = bench.main([*FAST, "--models", "dap-4", "tr-4", "--json", str(tmp_path / "mfu.json"),
                      "--log", str(tmp_path / "log.jsonl")])
    rows = {(r["model"], r["rung"]): r for r in out["rows"]}
    assert set(rows) == {("dap-4", r) for r in ("current", "one call", "compiled", "fused")} | \
        {("tr-4", r) for r in ("current", "one call", "compiled")}  # no graphs on a CPU, no vocabulary head in TR
    for model in ("dap-4", "tr-4"):
        mine = [r for (m, _), r in rows.items() if m == model]
        assert len({r["model_flops_per_step"] for r in mine}) == 1 and mine[0]["model_flops_per_step"] > 0
        assert rows[(model, "current")]["ratio_to_current"] == 1.0
        for r in mine:
            assert r["ms_per_step"] > 0 and len(r["step_ms_rounds"]) == 2
            assert r["mfu"] == pytest.approx(r["model_flops_per_step"] / (r["ms_per_step"] / 1e3) / 1e11)
            assert r["tokens_per_second"] == pytest.approx(r["tokens_per_step"] / (r["ms_per_step"] / 1e3))
    assert rows[("dap-4", "fused")]["compile_s"] > 0 and rows[("dap-4", "one call")]["compile_s"] is None
    assert rows[("dap-4", "current")]["model_flops_per_step"] > rows[("tr-4", "current")]["model_flops_per_step"]
    [peer] = out["peers"]
    assert peer["model"] == "tr-4" and peer["ms_per_step"] > 0 and peer["rows"] == 4
    # our whole trainer's step beside each shape's best bare rung (DeepSpeed engine, collator, sampler, guard)
    trainers = {t["model"]: t for t in out["trainers"]}
    assert set(trainers) == {"dap-4", "tr-4"}
    for model, t in trainers.items():
        top = min((r for (m, _), r in rows.items() if m == model), key=lambda r: r["ms_per_step"])
        assert t["rung"] == top["rung"] and t["steps_timed"] == 2 and t["ms_per_step"] > 0
        assert t["ratio_to_bare"] == pytest.approx(t["ms_per_step"] / top["ms_per_step"])
    assert set(out["variants"]) == {"TR", "DAP"} and out["variants"]["DAP"]["mfu"] > 0  # the census's reading
    saved = json.loads((tmp_path / "mfu.json").read_text())
    assert saved["rows"] == json.loads(json.dumps(out["rows"])) and saved["device"] == "cpu"
    md = (tmp_path / "mfu.md").read_text()
    assert "| dap-4 (4 x 16) | fused |" in md and "peer: SentenceTransformerTrainer" in md
    assert "| tr-4 (4 x 16) | whole trainer step (" in md and "our whole trainer step within 1.1x" in md
    assert "against sentence-transformers' trainer" in md and "DAP at 1024 x 32 on one GPU" in md
    [entry] = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert entry["commit"] and entry["command"].startswith("python scripts/bench_mfu.py")
    assert "dap-4/fused" in entry["figures"] and entry["peers"]["tr-4"] > 0
    assert entry["machine"]["gpu"] is None and entry["machine"]["cores"] > 0


def test_hictl_and_vmsst_rungs(bench, tmp_path):
    """The eager rungs (the FLOP count runs their fused loss; the compiled rungs' code path is DAP's, above)."""
    out = bench.main([*FAST, "--models", "hictl-large", "vmsst", "--rungs", "current", "one call", "--no-peer",
                      "--log", "-"])
    rows = {(r["model"], r["rung"]): r for r in out["rows"]}
    assert set(rows) == {(m, r) for m in ("hictl-large", "vmsst") for r in ("current", "one call")}
    assert all(r["ms_per_step"] > 0 and r["tokens_per_step"] > 0 for r in rows.values())
    assert out["variants"] == {} and out["peers"] == []


@pytest.mark.slow  # ~35 s on 2 cores: HICTL-large's width
def test_hictl_bucketed_rung_counts_its_own_flops(bench):
    """HICTL-large's buckets rung (its paper config's length buckets) does fewer FLOPs than the padded rungs and says
    so; its real tokens are the padded rungs'."""
    out = bench.main([*FAST, "--models", "hictl-large", "--hictl-length", "32", "--rungs", "one call", "buckets",
                      "--no-peer", "--no-trainer", "--log", "-"])
    rows = {r["rung"]: r for r in out["rows"]}
    assert set(rows) == {"one call", "buckets"}
    padded, bucketed = rows["one call"], rows["buckets"]
    assert 0 < bucketed["model_flops_per_step"] < padded["model_flops_per_step"]
    assert bucketed["mfu"] == pytest.approx(bucketed["model_flops_per_step"] / (bucketed["ms_per_step"] / 1e3) / 1e11)
    assert bucketed["tokens_per_step"] == padded["tokens_per_step"]


def test_a_compiled_rung_past_the_budget_is_skipped_and_named(bench, tmp_path, capsys):
    out = bench.main([*FAST, "--models", "tr-4", "--rungs", "current", "compiled", "--no-peer", "--log", "-",
                      "--compile-estimate-s", "1e9"])
    rows = {r["rung"]: r for r in out["rows"]}
    assert rows["current"]["ms_per_step"] > 0 and rows["compiled"]["failed"] == "skipped: budget"
    assert out["left_out"] == ["tr-4/compiled"] and out["rerun"].endswith("--models tr-4")
    assert "left out by the budget: tr-4/compiled" in capsys.readouterr().out


def test_the_budget_shares_its_time_and_expects_the_slowest_compilation_seen(bench):
    budget = bench.Budget(100.0, estimate=10.0)
    assert 24 < budget.share(4) <= 25 and 99 < budget.share(1) <= 100
    assert budget.allows_compile(20.0) and not budget.allows_compile(5.0)  # what is left of the shape's share
    budget.compiled(30.0)
    budget.compiled(12.0)
    assert budget.estimate == 30.0 and not budget.allows_compile(20.0) and budget.allows_compile(40.0)
    assert not bench.Budget(0.0, estimate=1.0).allows_compile(100.0)  # nor past the whole budget
