"""Encoding throughput: our evaluation embedder vs ``SentenceTransformer.encode``.

Same model (all-MiniLM-L6-v2, mean pooling), the same sentences (5 to 60 words, truncated at
``max_length`` tokens), batch size, thread count and precision. Ours is what every evaluator calls
(:class:`common.models.embedder.SentenceEncoderEmbedder`); both sort by length and pad per batch.
Reported: seconds per 1,000 sentences, the fastest of ``rounds`` alternating runs, and the largest
absolute difference between the two embeddings (they must agree).

    python -m bench.encode --out figures/bench/<machine>/smoke --sentences 2000
"""
from __future__ import annotations

import argparse
import logging
import tempfile
import time

import torch

from bench.results import Record, Row, setup_threads
from bench.workloads import minilm_dir, sentences, vocabulary_words


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--sentences", type=int, default=2000)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from sentence_transformers import SentenceTransformer

    from common.models.embedder import load_embedder, save_sentence_encoder
    from common.models.encoder import SentenceEncoder, autocast
    from common.models.tokenizer import load_tokenizer

    setup = setup_threads(a.threads) | {"model": "all-MiniLM-L6-v2", "sentences": a.sentences, "batch": a.batch,
                                         "max_length": a.max_length, "precision": a.precision, "device": a.device}
    texts = sentences(a.sentences, vocabulary_words(minilm_dir()), (5, 60), seed=0)
    with tempfile.TemporaryDirectory() as tmp:  # our model folder: the MiniLM weights saved by our code
        save_sentence_encoder(SentenceEncoder.load(minilm_dir()), load_tokenizer(minilm_dir()), tmp, a.max_length)
        ours_model = load_embedder(tmp, batch_size=a.batch, device=a.device, precision=a.precision)
    peer_model = SentenceTransformer(str(minilm_dir()), device=a.device)
    peer_model.max_seq_length = a.max_length

    def peer():
        with autocast(a.device, a.precision):
            return peer_model.encode(texts, batch_size=a.batch, convert_to_tensor=True, show_progress_bar=False)

    def ours():
        return ours_model.encode(texts, "en")

    times: dict[str, list[float]] = {"ours": [], "peer": []}
    outs = {}
    for _ in range(a.rounds):
        for name, fn in (("peer", peer), ("ours", ours)):
            t0 = time.perf_counter()
            outs[name] = fn()
            if a.device == "cuda":
                torch.cuda.synchronize()
            times[name].append((time.perf_counter() - t0) / len(texts) * 1000)
    # the evaluators compare cosines; the peer's model folder ends in a Normalize module, ours leaves it to them
    unit = {k: torch.nn.functional.normalize(v.float().cpu(), dim=-1) for k, v in outs.items()}
    diff = float((unit["ours"] - unit["peer"]).abs().max())
    rec = Record("encode", "Encoding throughput: our evaluation embedder vs SentenceTransformer.encode",
                 setup | {"max_abs_difference": diff}, series={f"{k}_s_per_1k": v for k, v in times.items()})
    rec.add(Row(f"encode {a.sentences} sentences (5-60 words), MiniLM-L6, batch {a.batch}, {a.precision}",
                min(times["ours"]), min(times["peer"]), "s / 1k sentences", "load_embedder(...).encode",
                "SentenceTransformer.encode", 1.0, f"unit embeddings agree to {diff:.1e} (max abs difference)"))
    rec.write(a.out)


if __name__ == "__main__":
    main()
