"""Method overheads at the papers' shapes: each method's training step over the TR step.

Shapes: BERT-base (12 layers, 768 hidden, 12 heads) with mBERT's 119,547-token vocabulary for DAP's
models (DAP section 4.2); MoCo-BERT's two BERT-base encoders with the English (30,522) and Chinese
(21,128) BERT vocabularies and its 409,600-key queues (MoCo-BERT section 3.1). Max length 32; weights
random (time does not depend on them); ``--batch`` pairs per step (the papers: 1024 / 256 over 8 GPUs).
A step is forward, backward and the AdamW update, as in training; reported: the median of ``repeats``
steps after ``warmup`` steps, every model timed in this one process.

Rows and goals: DAP step / TR step <= 1.3 (the paper's Table 6 measured 1.73), TR+TLM / TR
(no goal; Table 6: 2.63), MoCo-BERT step / in-batch step <= 1.4. DAP's cost over TR is mostly the RTL
head's softmax over the whole vocabulary at every target position; the DAP authors' code predicts over the
English part of the vocabulary only, the option ``dap.rtl_vocabulary: english`` (papers/dap/rtl.py), timed
here with 30,522 columns (BERT's English vocabulary size, a stand-in for the English part of mBERT's).
HICTL step / TR step at HICTL Base's shape (XLM-R base: BERT-base layers, a 250,002-token vocabulary; both
objectives, hard negatives, m = 512 word negatives, section 4.1), no goal. VMSST step / Contrastive step (its
paper's own baseline, section 6.3) at the mini config's 6-layer shape (128 wide, 8k vocabulary, decoder as deep as
the encoder): the paper's 6-layer 1024-wide models with mT5's 250k vocabulary need about 1.2B parameters with
AdamW state, more than this 23 GB machine holds. No goal.

    python -m bench.overheads --out figures/bench/<machine>/smoke --batch 8
"""
from __future__ import annotations

import argparse
import logging
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from transformers import BertConfig, BertForMaskedLM, BertModel

from bench.results import Record, Row, setup_threads
from common.models.encoder import SentenceEncoder, autocast

log = logging.getLogger(__name__)
MBERT_VOCAB, BERT_EN_VOCAB, BERT_ZH_VOCAB = 119_547, 30_522, 21_128
def paper_table6() -> dict[str, float]:
    """DAP Table 6's training latency relative to TR, from papers/dap/reported.yaml (0.88 / 0.51 and 1.34 / 0.51)."""
    import yaml

    from common.config import ROOT

    rep = yaml.safe_load((ROOT / "papers" / "dap" / "reported.yaml").read_text(encoding="utf-8"))["table6_efficiency"]
    tr = rep["mBERT+TR"]["latency_ms"]
    return {"dap": rep["mBERT+DAP"]["latency_ms"] / tr, "tr_tlm": rep["mBERT+TR+TLM"]["latency_ms"] / tr}


PAPER_TABLE6 = paper_table6()  # {"dap": 1.73, "tr_tlm": 2.63}


def bert_base(vocab: int) -> BertConfig:
    return BertConfig(vocab_size=vocab, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                      intermediate_size=3072, max_position_embeddings=512)


def time_steps(model: torch.nn.Module, batch: dict, warmup: int, repeats: int, precision: str) -> float:
    """Median seconds of a full training step (forward, backward, AdamW)."""
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    times = []
    for i in range(warmup + repeats):
        t0 = time.perf_counter()
        with autocast("cpu", precision):
            loss = model(**batch)["loss"]
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def dap_batches(batch: int, max_length: int) -> tuple[Any, list]:
    """A WordPiece tokenizer trained on random words (the vocabulary size is set in the model config) and pairs
    long enough to fill ``max_length`` tokens."""
    from common.models.tokenizer import train_wordpiece

    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]
    pairs = [(" ".join(rng.choices(words, k=2 * max_length)), " ".join(rng.choices(words, k=2 * max_length)), 1)
             for _ in range(batch)]
    with tempfile.TemporaryDirectory() as tmp:
        tok = train_wordpiece([s for x, y, _ in pairs for s in (x, y)], 4000, tmp, min_frequency=1)
    return tok, pairs


XLMR_VOCAB = 250_002


