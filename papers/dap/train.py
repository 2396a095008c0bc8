"""DAP pre-training (section 3.3, 4.2): one variant, one encoder initialisation, one seed.

Dataclass command line in the style of HF ``run_glue.py``::

    python -m papers.dap.train --scale smoke --variant dap --init scratch --seed 1 \
        --corpus results/smoke/dap/corpus/manifest.json --tokenizer results/smoke/dap/tokenizer \
        --output_dir results/smoke/dap/models/scratch/dap/seed1

Runs under a plain ``python`` (one process), ``deepspeed``/``torchrun``/``srun`` (several).
Writes ``model/`` (HF + sentence-transformers folder), ``metrics.jsonl``,
``training_args.json`` (the resolved config) and ``checkpoints/`` (resumable).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import HfArgumentParser

from common.config import load_paper_config
from common.data.loaders import read_tsv_pairs
from common.io import read_json, write_json
from common.models.encoder import EncoderSpec, build_mlm_model
from common.models.tokenizer import load_tokenizer
from common.training.trainer import LaunchArguments, Trainer, TrainingArguments
from papers.dap import variants
from papers.dap.data import DAPCollator
from papers.dap.model import DAPModel

log = logging.getLogger("papers.dap.train")


@dataclass
class RunArguments(LaunchArguments):
    scale: str = field(metadata={"help": "smoke | mini | paper (selects papers/dap/config/<scale>.yaml)"})
    variant: str = field(metadata={"help": "tr | tr_tlm | dap | dap_dir-* | dap_rho-* | dap_k-*"})
    init: str = field(metadata={"help": "encoder initialisation, a key of the config's 'encoders'"})
    seed: int = field(metadata={"help": "random seed"})
    corpus: str = field(metadata={"help": "corpus manifest.json"})
    tokenizer: str = field(metadata={"help": "tokenizer folder"})
    output_dir: str = field(metadata={"help": "run folder"})


def load_examples(manifest: dict) -> tuple[list[tuple[str, str, int]], dict[str, int]]:
    """(non-English, English, language id) for every training pair; English is id 0."""
    lang_ids = {"en": 0} | {lang: i + 1 for i, lang in enumerate(sorted(manifest["train"]))}
    examples = [(a, b, lang_ids[lang]) for lang, path in sorted(manifest["train"].items()) for a, b in read_tsv_pairs(path)]
    return examples, lang_ids


def build(cfg: dict, run: RunArguments, tokenizer, num_languages: int) -> tuple[DAPModel, dict]:
    method = variants.resolve(run.variant, cfg["dap"])
    spec = EncoderSpec(**cfg["encoders"][run.init])
    torch.manual_seed(run.seed)
    mlm = build_mlm_model(spec, vocab_size=len(tokenizer))
    d = cfg["dap"]
    model = DAPModel(mlm, method["objectives"], temperature=d["temperature"], margin=d.get("margin", 0.0),
                     rtl_layers=method["rtl_layers"], direction=method["direction"], rtl_weight=d["rtl_weight"],
                     tlm_weight=d.get("tlm_weight", 1.0), num_languages=num_languages, pooling=cfg["pooling"])
    return model, method


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    (run,) = HfArgumentParser(RunArguments).parse_args_into_dataclasses(args=argv)
    cfg = load_paper_config("dap", run.scale)
    if run.init not in cfg["encoders"]:
        raise SystemExit(f"unknown --init {run.init!r}; the {run.scale} config defines {sorted(cfg['encoders'])}")
    t = cfg["training"]
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", t.get("threads", 1))))
    manifest = read_json(run.corpus)
    examples, lang_ids = load_examples(manifest)
    tokenizer = load_tokenizer(run.tokenizer)
    model, method = build(cfg, run, tokenizer, num_languages=len(lang_ids))
    collate = DAPCollator(tokenizer, t["max_length"], method["objectives"], rho=method["rho"],
                          direction=method["direction"], tlm_mask_prob=cfg["dap"].get("tlm_mask_prob", 0.15))
    args = TrainingArguments.from_config(t, output_dir=run.output_dir, seed=run.seed, max_steps=run.max_steps,
                                         stop_after=run.stop_after)
    resolved = {"paper": "dap", "run": vars(run), "method": method, "config": cfg, "languages": lang_ids,
                "n_examples": len(examples)}
    trainer = Trainer(model, examples, collate, args, config_to_save=resolved)
    summary = trainer.train()
    if "stopped_at" in summary:
        log.info("stopped after step %d (stop_after)", summary["stopped_at"])
        return
    if trainer.rank == 0:
        out = Path(run.output_dir)
        encoder = trainer.unwrap().encoder
        encoder.save(out / "model", tokenizer, max_seq_length=cfg["eval"].get("max_length", t["max_length"]))
        write_json(out / "model" / "dap_run.json", resolved)
        write_json(out / "summary.json", summary)


if __name__ == "__main__":
    main()
