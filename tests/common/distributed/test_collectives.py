"""Collectives: only ``common/distributed/collectives.py`` calls them, and every tensor they hand the backend is on
the rank's device (NCCL takes CUDA tensors only; a logged scalar moved to the CPU before its all-reduce crashed the
first multi-GPU step). The recording process group is torch's in-process ``fake`` backend (no communication) under
a layer that records each collective's tensors and fails on a tensor that is not on the expected device."""
import ast
import functools
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch import nn

from common.distributed import collectives
from tests.conftest import ROOT

COLLECTIVES = {"all_reduce", "all_gather", "all_gather_single", "all_gather_into_tensor", "all_gather_object",
               "reduce_scatter", "reduce_scatter_single", "reduce_scatter_tensor", "broadcast", "broadcast_object_list",
               "gather", "gather_object", "scatter", "scatter_object_list", "reduce", "barrier", "monitored_barrier",
               "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv", "batch_isend_irecv"}
ALLOWED = ROOT / "common" / "distributed" / "collectives.py"


def direct_collective_calls(path: Path) -> list[str]:
    """``file:line name`` of every call of a torch.distributed collective, however the module was imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules, names = set(), set()  # local names bound to torch.distributed, and to its collectives
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == "torch.distributed" and a.asname}
        elif isinstance(node, ast.ImportFrom) and node.module == "torch":
            modules |= {a.asname or a.name for a in node.names if a.name == "distributed"}
        elif isinstance(node, ast.ImportFrom) and node.module == "torch.distributed":
            names |= {a.asname or a.name for a in node.names if a.name in COLLECTIVES}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in names:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {f.id}")
        elif isinstance(f, ast.Attribute) and f.attr in COLLECTIVES:
            base = ast.unparse(f.value)
            if base in modules or base == "torch.distributed":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {base}.{f.attr}")
    return found


def test_the_scanner_finds_each_import_style(tmp_path):
    src = tmp_path / "x.py"
    src.write_text("import torch.distributed as d\nfrom torch import distributed\nfrom torch.distributed import barrier"
                   "\nimport torch\nd.all_reduce(t)\ndistributed.all_gather_object(o, 1)\nbarrier()\n"
                   "torch.distributed.broadcast(t, 0)\nother.all_reduce(t)\n")
    calls = [c.split(" ")[1] for c in direct_collective_calls(src.rename(ROOT / ".scan_probe.py"))]
    (ROOT / ".scan_probe.py").unlink()
    assert calls == ["d.all_reduce", "distributed.all_gather_object", "barrier", "torch.distributed.broadcast"]


def test_no_file_but_collectives_calls_torch_distributed_collectives():
    files = [p for top in ("common", "papers", "bench", "scripts") for p in (ROOT / top).rglob("*.py")]
    offenders = [c for p in files if p != ALLOWED for c in direct_collective_calls(p)]
    assert not offenders, "call these through common.distributed.collectives:\n" + "\n".join(offenders)


class Recorder:
    """Wraps torch.distributed's collectives: records (name, device) of every tensor and checks the device."""

    def __init__(self, monkeypatch, device: torch.device):
        self.device, self.calls = torch.device(device), []
        for name in ("all_reduce", "all_gather", "all_gather_single", "all_gather_into_tensor", "reduce_scatter",
                     "reduce_scatter_single", "reduce_scatter_tensor", "broadcast", "reduce", "all_to_all_single"):
            if hasattr(dist, name):
                monkeypatch.setattr(dist, name, self._wrap(name, getattr(dist, name)))

    def _wrap(self, name, fn):
        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            tensors = [a for a in (*args, *kwargs.values()) if torch.is_tensor(a)]
            tensors += [t for a in args if isinstance(a, list | tuple) for t in a if torch.is_tensor(t)]
            for t in tensors:
                self.calls.append((name, t.device))
                if t.device != self.device:
                    raise AssertionError(f"{name} got a tensor on {t.device}; the rank's device is {self.device}")
            return fn(*args, **kwargs)

        return recorded


@pytest.fixture
def fake_world(monkeypatch):
    """Rank 0 of a world of 2 in this process (torch's fake backend: collectives return without communicating)."""
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def test_collectives_keep_the_device(fake_world, monkeypatch):
    """A tensor on any device (here the meta device, which no copy can leave) reaches the backend where it is."""
    rec = Recorder(monkeypatch, torch.device("meta"))
    x = torch.ones(3, device="meta")
    assert collectives.mean_over_ranks(x).device.type == "meta"
    assert collectives.max_over_ranks(x).device.type == "meta"
    assert collectives.gather_no_grad(x).shape == (6,)
    assert collectives.gather_with_grad(x).shape == (6,)
    assert {n for n, _ in rec.calls} == {"all_reduce", "all_gather", "all_gather_single"}
    assert {d.type for _, d in rec.calls} == {"meta"}


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)

    def forward(self, x):  # x (B, 4)
        y = self.lin(x)
        return {"loss": y.pow(2).mean(), "aux": y.mean()}


def test_a_training_loop_hands_every_collective_tensors_on_the_ranks_device(fake_world, monkeypatch, tmp_path):
    """The trainer's whole loop under the recording group (DeepSpeed's own collectives included): logging, stop
    agreement, checkpoint RNG gathering. On a GPU machine the device is CUDA and the test checks what NCCL needs."""
    from common.training.trainer import Trainer, TrainingArguments

    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    rec = Recorder(monkeypatch, device)
    examples = [torch.randn(4, generator=torch.Generator().manual_seed(i)) for i in range(16)]
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=20, global_batch_size=4, learning_rate=1e-2,
                             log_every=5, save_every=10, tensorboard=False)
    summary = Trainer(Tiny(), examples, lambda xs, g: {"x": torch.stack(xs)}, args).train()
    assert summary["step"] == 20
    assert {n for n, _ in rec.calls} >= {"all_reduce"}  # the logged means and the stop agreement at least
