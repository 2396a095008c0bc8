"""MoCo-BERT training (section 2, section 3.1, appendix A-B): one run, one seed.

Dataclass command line in the style of HF ``run_glue.py``::

    python -m papers.moco.train --scale smoke --run moco --seed 1 \
        --corpus results/smoke/moco/corpus/manifest.json \
        --tokenizer_xx results/smoke/moco/tokenizer/xx --tokenizer_en results/smoke/moco/tokenizer/en \
        --output_dir results/smoke/moco/models/moco/seed1

Runs under a plain ``python`` (one process) or ``torchrun``/``srun``/``deepspeed`` (several).
Writes ``model/xx`` and ``model/en`` (HF + sentence-transformers folders, one per
language), ``metrics.jsonl``, ``training_args.json`` (the resolved config) and
``checkpoints/`` (resumable: queues and momentum encoders are module state).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import HfArgumentParser

from common.config import load_paper_config
from common.data.loaders import read_tsv_pairs, read_xnli_tsv
from common.io import read_json, write_json
from common.models.encoder import EncoderSpec, SentenceEncoder, build_encoder
from common.models.tokenizer import load_tokenizer
from common.training.trainer import LaunchArguments, Trainer, TrainingArguments
from papers.moco import variants
from papers.moco.data import MocoCollator
from papers.moco.model import DualMomentumContrast
from papers.moco.nli import NLIHead

log = logging.getLogger("papers.moco.train")


@dataclass
class RunArguments(LaunchArguments):
    scale: str = field(metadata={"help": "smoke | mini | paper (selects papers/moco/config/<scale>.yaml)"})
    run: str = field(metadata={"help": "init | moco | inbatch | moco_nli | q<K>[_b<B>][_t<tau>][_shared][_pool-<mode>]"})
    seed: int = field(metadata={"help": "random seed"})
    corpus: str = field(metadata={"help": "corpus manifest.json"})
    tokenizer_xx: str = field(metadata={"help": "tokenizer folder of the non-English encoder"})
    tokenizer_en: str = field(metadata={"help": "tokenizer folder of the English encoder"})
    output_dir: str = field(metadata={"help": "run folder"})


def load_pairs(manifest: dict) -> list[tuple[str, str]]:
    """(non-English, English) training pairs of the corpus's one non-English language."""
    if len(manifest["train"]) != 1:
        raise ValueError(f"MoCo-BERT trains one language pair; the corpus has {sorted(manifest['train'])}")
    (path,) = manifest["train"].values()
    return read_tsv_pairs(path)


def build(cfg: dict, s: dict, tok_xx, tok_en, seed: int) -> DualMomentumContrast:
    torch.manual_seed(seed)
    enc_xx = SentenceEncoder(build_encoder(EncoderSpec(**cfg["encoders"]["xx"]), len(tok_xx)), s["pooling"])
    enc_en = SentenceEncoder(build_encoder(EncoderSpec(**cfg["encoders"]["en"]), len(tok_en)), s["pooling"])
    m = cfg["moco"]
    head = NLIHead(enc_en.backbone.config.hidden_size, m["nli_hidden"], m["nli_dropout"]) if s["nli"] else None
    return DualMomentumContrast(enc_xx, enc_en, queue_size=s["queue_size"], temperature=s["temperature"],
                                momentum=m["momentum"], negatives=s["negatives"], momentum_mode=s["momentum_mode"],
                                nli_head=head, nli_weight=m["nli_weight"], seed=seed)


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    (run,) = HfArgumentParser(RunArguments).parse_args_into_dataclasses(args=argv)
    cfg = load_paper_config("moco", run.scale)
    s = variants.resolve(run.run, cfg)
    t = cfg["training"]
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", t.get("threads", 1))))
    manifest = read_json(run.corpus)
    pairs = load_pairs(manifest)
    tok_xx, tok_en = load_tokenizer(run.tokenizer_xx), load_tokenizer(run.tokenizer_en)
    model = build(cfg, s, tok_xx, tok_en, run.seed)
    nli = read_xnli_tsv(manifest["nli_train"]) if s["nli"] else None
    collate = MocoCollator(tok_xx, tok_en, t["max_length"], nli, cfg["moco"]["nli_batch_size"])
    args = TrainingArguments.from_config(
        t, output_dir=run.output_dir, seed=run.seed, max_steps=run.max_steps if run.max_steps is not None else s["max_steps"],
        global_batch_size=s["global_batch_size"], stop_after=run.stop_after)
    resolved = {"paper": "moco", "run": vars(run), "settings": s, "config": cfg, "n_examples": len(pairs),
                "language": next(iter(manifest["train"]))}
    trainer = Trainer(model, pairs, collate, args, config_to_save=resolved)
    summary = trainer.train()
    if "stopped_at" in summary:
        log.info("stopped after step %d (stop_after)", summary["stopped_at"])
        return
    if trainer.rank == 0:
        out = Path(run.output_dir)
        m = trainer.unwrap()
        for enc, tok, side in ((m.encoder_x, tok_xx, "xx"), (m.encoder_y, tok_en, "en")):
            enc.save(out / "model" / side, tok, max_seq_length=cfg["eval"]["max_length"])
        write_json(out / "model" / "moco_run.json", resolved)
        write_json(out / "summary.json", summary)


if __name__ == "__main__":
    main()
