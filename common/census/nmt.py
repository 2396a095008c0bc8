"""The census of HICTL's NMT jobs (section 4.2): each ``fairseq-train`` job of the paper config's ``nmt`` plan built
from the arguments the recipe passes (:func:`common.nmt.recipe.stage1_arguments` and its siblings) and counted.

Stand-ins, as for the pre-training census (:mod:`common.census.probe`): the binarized data folder holds a tokenizer
of the encoder's vocabulary size (XLM-R's 250,002 pieces plus the target-language tags) and no sentences; the
encoder is the pinned architecture with random weights. fairseq parses the job's own argument list, sets up the
``translation_hf`` task and builds the model and its criterion (label-smoothed cross-entropy over the whole
vocabulary); one update is counted at two batch sizes of ``LENGTH``-token sentences on both sides: FLOPs
(FlopCounterMode) and the bytes autograd saves, under bf16 autocast (our encoder-decoder's ``--autocast-bf16``; it
stands for fairseq's ``--fp16`` in the Transformer baselines, the same width). Scaled to the job:

* **memory per GPU**: fp32 weights, gradients and Adam's two moments of the trainable parameters (stage 1 freezes
  the encoder: weights only), for a baseline under fairseq's ``--fp16`` also its fp16 weights and gradients; plus the
  activations of ``max_tokens`` tokens (``max_tokens / LENGTH`` sentences);
* **FLOPs**: per update, the counted FLOPs per sentence x the update's sentences (``tokens_per_update / LENGTH``);
  per run, x ``max_update``. Stage 1 and the baselines stop on the validation loss's patience, so their
  ``max_update`` is an upper bound, and the row says so.

``LENGTH`` is our choice: 32 pieces on each side, about a WMT / IWSLT sentence (the test sets average 20-30 words);
the fit is linear in sentences at that length, so longer sentences (attention) cost somewhat more per token.
"""
from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from common.census import flops
from common.nmt.settings import NMTSettings

log = logging.getLogger(__name__)
LENGTH = 32
ROWS = (2, 4)


@dataclass
class NmtCount:
    params: int
    trainable_params: int
    flops: list[float] = field(default_factory=list)  # at ROWS sentences
    activation_bytes: list[int] = field(default_factory=list)


def data_folder(root: Path, vocab_size: int, tags: list[str]) -> Path:
    """A binarized-data folder that fairseq's task can be set up from: the tokenizer and the tags, no sentences."""
    from common.models.tokenizer import SPECIAL_TOKENS, save_wordpiece

    data = root / "data"
    if not (data / "hf_tokenizer").exists():
        vocab = SPECIAL_TOKENS + [f"[unused{i}]" for i in range(vocab_size - len(SPECIAL_TOKENS))]
        save_wordpiece(vocab, data / "hf_tokenizer")
    (data / "tags.json").write_text(json.dumps({"tags": tags}))
    for side in ("src", "tgt"):
        (data / f"dict.{side}.txt").touch()
    return data


def count(arguments: list[str]) -> NmtCount:
    """Build the job of ``arguments`` (``fairseq-train``'s) and count one update at each of ``ROWS`` sentences."""
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    from common.census.probe import saved_activation_bytes

    args = options.parse_args_and_arch(options.get_training_parser(), arguments)
    cfg = convert_namespace_to_omegaconf(args)
    task = tasks.setup_task(cfg.task)
    model = task.build_model(cfg.model).train()
    criterion = task.build_criterion(cfg.criterion)
    params = list(model.parameters())
    out = NmtCount(sum(p.numel() for p in params), sum(p.numel() for p in params if p.requires_grad))
    dictionary = task.target_dictionary
    g = torch.Generator().manual_seed(0)
    for rows in ROWS:
        tokens = torch.randint(dictionary.nspecial + 10, dictionary.tokenizer_size, (rows, LENGTH), generator=g)
        src = tokens.clone()
        src[:, -1] = dictionary.eos()
        target = tokens.clone()
        target[:, -1] = dictionary.eos()
        prev = torch.cat([torch.full((rows, 1), dictionary.eos()), target[:, :-1]], 1)
        sample = {"id": torch.arange(rows), "nsentences": rows, "ntokens": rows * LENGTH, "target": target,
                  "net_input": {"src_tokens": src, "src_lengths": torch.full((rows,), LENGTH),
                                "prev_output_tokens": prev}}
        counter = flops.counter()
        with counter:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                saved, (loss, _, _) = saved_activation_bytes(model, functools.partial(criterion, model, sample))
            loss.backward()
        model.zero_grad(set_to_none=True)
        out.flops.append(float(counter.get_total_flops()))
        out.activation_bytes.append(int(saved))
    return out


