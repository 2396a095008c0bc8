"""VMSST's runs by name: the four objectives of Table 1 (section 6.3), the ablations of Table 4 (section 7.1),
the unshared model of Table 6 (section 7.2) and the batch sizes of Table 7 (section 7.4).

* ``vmsst``, ``contrastive``, ``bitranslation``, ``vmsst_contrastive`` -- Table 1;
* ``init`` -- VMSST's model as it starts, no step taken (the seed's random init, or the pretrained encoder with new
  heads): the reference that shows what training adds; the paper has no such row;
* ``vmsst_fact``, ``vmsst_4enc``, ``vmsst_dec-half`` / ``vmsst_dec-1`` (the paper's 12L / 1L decoders against its
  24 layers: half the main depth and one layer), ``vmsst_nokl``, ``vmsst_1enc``, ``vmsst_no-enc-le``,
  ``vmsst_no-dec-le`` -- Table 4. The paper's prose swaps the last two ("we remove the language embedding
  inputs to the decoder (no enc. l.e.)"); we follow the table's names: "no enc. l.e." removes the language
  encoder's input language embeddings, "no dec. l.e." the decoder's;
* ``vmsst_full`` -- Table 6: one language encoder and one decoder per language (no parameter sharing), trained on
  ``table6_languages`` only; ``<objective>_l4`` -- an objective trained on those languages (Table 6's other rows);
* ``<objective>_b<factor>`` -- Table 7: the global batch times ``factor`` (2 and 4: 4096 and 8192 of 2048; a
  fraction such as 0.5 puts the main batch in the middle of the sweep, as the mini scale does). VMSST's larger
  batches take their step in micro-batches of ``vmsst.micro_batch_per_gpu`` per GPU with accumulated gradients
  where the config sets it (memory; the same step for its loss, a mean of per-pair terms); the contrastive
  baseline's never do (its negatives are the batch).
"""
from __future__ import annotations

import re
from typing import Any

from common.runs import INIT
from papers.vmsst.settings import OBJECTIVES, Settings

ABLATIONS = ("vmsst_fact", "vmsst_4enc", "vmsst_dec-half", "vmsst_dec-1", "vmsst_nokl", "vmsst_1enc",
             "vmsst_no-enc-le", "vmsst_no-dec-le")
_BATCH = re.compile(r"^(?P<obj>vmsst|contrastive)_b(?P<f>[0-9]+(?:\.[0-9]+)?)$")


def resolve(name: str, cfg: dict, init: str, encoder_layers: int, decoder_pretrained: bool = False
            ) -> tuple[Settings, dict, list[str] | None]:
    """(model settings, training overrides, languages to train on or None for all) of run ``name`` on encoder
    setting ``init`` under config ``cfg`` (its ``vmsst`` section).

    The decoder has the encoder's depth (the paper's models are "6 layer" and "24 layer encoder-decoder" models)
    unless ``vmsst.decoder_layers`` sets it (Table 4 finds one layer best). Lambda (section 6.4) is 0.025 for "the
    pretrained models" and 0.1 "when training from randomly initialized parameters": the pretrained value where the
    decoder starts pretrained too (``decoder_pretrained``: mT5's), the other where it starts from scratch, as from
    random init or from an encoder-only checkpoint such as MiniLM. VMSST Contrastive's lambda may differ per
    setting. The mean heads start as ``vmsst.head_init`` says (default: nn.Linear's)."""
    v = cfg["vmsst"]
    base: dict[str, Any] = dict(elbo_weight=v["elbo_weight_pretrained"] if decoder_pretrained else v["elbo_weight"],
                vmsst_weight=v["vmsst_contrastive_weight"].get(init, v["vmsst_contrastive_weight"]["default"]),
                anneal_steps=v["anneal_steps"], decoder_layers=v.get("decoder_layers", encoder_layers),
                compile_loss=v.get("compile_loss", False), loss_chunk_tokens=v.get("loss_chunk_tokens", 0),
                vocab_loss=v.get("vocab_loss", "fused"), head_init=v.get("head_init", "default"))
    overrides: dict = {}
    languages = None
    m = _BATCH.match(name)
    if m:
        name = m["obj"]
        size = cfg["training"]["global_batch_size"] * float(m["f"])
        if not size.is_integer() or size < 1:
            raise ValueError(f"run {name!r}: batch {cfg['training']['global_batch_size']} x {m['f']} is not a whole "
                             "number of pairs")
        overrides["global_batch_size"] = int(size)
        if m["obj"] == "vmsst" and v.get("micro_batch_per_gpu"):  # a mean of per-pair terms: accumulate
            overrides["micro_batch_per_gpu"] = int(v["micro_batch_per_gpu"])
    if name.endswith("_l4") or name == "vmsst_full":
        languages = list(cfg["tables"]["table6_languages"])
        name = name.removesuffix("_l4")
    if name == INIT:  # VMSST's model at step 0: the same construction and seed, no update
        return Settings(objective="vmsst", **base), {"max_steps": 0}, languages
    if name in OBJECTIVES:
        return Settings(objective=name, **base), overrides, languages
    ablations: dict[str, dict[str, Any]] = {
        "vmsst_fact": {"factored": True}, "vmsst_4enc": {"encoders": "n4"},
        "vmsst_dec-half": {"decoder_layers": max(1, encoder_layers // 2)}, "vmsst_dec-1": {"decoder_layers": 1},
        "vmsst_nokl": {"kl": False}, "vmsst_1enc": {"encoders": "one"},
        "vmsst_no-enc-le": {"encoder_language_embeddings": False},
        "vmsst_no-dec-le": {"decoder_language_embeddings": False},
        "vmsst_full": {"encoders": "per_language", "decoders": "per_language"},
    }
    ablation = ablations.get(name)
    if ablation is None:
        raise ValueError(f"unknown VMSST run {name!r}; expected {INIT}, one of {OBJECTIVES}, {ABLATIONS}, "
                         "vmsst_full or <vmsst|contrastive>_b<factor>")
    return Settings(objective="vmsst", **{**base, **ablation}), overrides, languages


def same_step_as(name: str) -> str | None:
    """The run whose training step does the same work per pair as run ``name``, where the two differ: the routed
    variants keep several language encoders of one shape (``vmsst_4enc``: four; ``vmsst_full``: one per language) or
    decoders (``vmsst_full``: one per language), and each sentence passes exactly one of them (``VMSST.
    language_variable``, ``VMSST.decode_nll``), so per pair their FLOPs and saved activations are those of the twin
    encoder and shared decoder on the same languages; only their parameters differ. The census counts that run's
    step where the routed model is too large to build (common/census/__main__.py), and
    tests/papers/vmsst/test_variants.py checks the equality at a small width."""
    return {"vmsst_4enc": "vmsst", "vmsst_full": "vmsst_l4"}.get(name)


def batch_sweep(cfg: dict) -> list[tuple[int | float, int]]:
    """Table 7's (factor of our main batch, the paper's batch) pairs, smallest first: the main runs are the factor
    1; the smallest batch of the sweep stands for the paper's 2048."""
    factors = sorted([1, *cfg["tables"]["batch_factors"]])
    return [(f, round(2048 * f / factors[0])) for f in factors]


def batch_run(objective: str, factor: int | float) -> str:
    return objective if factor == 1 else f"{objective}_b{factor}"
