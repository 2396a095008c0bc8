"""HICTL's two-stage NMT fine-tuning (section 3.2, Figure 3; section 4.2) driving ``fairseq-train`` and
``fairseq-generate`` with the :mod:`common.nmt.fairseq_plugin`.

* **Stage 1** -- the pretrained encoder frozen, a new 4-layer decoder trained on the concatenation of every
  language pair of the setting ("until convergence": fairseq's ``--patience`` on the validation loss, with a cap
  of ``stage1_max_update`` updates);
* **Stage 2** -- per language pair, every parameter trained for ``stage2_max_update`` updates, starting from stage
  1's best checkpoint with a fresh optimizer, learning-rate schedule and update count (``--finetune-from-model``);
* **Baseline** -- a Transformer from random init trained on one pair (the paper's "Transformer" rows), the same
  dictionary and data;
* **Translate** -- ``fairseq-generate`` (beam and length penalty per test set: 4 / 0.6 for WMT'14 En->De, 5 / 1.0
  otherwise) with the target-language tag forced as a one-token prefix, then BLEU (:mod:`common.nmt.bleu`).

A killed run resumes: fairseq restarts from ``checkpoint_last.pt`` in the save folder (and ignores
``--finetune-from-model`` once that exists). ``python -m common.nmt.recipe --help`` lists the commands the
workflow runs; every command writes its outputs atomically (a checkpoint folder is complete when ``done.json`` is,
and then holds ``checkpoint_best.pt`` alone).
A stage folder is also a ``fairseq-encoder`` model folder (:mod:`common.nmt.embedder`): ``python -m common.eval``
scores its encoder on any embedding-based registered task.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from common.io import read_json, read_lines, write_json, write_lines
from common.nmt import plan as nmtplan
from common.nmt.embedder import save_fairseq_encoder_meta
from common.nmt.plan import FAIRSEQ_MAX_LEN
from common.nmt.settings import NMTSettings
from common.nmt.target_vocab import tokenizer_dir
from common.precision import run_precision
from common.training.malloc import keep_freed_memory

log = logging.getLogger(__name__)
PLUGIN = Path(__file__).parent / "fairseq_plugin"
REPO = Path(__file__).resolve().parents[2]
# fairseq-fixed 0.12.3.1's compiled batch_by_size drops the last batch of a split when batches are rounded to a
# multiple of 8 (measured: 16 of 20 test sentences translated); without rounding no sentence is lost
BATCHING = ["--required-batch-size-multiple", "1"]


def world_size(s: NMTSettings) -> int:
    """fairseq's processes: one per GPU of the setting on a GPU machine, one on a CPU (``--cpu``)."""
    return max(1, s.gpus) if torch.cuda.is_available() else 1


def update_freq(s: NMTSettings, world: int | None = None) -> int:
    """Batches accumulated per update so that max_tokens x processes x update_freq reaches tokens_per_update."""
    if not s.tokens_per_update:
        return 1
    world = world_size(s) if world is None else world
    return max(1, math.ceil(s.tokens_per_update / (s.max_tokens * world)))


def effective_tokens(s: NMTSettings, world: int | None = None) -> int:
    """Target tokens per update as run (an upper bound: fairseq fills each batch up to max_tokens)."""
    world = world_size(s) if world is None else world
    return s.max_tokens * world * update_freq(s, world)


def batch_record(s: NMTSettings, fairseq_arch: bool = False) -> dict[str, Any]:
    """What a run's batch and precision were, for its done.json (the NMT tables say it beside the plan)."""
    world = world_size(s)
    precision = "fp32"
    if s.bf16:
        precision = ("fp16 (fairseq)" if baseline_precision(s) else "fp32") if fairseq_arch else "bf16 autocast"
    return {"processes": world, "max_tokens": s.max_tokens, "update_freq": update_freq(s, world),
            "tokens_per_update": effective_tokens(s, world), "planned_tokens_per_update": s.tokens_per_update,
            "precision": precision}