def hictl_steps(tok, pairs: list, max_length: int, warmup: int, repeats: int, precision: str) -> dict[str, float]:
    """HICTL (sentence + word CTL with hard negatives, section 3.1) and TR on one XLM-R-base-shaped encoder."""
    from papers.dap.data import DAPCollator
    from papers.dap.model import DAPModel
    from papers.hictl.data import PARALLEL, HICTLCollator
    from papers.hictl.model import HICTL

    out = {}
    torch.manual_seed(0)
    model = HICTL(BertForMaskedLM(bert_base(XLMR_VOCAB)), tok.all_special_ids, hard_negatives=True,
                  temperature=0.1, word_negatives=512)
    batch = HICTLCollator(tok, max_length)([(x, y, PARALLEL) for x, y, _ in pairs], torch.Generator().manual_seed(0))
    out["hictl"] = time_steps(model, batch, warmup, repeats, precision)
    del model
    torch.manual_seed(0)
    model = DAPModel(BertForMaskedLM(bert_base(XLMR_VOCAB)), ["tr"], temperature=0.05, pooling="cls")
    batch = DAPCollator(tok, max_length, ["tr"])(pairs, torch.Generator().manual_seed(0))
    out["tr_xlmr_shape"] = time_steps(model, batch, warmup, repeats, precision)
    return out


