"""``scripts/bench_job_step.py``: a paper's training job built by its recipe, its variants timed and counted."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_job_step", ROOT / "scripts" / "bench_job_step.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_a_variant_sets_one_existing_key_of_a_copy(bench):
    cfg = {"training": {"global_batch_size": 64, "precision": "bf16"}, "vmsst": {"compile_loss": True}}
    out = bench.set_key(cfg, "vmsst.compile_loss=false")
    assert out["vmsst"]["compile_loss"] is False and cfg["vmsst"]["compile_loss"] is True
    assert bench.set_key(cfg, "training.global_batch_size=128")["training"]["global_batch_size"] == 128
    with pytest.raises(SystemExit, match="no key 'training.grad_clipping'"):
        bench.set_key(cfg, "training.grad_clipping=0")
    with pytest.raises(SystemExit, match="no section 'decoder'"):
        bench.set_key(cfg, "decoder.layers=2")
    with pytest.raises(SystemExit, match="expected KEY=VALUE"):
        bench.set_key(cfg, "vmsst.compile_loss")


def test_a_smoke_vmsst_job_and_a_twice_larger_batch(bench, tmp_path):
    """VMSST's smoke job on its synthetic corpus: the configured run is its own baseline; doubling the batch about
    doubles the counted FLOPs (batches of the same examples, drawn alike); the figures are written."""
    from common.census.probe import probe_corpus, stand_in_tokenizers
    from common.config import load_config

    manifest = probe_corpus("vmsst", tmp_path, "-")
    words = [w for path in manifest["train"].values() for line in open(path, encoding="utf-8") for w in line.split()]
    tokenizer = stand_in_tokenizers(load_config("vmsst", "smoke"), "l2", words, tmp_path / "tokenizer")
    batch = load_config("vmsst", "smoke")["training"]["global_batch_size"]
    record = bench.main([
        "--paper", "vmsst", "--scale", "smoke", "--method", "vmsst", "--init", "l2", "--seed", "1",
        "--corpus", str(tmp_path / "corpus" / "manifest.json"), "--tokenizer", str(tokenizer),
        "--output_dir", str(tmp_path / "unused"), "--variant", f"training.global_batch_size={2 * batch}",
        "--warmup", "1", "--steps", "2", "--rounds", "2", "--json", str(tmp_path / "out" / "figures.json")])
    base, double = record["variants"]["as configured"], record["variants"][f"training.global_batch_size={2 * batch}"]
    assert (base["rows"], double["rows"]) == (batch, 2 * batch)
    assert base["step_ratio_to_configured"] == 1.0 and len(base["step_s_all"]) == len(double["step_s_all"]) == 4
    assert double["gflop_per_step"] == pytest.approx(2 * base["gflop_per_step"], rel=0.25)
    assert base["gflop_per_step"] > 0 and 0 < base["share_of_matmul_rate"]
    assert base["precision"] == double["precision"] == "fp32" and record["matmul_gflops"]["fp32"] > 0
    assert (tmp_path / "out" / "figures.json").exists() and not (tmp_path / "unused").exists()
    [row] = [json.loads(line) for line in (tmp_path / "out" / "log.jsonl").read_text().splitlines()]
    assert row["record"] == "figures.json" and row["command"].startswith("python scripts/bench_job_step.py")