def _run(cmd: list[str], log_path: Path) -> None:
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}  # glibc's malloc defaults: common/training/malloc.py says why
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", encoding="utf-8") as fh:
        fh.write(" ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    if proc.returncode:
        raise RuntimeError(f"{cmd[2]} failed (exit {proc.returncode}); see {log_path}")


def _data_fingerprint(data: Path) -> str:
    """sha256 over the binarized data's file names and sizes (a rebinarized corpus changes its .bin sizes)."""
    rows = sorted(f"{f.relative_to(data).as_posix()}\t{f.stat().st_size}" for f in data.rglob("*") if f.is_file())
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def _train(args: list[str], data: Path, save_dir: Path) -> None:
    """fairseq-train, resuming from ``checkpoint_last.pt`` only when that checkpoint was made with the same
    arguments and data (``resume.json``): a job rerun because its data or settings changed must not continue another
    run's checkpoint (fairseq would, or fail on a changed vocabulary); it stops with the folder to delete."""
    key = {"arguments": args, "data": _data_fingerprint(data)}
    record = save_dir / "resume.json"
    if (save_dir / "checkpoint_last.pt").exists():
        before = read_json(record) if record.exists() else None
        if before != key:
            changed = "no resume.json" if before is None else ", ".join(
                k for k in key if before.get(k) != key[k])
            raise RuntimeError(f"{save_dir} holds checkpoints of another run ({changed} differ); delete the folder "
                               "to train this one from the start")
    save_dir.mkdir(parents=True, exist_ok=True)
    write_json(record, key)
    _run([sys.executable, "-m", "fairseq_cli.train", *args], save_dir / "train.log")


def resumed_precision(save_dir: Path) -> str | None:
    """The precision of the checkpointed run in ``save_dir`` that this job resumes (its ``resume.json``), or None."""
    record = save_dir / "resume.json"
    if not ((save_dir / "checkpoint_last.pt").exists() and record.exists()):
        return None
    arguments = read_json(record)["arguments"]
    return "bf16" if {"--autocast-bf16", "--fp16"} & set(arguments) else "fp32"


def _common(s: NMTSettings, data: Path, save_dir: Path, lr: float, max_update: int,
            dropout: float | None = None) -> list[str]:
    cpu = not torch.cuda.is_available()
    return [str(data), "--user-dir", str(PLUGIN), "--task", "translation_hf", "-s", "src", "-t", "tgt",
            "--save-dir", str(save_dir), "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", str(lr),
            "--lr-scheduler", "inverse_sqrt", "--warmup-updates", str(s.warmup_updates), "--warmup-init-lr", "1e-07",
            "--max-tokens", str(s.max_tokens), "--max-update", str(max_update),
            "--dropout", str(s.dropout if dropout is None else dropout),
            "--weight-decay", str(s.weight_decay), "--clip-norm", str(s.clip_norm),
            "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", str(s.label_smoothing),
            "--validate-interval-updates", str(s.validate_interval_updates), "--save-interval-updates",
            str(s.validate_interval_updates), "--keep-interval-updates", "1", "--no-epoch-checkpoints",
            "--seed", str(s.seed), "--log-format", "json", "--log-interval", "10", "--num-workers", "0",
            "--update-freq", str(update_freq(s)),
            *BATCHING, *(["--cpu"] if cpu else ["--distributed-world-size", str(world_size(s))])]


def _finish(save_dir: Path, info: dict[str, Any], fairseq_arch: bool = False) -> None:
    """Mark a finished run: only ``checkpoint_best.pt`` stays (what stage 2, translation and the embedding tasks
    read). fairseq keeps three copies of one model while it trains (the interval checkpoint, best and last), about
    1 GB a stage at mini scale; the resume copies are of no use once the run is done, and a rerun of a done run
    starts from the beginning."""
    for path in save_dir.glob("checkpoint*.pt"):
        if path.name != "checkpoint_best.pt":
            path.unlink()
    write_json(save_dir / "done.json", {**info, "batch": batch_record(NMTSettings(**info["settings"]), fairseq_arch)})


def _hf(s: NMTSettings, encoder: Path) -> list[str]:
    return ["--arch", "hf_encoder_transformer", "--hf-encoder", str(encoder), "--decoder-layers", str(s.decoder_layers),
            *(["--cls-logit-bias"] if s.logit_bias else []), *(["--autocast-bf16"] if s.bf16 else [])]


def stage1_arguments(s: NMTSettings, data: Path, encoder: Path, save_dir: Path) -> list[str]:
    """``fairseq-train``'s arguments for stage 1 (also what the census builds and counts)."""
    return [*_common(s, data, save_dir, s.stage1_lr or s.lr, s.stage1_max_update), *_hf(s, encoder),
            "--freeze-encoder", "--patience", str(s.stage1_patience)]


def stage2_arguments(s: NMTSettings, data: Path, encoder: Path, stage1_dir: Path, save_dir: Path) -> list[str]:
    return [*_common(s, data, save_dir, s.lr, s.stage2_max_update), *_hf(s, encoder),
            "--finetune-from-model", str(stage1_dir / "checkpoint_best.pt")]


def baseline_arguments(s: NMTSettings, data: Path, encoder: Path | None, save_dir: Path) -> list[str]:
    """Random init, one pair, every parameter from the start (no stages); ``encoder`` gives the architecture of
    ``baseline_arch: same`` (its weights are not used)."""
    if s.baseline_arch == "same":
        if encoder is None:
            raise ValueError("baseline_arch 'same' takes the encoder's architecture: it needs the encoder")
        arch = [*_hf(replace(s, logit_bias=False), encoder), "--hf-random-init"]
    else:
        arch = ["--arch", s.baseline_arch, "--share-decoder-input-output-embed", *baseline_precision(s)]
    dropout = s.baseline_dropout if s.baseline_arch != "same" else None
    return [*_common(s, data, save_dir, s.stage1_lr or s.lr, s.baseline_max_update, dropout), *arch, "--patience",
            str(s.stage1_patience), *s.baseline_args]


def stage1(s: NMTSettings, data: Path, encoder: Path, save_dir: Path) -> None:
    _train(stage1_arguments(s, data, encoder, save_dir), data, save_dir)
    save_fairseq_encoder_meta(save_dir, encoder)
    _finish(save_dir, {"stage": 1, "settings": asdict(s), "encoder": str(encoder), "data": str(data)})


def stage2(s: NMTSettings, data: Path, encoder: Path, stage1_dir: Path, save_dir: Path) -> None:
    _train(stage2_arguments(s, data, encoder, stage1_dir, save_dir), data, save_dir)
    save_fairseq_encoder_meta(save_dir, encoder)  # its fine-tuned encoder, for the embedding-based tasks
    _finish(save_dir, {"stage": 2, "settings": asdict(s), "encoder": str(encoder), "data": str(data),
                       "from": str(stage1_dir)})


def baseline(s: NMTSettings, data: Path, encoder: Path, save_dir: Path) -> None:
    _train(baseline_arguments(s, data, encoder, save_dir), data, save_dir)
    _finish(save_dir, {"stage": "baseline", "settings": asdict(s), "data": str(data)},
            fairseq_arch=s.baseline_arch != "same")


def baseline_precision(s: NMTSettings) -> list[str]:
    """fairseq's mixed precision for a baseline architecture of a bf16 setting (see ``NMTSettings.bf16``)."""
    return ["--fp16"] if s.bf16 and torch.cuda.is_available() else []


def generation_args(checkpoint: Path, data: Path, subset: str, out_dir: Path, beam: int, lenpen: float,
                    max_len: tuple[float, float] = FAIRSEQ_MAX_LEN, max_tokens: int = 8000) -> list[str]:
    """fairseq-generate's command line: beam, length penalty, the target-language tag as a forced one-token prefix,
    and the output length cap ``max_len`` = (a, b): at most a x (source length) + b tokens."""
    return [str(data), "--user-dir", str(PLUGIN), "--task", "translation_hf", "-s", "src", "-t", "tgt", "--path",
            str(checkpoint), "--gen-subset", subset, "--beam", str(beam), "--lenpen", str(lenpen), "--prefix-size", "1",
            "--max-len-a", str(max_len[0]), "--max-len-b", str(int(max_len[1])),
            "--max-tokens", str(max_tokens), "--num-workers", "0", "--results-path", str(out_dir), *BATCHING,
            *(["--cpu"] if not torch.cuda.is_available() else [])]


def generate(checkpoint: Path, data: Path, subset: str, out_dir: Path, beam: int, lenpen: float,
             max_len: tuple[float, float] = FAIRSEQ_MAX_LEN) -> Path:
    """fairseq-generate (in this process: no second interpreter start per test set) of ``subset``; returns the
    log it writes (``generate-<subset>.txt``)."""
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq_cli.generate import main as generate_main

    parser = options.get_generation_parser()
    args = options.parse_args_and_arch(parser, generation_args(checkpoint, data, subset, out_dir, beam, lenpen,
                                                               max_len))
    generate_main(convert_namespace_to_omegaconf(args))
    return out_dir / f"generate-{subset}.txt"


def translate(checkpoint: Path, data: Path, subset: str, references: Path, out: Path, beam: int = 5,
              lenpen: float = 1.0, tokenized: bool = False,
              max_len: tuple[float, float] = FAIRSEQ_MAX_LEN) -> dict[str, Any]:
    """Generate ``subset`` of ``data`` (a pair's folder, ``<src>-<tgt>``; outputs capped at ``max_len``, see
    :func:`generation_args`) and score it against the raw ``references`` file; writes ``out`` (JSON, with
    per-sentence BLEU statistics ``items`` for resampling, in the main score's flavour) beside the hypotheses
    (``.hyp.txt``)."""
    from transformers import AutoTokenizer

    from common.nmt import bleu
    from common.nmt.fairseq_plugin.dictionary import HFDictionary

    gen_log = generate(checkpoint, data, subset, out.parent / f".{out.stem}", beam, lenpen, max_len)
    tok = AutoTokenizer.from_pretrained(tokenizer_dir(data, target=True))  # the dictionary the decoder spells in
    tags = read_json(data / "tags.json")["tags"]
    raw = read_lines(references)
    hyps = bleu.read_generate(gen_log, tok, HFDictionary(tok, tags).indices, len(raw))
    norm = bleu.normalizer(tok)
    refs = [norm(r) for r in raw]  # the text the vocabulary can produce (MiniLM's: lower-cased, no accents; own: NFC)
    pretokenized = references.parent / "pretokenized.json"  # tests whose references are tokenized already
    done = subset.removeprefix("test_") in (read_json(pretokenized) if pretokenized.exists() else [])
    result = {"beam": beam, "lenpen": lenpen, "max_len": list(max_len), "checkpoint": str(checkpoint), "subset": subset,
              "references": str(references), "n": len(refs),
              "references_normalized": sum(a != b for a, b in zip(raw, refs)),
              **bleu.score(hyps, refs, data.name.split("-")[1], subset.removeprefix("test_"),
                           uncased_model=tok("A")["input_ids"] == tok("a")["input_ids"], tokenized=tokenized,
                           references_tokenized=done)}
    out.parent.mkdir(parents=True, exist_ok=True)
    write_lines(out.with_suffix(".hyp.txt"), hyps)
    write_json(out, result)
    return result


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="HICTL's two-stage NMT fine-tuning (common/nmt/recipe.py)")
    p.add_argument("command", choices=("stage1", "stage2", "baseline", "translate"))
    p.add_argument("--settings", help="JSON of NMTSettings fields")
    p.add_argument("--scale", help="the job's scale: bf16 on a CPU that emulates it runs fp32 at the CPU scales "
                                   "(common.precision.run_precision)")
    p.add_argument("--data", required=True, help="the setting's data folder (common.nmt.data)")
    p.add_argument("--encoder")
    p.add_argument("--stage1")
    p.add_argument("--save-dir")
    p.add_argument("--checkpoint")
    p.add_argument("--tests", help='translate: JSON list of {"pair", "test", "out", "beam", "lenpen", "tokenized", '
                                   '"max_len"}')
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    keep_freed_memory(on_cpu=not torch.cuda.is_available())  # translate decodes in this process
    s = NMTSettings.from_config(json.loads(a.settings or "{}"))
    if s.bf16 and a.scale:  # a resumed run keeps the precision it ran at
        resumed = resumed_precision(Path(a.save_dir)) if a.save_dir else None
        s.bf16 = run_precision("bf16", a.scale, resumed=resumed) == "bf16"
    data = Path(a.data)
    if a.command == "stage1":
        stage1(s, data, Path(a.encoder), Path(a.save_dir))
    elif a.command == "stage2":
        stage2(s, data, Path(a.encoder), Path(a.stage1), Path(a.save_dir))
    elif a.command == "baseline":
        baseline(s, data, Path(a.encoder), Path(a.save_dir))
    else:
        for t in json.loads(a.tests):
            pair = data / t["pair"]
            translate(Path(a.checkpoint), pair, f"test_{t['test']}", pair / "references" / f"test_{t['test']}.txt",
                      Path(t["out"]), t.get("beam", 5), t.get("lenpen", 1.0), t.get("tokenized", False),
                      nmtplan.max_len(t))


if __name__ == "__main__":
    main()
