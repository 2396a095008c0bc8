"""``training.compile``: the trainer compiles the model's step in place (common/training/trainer.py). Against the eager
run (aot_eager: the same graph capture and AOTAutograd backward as inductor, without code generation): the same
losses and weights, the same state-dict names, and an exact resume from a compiled run's checkpoint."""
from pathlib import Path

import pytest
import torch

from common.training.metrics_log import read_metrics
from common.training.trainer import Trainer, TrainingArguments
from tests.common.training.test_precision import EXAMPLES, Tiny, collate

ROOT = Path(__file__).resolve().parents[3]


def args(out, **kw):
    return TrainingArguments(output_dir=str(out), max_steps=4, global_batch_size=4, learning_rate=1e-2,
                             log_every=1, save_every=2, tensorboard=False, **kw)


def test_a_compiled_run_equals_the_eager_one_and_resumes_exactly(tmp_path):
    eager = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path / "eager"))
    eager.train()
    compiled = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path / "compiled", compile=True,
                                                       compile_backend="aot_eager"))
    compiled.train()
    model = compiled.unwrap()
    assert hasattr(model, "_compiled_call_impl") and model._compiled_call_impl is not None  # compiled in place
    assert list(model.state_dict()) == list(eager.unwrap().state_dict())  # no "_orig_mod." in any name
    losses = lambda d: [r["loss"] for r in read_metrics(d)]
    assert losses(tmp_path / "compiled") == pytest.approx(losses(tmp_path / "eager"), rel=1e-6, abs=1e-7)
    for (name, p), q in zip(model.named_parameters(), eager.unwrap().parameters()):
        assert torch.allclose(p, q, rtol=1e-6, atol=1e-7), name
    # stopped after step 2 (checkpoint), resumed compiled: the same end as the run without a stop
    stopped = args(tmp_path / "resumed", compile=True, compile_backend="aot_eager")
    stopped.stop_after = 2
    Trainer(Tiny(), EXAMPLES, collate, stopped).train()
    resumed = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path / "resumed", compile=True,
                                                      compile_backend="aot_eager"))
    resumed.train()
    for (name, p), q in zip(resumed.unwrap().named_parameters(), model.parameters()):
        assert torch.equal(p, q), name


def test_the_schema_takes_the_two_backends_only():
    from common.config import load_config, validate

    cfg = load_config("dap", "smoke")
    schema = ROOT / "papers" / "dap" / "config" / "schema.yaml"
    for backend in ("inductor", "aot_eager"):
        validate({**cfg, "training": {**cfg["training"], "compile": True, "compile_backend": backend}}, schema, "x")
    with pytest.raises(ValueError, match="compile_backend"):
        validate({**cfg, "training": {**cfg["training"], "compile_backend": "cudagraphs"}}, schema, "x")