def vmsst_steps(pairs: list, max_length: int, warmup: int, repeats: int, precision: str) -> dict[str, float]:
    """VMSST (section 4) and its Contrastive baseline at the mini config's 6-layer shape, 8k vocabulary."""
    from common.models.tokenizer import train_wordpiece
    from papers.vmsst.data import VMSSTCollator
    from papers.vmsst.model import VMSST
    from papers.vmsst.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        tok = train_wordpiece([s for x, y, _ in pairs for s in (x, y)], 8000, tmp, min_frequency=1)
    examples = [(x, y, 1, 0) for x, y, _ in pairs]
    batch = VMSSTCollator(tok, max_length)(examples, torch.Generator().manual_seed(0))
    cfg = BertConfig(vocab_size=8000, hidden_size=128, num_hidden_layers=6, num_attention_heads=2,
                     intermediate_size=512, max_position_embeddings=64)
    out = {}
    for objective in ("vmsst", "contrastive"):
        torch.manual_seed(0)
        settings = Settings(objective=objective, decoder_layers=6, compile_loss=True,
                            vocab_loss="plain")  # as the mini config runs
        model = VMSST(BertModel(cfg, add_pooling_layer=False), settings,
                      num_languages=2, max_length=max_length, decoder_heads=2, decoder_ffn=512)
        out[objective] = time_steps(model, batch, warmup, repeats, precision)
        del model
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--max-length", type=int, default=32)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from papers.dap.data import DAPCollator
    from papers.dap.model import DAPModel
    from papers.moco.model import DualMomentumContrast

    setup = setup_threads(a.threads) | {"encoder": "BERT-base", "batch": a.batch, "max_length": a.max_length,
                                         "precision": a.precision, "warmup": a.warmup, "repeats": a.repeats}
    tok, pairs = dap_batches(a.batch, a.max_length)
    dap_time = {}
    english = list(range(BERT_EN_VOCAB))
    for name, objectives, vocab in (("tr", ["tr"], None), ("tr_tlm", ["tr", "tlm"], None), ("dap", ["tr", "rtl"], None),
                                    ("dap_english", ["tr", "rtl"], english)):
        torch.manual_seed(0)
        model = DAPModel(BertForMaskedLM(bert_base(MBERT_VOCAB)), objectives, temperature=0.05, rtl_layers=2,
                         pooling="cls", rtl_vocabulary=vocab, mask_token_id=tok.mask_token_id)
        batch = DAPCollator(tok, a.max_length, objectives, rho=1.0)(pairs, torch.Generator().manual_seed(0))
        dap_time[name] = time_steps(model, batch, a.warmup, a.repeats, a.precision)
        log.info("%s: %.3f s/step", name, dap_time[name])
        del model
    moco_time = {}
    x = torch.randint(1000, BERT_ZH_VOCAB, (a.batch, a.max_length))
    y = torch.randint(1000, BERT_EN_VOCAB, (a.batch, a.max_length))
    batch = {"x_input_ids": x, "x_attention_mask": torch.ones_like(x), "y_input_ids": y,
             "y_attention_mask": torch.ones_like(y)}
    for negatives in ("in_batch", "queue"):
        torch.manual_seed(0)
        model = DualMomentumContrast(
            SentenceEncoder(BertModel(bert_base(BERT_ZH_VOCAB), add_pooling_layer=False), "mean"),
            SentenceEncoder(BertModel(bert_base(BERT_EN_VOCAB), add_pooling_layer=False), "mean"),
            queue_size=409_600, temperature=0.04, momentum=0.999, negatives=negatives)
        moco_time[negatives] = time_steps(model, batch, a.warmup, a.repeats, a.precision)  # momentum: in forward
        log.info("moco %s: %.3f s/step", negatives, moco_time[negatives])
        del model
    hictl_time = hictl_steps(tok, pairs, a.max_length, a.warmup, a.repeats, a.precision)
    log.info("hictl: %s s/step", hictl_time)
    vmsst_time = vmsst_steps(pairs, a.max_length, a.warmup, a.repeats, a.precision)
    log.info("vmsst: %s s/step", vmsst_time)
    rec = Record("overheads", "Method overheads at the papers' shapes: each method's step over the TR step", setup,
                 series={"dap_s_per_step": dap_time, "moco_s_per_step": moco_time, "hictl_s_per_step": hictl_time,
                         "vmsst_s_per_step": vmsst_time})
    shape = f"BERT-base, {a.batch} pairs x {a.max_length} tokens"
    rec.add(Row(f"DAP step / TR step ({shape}, mBERT vocabulary)", dap_time["dap"], dap_time["tr"], "s/step",
                "DAP (TR + RTL, 2-layer head)", "TR", 1.3,
                f"paper Table 6: {PAPER_TABLE6['dap']:.2f}; the cost is RTL's softmax over all {MBERT_VOCAB:,} tokens "
                "at every target position and the head's 2 layers over source + target (next row: the English "
                "vocabulary only)"))
    rec.add(Row(f"DAP step, English RTL vocabulary / TR step ({shape})", dap_time["dap_english"], dap_time["tr"],
                "s/step", "DAP, rtl_vocabulary: english", "TR", 1.3,
                f"the authors' code's option: RTL's softmax over {BERT_EN_VOCAB:,} columns (a stand-in for mBERT's "
                "English part) instead of all; what remains over TR is the head's 2 layers and the smaller softmax"))
    rec.add(Row(f"TR+TLM step / TR step ({shape}, mBERT vocabulary)", dap_time["tr_tlm"], dap_time["tr"], "s/step",
                "TR+TLM", "TR", note=f"paper Table 6: {PAPER_TABLE6['tr_tlm']:.2f}; TLM adds a pass over the "
                "concatenated pair (2x the length) and the MLM softmax"))
    rec.add(Row(f"MoCo-BERT step / in-batch step ({shape}, queue 409,600)", moco_time["queue"],
                moco_time["in_batch"], "s/step", "dual momentum contrast", "in-batch negatives", 1.4,
                "two momentum encoders' forward passes and the queue's logits"))
    rec.add(Row(f"HICTL step / TR step (XLM-R-base shape, {a.batch} pairs x {a.max_length} tokens)",
                hictl_time["hictl"], hictl_time["tr_xlmr_shape"], "s/step", "HICTL (sentence + word CTL, Hns)", "TR",
                note="HICTL's extra work: the MLM/TLM pass over the concatenated pair, the projection f, the "
                     "sentence loss's hard negatives, and m = 512 sampled word negatives scored against the "
                     "250k-token embedding matrix"))
    rec.add(Row(f"VMSST step / Contrastive step (6 layers x 128, 8k vocabulary, {a.batch} pairs x {a.max_length} "
                "tokens)", vmsst_time["vmsst"], vmsst_time["contrastive"], "s/step", "VMSST", "Contrastive",
                note="VMSST adds a language encoder per side and a decoder with a vocabulary softmax at every "
                     "position of both sentences; paper shape (1024 wide, mT5 vocabulary) does not fit this "
                     "machine's memory"))
    rec.write(Path(a.out))


if __name__ == "__main__":
    main()
