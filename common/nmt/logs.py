"""What a finished fine-tuning run's fairseq JSON log (``train.log`` in its checkpoint folder) says, for the
reports: its validation curve."""
from __future__ import annotations

import json
from pathlib import Path


def validation_curve(save_dir: Path) -> list[dict[str, float]]:
    """(update, validation loss) of every validation in a run's fairseq JSON log."""
    points = []
    for line in (save_dir / "train.log").read_text(encoding="utf-8").splitlines():
        if '"valid_loss"' in line:
            rec = json.loads(line[line.index("{"):])
            points.append({"update": int(float(rec["valid_num_updates"])), "loss": float(rec["valid_loss"])})
    return points