def job_rows(cfg: dict[str, Any], mfu: float, workdir: Path, done: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The census rows of a paper config's NMT training jobs (``nmt/<setting>/<system>/<model>``); ``done`` (job ->
    row of an earlier census run) are kept. Jobs of the same shape are counted once."""
    from common.census.architectures import CONFIGS
    from common.census.probe import stand_in_models
    from common.models import hub
    from common.nmt import plan as plan
    from common.nmt import recipe as r

    nmt = cfg["nmt"]
    tags = sorted({lang for spec in nmt["settings"].values() for p in spec["finetune"] for lang in p.split("-")})
    counts: dict[tuple[str, str, int, str, tuple[str, ...], bool], NmtCount] = {}
    rows = []
    with stand_in_models(workdir / "hub"):
        for setting, system, model in plan.training_jobs(nmt):
            job = f"nmt/{setting}/{system}/{model}"
            if job in done:
                rows.append(done[job])
                continue
            name = cfg["encoders"][plan.encoder_init(nmt, setting, cfg["encoders"])]["pretrained"]
            encoder = workdir / "hub" / "models" / hub.model(name).folder
            data = data_folder(workdir / name, CONFIGS[name]["vocab_size"], tags)
            pair = None if model == "stage1" else model.removeprefix("stage2-")
            s = NMTSettings.from_config(plan.settings(nmt, setting, system, pair))
            kind = "baseline" if system == plan.RANDOM else model.split("-")[0]
            save = workdir / "save"
            if kind == "stage1":
                arguments = r.stage1_arguments(s, data, encoder, save)
            elif kind == "stage2":
                arguments = r.stage2_arguments(s, data, encoder, save, save)
            else:
                arguments = r.baseline_arguments(s, data, encoder, save)
            shape = (kind, name, s.decoder_layers, s.baseline_arch if kind == "baseline" else "",
                     tuple(s.baseline_args), s.logit_bias)
            if shape not in counts:
                log.info("counting NMT %s (%s)", job, shape)
                counts[shape] = count(arguments)
            rows.append(row(job, kind, s, counts[shape], mfu))
    return rows


def row(job: str, kind: str, s: NMTSettings, c: NmtCount, mfu: float) -> dict[str, Any]:
    """A census row (the fields of the training rows) for an NMT job of settings ``s`` counted as ``c``."""
    from common.census import estimate as est
    from common.nmt.recipe import effective_tokens, update_freq

    ranks = max(1, s.gpus)
    accum = update_freq(s, ranks)
    micro = s.max_tokens / LENGTH  # sentences per GPU batch
    sentences = effective_tokens(s, ranks) / LENGTH  # per update
    updates = {"stage1": s.stage1_max_update, "stage2": s.stage2_max_update, "baseline": s.baseline_max_update}[kind]
    flops = est.Linear.through(ROWS, (c.flops[0], c.flops[1]))
    acts = est.Linear.through(ROWS, (c.activation_bytes[0], c.activation_bytes[1]))
    opt = 8 * c.trainable_params  # fairseq's Adam: two fp32 moments
    states = est.model_state_bytes(c.params, c.trainable_params, opt, 0, ranks)
    if kind == "baseline" and s.bf16 and s.baseline_arch != "same":
        states["fp16_copies"] = 4 * c.params  # fairseq's --fp16: fp16 weights and gradients beside fp32 masters
    step_flops = flops.per_row * sentences + flops.fixed * ranks * accum
    return {"paper": "hictl", "job": job, "kind": "nmt", "seeds": 1, "gpus": ranks, "nodes": 1, "params": c.params,
            "trainable_params": c.trainable_params, "precision": "bf16" if s.bf16 else "fp32", "zero_stage": 0,
            "optimizer": "adam (fairseq)", "max_length": LENGTH, "global_batch": sentences,
            "micro_batch_per_gpu": micro, "accumulation_steps": accum, "steps": updates,
            "pairs_seen": sentences * updates, "upper_bound": kind != "stage2",
            "model_states_gib": est.states_gib(states),
            **est.needs(sum(states.values()), acts.at(micro), step_flops, updates, ranks, mfu),
            "checkpoint_disk_gib": est.checkpoint_disk_bytes(c.params, opt, 2) / est.GIB,
            "mem_mb": est.host_mem_mb(c.params, ranks)}
