"""``--snapshot_steps``: the model saved at chosen steps of a run (common/training/cli.py)."""
import json

import torch
from torch import nn

from common.training.cli import Built, RunArguments, snapshotter


def test_snapshot_is_saved_whole_at_its_steps_and_training_goes_on(tmp_path):
    model = nn.Linear(2, 2).train()
    saved = []

    def save(m: nn.Module, out) -> None:
        assert not out.name.startswith("step") or out.name.endswith(".tmp")  # written beside, renamed when complete
        out.mkdir(parents=True)
        torch.save(m.state_dict(), out / "w.pt")
        m.eval()  # a save that changes the mode must not leave training in eval mode
        saved.append(out.name)

    run = RunArguments(scale="smoke", method="m", init="i", seed=1, corpus="-", tokenizer="-",
                       output_dir=str(tmp_path), snapshot_steps=[2, 4])
    on_step = snapshotter(run, Built(model, lambda b, g: {}, save), {"paper": "x"})
    for step in range(1, 5):
        with torch.no_grad():
            model.weight.add_(1.0)
        on_step(step)
    assert saved == ["step2.tmp", "step4.tmp"] and model.training
    snaps = tmp_path / "snapshots"
    assert sorted(p.name for p in snaps.iterdir()) == ["step2", "step4"]
    w2 = torch.load(snaps / "step2" / "w.pt", weights_only=True)["weight"]
    w4 = torch.load(snaps / "step4" / "w.pt", weights_only=True)["weight"]
    assert torch.allclose(w4 - w2, torch.full((2, 2), 2.0))
    assert json.loads((snaps / "step4" / "training_config.json").read_text()) == {"paper": "x", "snapshot_step": 4}
