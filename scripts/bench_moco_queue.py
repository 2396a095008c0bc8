"""Step-time cost of MoCo-BERT's memory queue against in-batch negatives alone, and queue memory.

Times the contrastive part of one training step at the paper's shapes -- per-GPU batch
B = 1024 / 4 GPUs = 256, D = 768 -- for the in-batch loss (eq. 3 over the batch) and for the
dual-queue loss (eq. 2 both directions + clone + enqueue) with K up to 409,600, forward and
backward, median of ``--repeats``. The encoders' forward/backward is the same in both and is
not included; run ``--full`` to also time a whole smoke-size model step for both modes.
Prints one line per setting and the ratio to the in-batch baseline measured in this process.

    python scripts/bench_moco_queue.py [--device cuda] [--dtype float16]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from common import measurements
from common.losses import QueueInfoNCELoss, TranslationRankingLoss
from common.models.queue import KeyQueue


def timed(fn, repeats: int, device: str) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--queues", type=int, nargs="+", default=[4096, 65536, 204800, 409600])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--log", default=str(measurements.LOGS / "moco_queue.jsonl"),
                   help="the measurement log to append the figures to ('-': none)")
    p.add_argument("--seq-len", type=int, default=128, help="for the encoder FLOPs the queue is compared with")
    p.add_argument("--encoder-params", type=float, default=85e6,
                   help="non-embedding parameters of one encoder (BERT-base)")
    a = p.parse_args()
    dtype = getattr(torch, a.dtype)
    torch.manual_seed(0)
    dev = a.device
    h_x = torch.randn(a.batch, a.dim, device=dev, dtype=dtype, requires_grad=True)
    h_y = torch.randn(a.batch, a.dim, device=dev, dtype=dtype, requires_grad=True)
    k_x, k_y = F.normalize(torch.randn_like(h_x.detach()), dim=-1), F.normalize(torch.randn_like(h_y.detach()), dim=-1)
    ranking = TranslationRankingLoss(temperature=0.04, bidirectional=True)

    def in_batch():
        (2 * ranking(h_x, h_y)).backward()

    base = timed(in_batch, a.repeats, dev)
    figures: dict[str, float] = {"in_batch_ms": base * 1e3}
    print(f"device={dev} dtype={a.dtype} batch={a.batch} dim={a.dim}")
    print(f"in-batch negatives: {base * 1e3:.2f} ms/step (1.00x)")
    nce = QueueInfoNCELoss(0.04)
    for k in a.queues:
        qx, qy = KeyQueue(k, a.dim).to(dev, dtype), KeyQueue(k, a.dim).to(dev, dtype)

        def with_queue(qx=qx, qy=qy):
            q_x, q_y = F.normalize(h_x, dim=-1), F.normalize(h_y, dim=-1)
            (nce(q_x, k_y, qy.negatives()) + nce(q_y, k_x, qx.negatives())).backward()
            qx._dequeue_and_enqueue(k_x)
            qy._dequeue_and_enqueue(k_y)

        t = timed(with_queue, a.repeats, dev)
        mem = 2 * k * a.dim * torch.finfo(dtype).bits / 8 / 2**20
        figures[f"queue_{k}_ms"], figures[f"queue_{k}_mib"] = t * 1e3, mem
        print(f"queue K={k}: {t * 1e3:.2f} ms/step ({t / base:.2f}x in-batch), two queues {mem:.0f} MiB "
              f"(+ the same again for the per-step detached copies)")
        # 2 directions x (B x K x D logits forward + the same for dL/dq) x 2 FLOPs per multiply-add
        queue_flops = 2 * 2 * 2 * a.batch * k * a.dim
        # both encoders: forward + backward ~ 6 N per token; the two momentum encoders: forward ~ 2 N per token
        encoder_flops = (2 * 6 + 2 * 2) * a.encoder_params * a.batch * a.seq_len
        print(f"    queue logits {queue_flops / 1e9:.0f} GFLOP/step = {100 * queue_flops / encoder_flops:.1f}% of the "
              f"{encoder_flops / 1e12:.1f} TFLOP of the four encoder passes (length {a.seq_len})")
    if a.log != "-":
        measurements.append(a.log, "python scripts/bench_moco_queue.py " + " ".join(sys.argv[1:]), figures,
                            gpu=torch.cuda.get_device_name() if dev == "cuda" else None)


if __name__ == "__main__":
    main()
