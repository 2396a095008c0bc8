"""What an NMT setting's models were, in words, for the notes under the tables that report them (HICTL's NMT tables,
the leaderboard's NMT column): the target dictionary, the updates each final model had and the random-init model's
shape; and :func:`read_result`, which refuses a BLEU file scored before the config gave the target side a dictionary
of its own (the notes, written from the config, would misdescribe it). Torch-free: the reports load without it."""
from __future__ import annotations

from typing import Any

from common.io import read_json
from common.nmt import plan
from common.nmt.settings import NMTSettings

UNCASED = "the model's vocabulary is uncased"  # common/nmt/bleu.py's reason for a lower-cased score


def read_result(nmt: dict[str, Any], path: str) -> dict[str, Any]:
    """One translation's BLEU file (common/nmt/recipe.py), refused where it was scored lower-cased for an uncased
    vocabulary while the config's target side has a dictionary of its own: it predates the config."""
    result: dict[str, Any] = read_json(path)
    if nmt.get("target_vocab") and result.get("case", "").endswith(UNCASED):
        raise ValueError(f"{path}: scored in the encoder's uncased vocabulary, but the config gives the target side a "
                         "dictionary of its own (nmt.target_vocab): the result predates the config; rerun its "
                         "translation")
    return result


def target_dictionary(nmt: dict[str, Any]) -> str:
    size = nmt.get("target_vocab")
    if not size:
        return ("Target side: the encoder's own tokenizer (the paper's setting); references are normalized as it "
                "normalizes its input, since the outputs cannot hold more.")
    return (f"Target side: a dictionary of its own, {size:,} BPE pieces learned on each setting's training targets, "
            "cased, accents kept (common/nmt/target_vocab.py), for an encoder whose vocabulary cannot spell the "
            "target language (MiniLM's: English, lower-cased, accents stripped); a departure from the paper, whose "
            "decoder writes in XLM-R's vocabulary. References are scored as written. The [CLS]-vocabulary bias reads "
            "a target piece's row of the encoder's table as the mean of the rows of the encoder's pieces of its text.")


def updates(nmt: dict[str, Any], setting: str) -> str:
    """The update budget of the setting's final models: stage 1 + stage 2 for a pre-trained encoder, one run for
    random init; equal where the config makes them so."""
    spec = nmt["settings"][setting]
    pretrained = [s for s in spec["systems"] if s != plan.RANDOM]
    parts = []
    if pretrained:
        s = NMTSettings.from_config(plan.settings(nmt, setting, pretrained[0]))
        parts.append(f"pre-trained encoders: stage 1 at most {s.stage1_max_update:,} updates (on the setting's pairs "
                     f"together; stops after {s.stage1_patience} validations without a better loss) + stage 2 "
                     f"{s.stage2_max_update:,} per pair")
    if plan.RANDOM in spec["systems"]:
        r = NMTSettings.from_config(plan.settings(nmt, setting, plan.RANDOM))
        shape = ("the pre-trained model's shape" if r.baseline_arch == "same" else
                 f"fairseq's {r.baseline_arch}" + (f" ({' '.join(r.baseline_args)})" if r.baseline_args else ""))
        parts.append(f"random init: {shape}, at most {r.baseline_max_update:,} updates on the pair alone")
        if pretrained and r.baseline_max_update == s.stage1_max_update + s.stage2_max_update:
            parts.append("the same number of updates for every final model")
    return f"Updates ({setting}): " + "; ".join(parts) + "."
