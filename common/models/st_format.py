"""The files of a sentence-transformers model folder, read and written without importing sentence-transformers.

A folder lists its modules in ``modules.json`` (``idx``, ``name``, ``path``, ``type``), in the order they run:

* ``Transformer`` (path ``""``): the HF model and tokenizer, ``sentence_bert_config.json`` (``max_seq_length``,
  ``do_lower_case``);
* ``Pooling`` (``1_Pooling/config.json``): its mode(s), written either as sentence-transformers 5+ does
  (``pooling_mode``: a name or a list, and ``include_prompt``) or as older releases did (one
  ``pooling_mode_<mode>`` boolean per mode); :data:`common.models.pooling.POOLING_MODES` are the modes;
* ``Dense`` (``2_Dense/``): ``config.json`` (``in_features``, ``out_features``, ``bias``, ``activation_function``,
  a ``torch.nn`` class, Tanh when absent as in sentence-transformers) and ``model.safetensors``
  (``linear.weight`` (out, in), ``linear.bias``);
* ``Normalize`` (``3_Normalize/``): L2 normalisation, no weights;
* ``Router`` (path ``""``, ``router_config.json``): one module list per route, sentence-transformers' way of
  storing a model with several encoders (here MoCo-BERT's ``xx`` and ``en`` sides; ``encode(x, task="en")``).

``config_sentence_transformers.json`` holds the model-wide settings: ``prompts`` (name -> text put before each
input), ``default_prompt_name`` and ``similarity_fn_name``. A malformed file is one error naming it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from torch import nn

from common.io import read_checkpoint, read_json, read_safetensors, write_json
from common.models.pooling import POOLING_MODES

MODULES = "modules.json"
ST_CONFIG = "config_sentence_transformers.json"
ROUTER_CONFIG = "router_config.json"
KNOWN = ("Transformer", "Pooling", "Dense", "Normalize", "Router")
# sentence-transformers' pooling booleans of its older config format, in the order it concatenates them
LEGACY_POOLING = {"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
                  "pooling_mode_mean_tokens": "mean", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
                  "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken"}
IDENTITY = "torch.nn.modules.linear.Identity"


class ModelFormatError(ValueError):
    """A model folder's file that cannot be read as what it claims to be (the message names the file or key)."""


@dataclass(frozen=True)
class Module:
    name: str  # Transformer, Pooling, Dense, Normalize or Router (the last part of its type)
    path: str  # relative to the model folder ("" for the folder itself)


def module_type(name: str) -> str:
    return f"sentence_transformers.models.{name}"


def read_modules(folder: str | Path) -> list[Module]:
    """The modules of ``folder/modules.json`` in order; an unknown type is an error naming the file."""
    path = Path(folder) / MODULES
    if not path.exists():
        raise FileNotFoundError(f"{path}: no modules.json (not a sentence-transformers folder)")
    raw = read_json(path)
    if not isinstance(raw, list):
        raise ModelFormatError(f"{path}: expected a list of modules")
    out = []
    for i, entry in enumerate(sorted(raw, key=lambda e: e.get("idx", 0))):
        kind = str(entry.get("type", "")).rsplit(".", 1)[-1]
        if kind not in KNOWN:
            raise ModelFormatError(f"{path}: module {i} has type {entry.get('type')!r}; this repository runs "
                                   f"{', '.join(KNOWN)}")
        out.append(Module(kind, str(entry.get("path", ""))))
    return out


def write_modules(folder: str | Path, modules: list[Module]) -> None:
    write_json(Path(folder) / MODULES, [{"idx": i, "name": str(i), "path": m.path, "type": module_type(m.name)}
                                        for i, m in enumerate(modules)])


@dataclass(frozen=True)
class PoolingConfig:
    mode: str  # one of POOLING_MODES, or several joined by "+"
    include_prompt: bool = True
    dimension: int | None = None


def read_pooling(path: str | Path) -> PoolingConfig:
    """A Pooling module's ``config.json``; a missing file, no mode or an unknown mode is an error naming the file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no pooling config (every model folder here states its pooling)")
    cfg = read_json(path)
    if "pooling_mode" in cfg:
        modes = [cfg["pooling_mode"]] if isinstance(cfg["pooling_mode"], str) else list(cfg["pooling_mode"])
    else:
        modes = [mode for key, mode in LEGACY_POOLING.items() if cfg.get(key)]
        unknown = sorted(k for k in cfg if k.startswith("pooling_mode_") and k not in LEGACY_POOLING and cfg[k])
        if unknown:
            raise ModelFormatError(f"{path}: unknown pooling mode key(s) {unknown}; known: {sorted(LEGACY_POOLING)}")
    if not modes:
        raise ModelFormatError(f"{path}: no pooling mode set (expected 'pooling_mode' or one of "
                               f"{sorted(LEGACY_POOLING)} true)")
    bad = [m for m in modes if m not in POOLING_MODES]
    if bad:
        raise ModelFormatError(f"{path}: unknown pooling mode {bad[0]!r}; expected one of {POOLING_MODES}")
    dim = cfg.get("embedding_dimension", cfg.get("word_embedding_dimension"))
    return PoolingConfig("+".join(modes), bool(cfg.get("include_prompt", True)), dim)


def write_pooling(folder: str | Path, dimension: int, mode: str) -> None:
    """``folder/config.json`` of a Pooling module, in the older boolean format (read by every release)."""
    modes = mode.split("+")
    bad = [m for m in modes if m not in POOLING_MODES]
    if bad:
        raise ValueError(f"unknown pooling mode {bad[0]!r}; expected one of {POOLING_MODES}")
    cfg: dict[str, Any] = {"word_embedding_dimension": dimension}
    cfg |= {key: m in modes for key, m in LEGACY_POOLING.items()}
    write_json(Path(folder) / "config.json", cfg)


def write_dense(folder: str | Path, weight: torch.Tensor, bias: torch.Tensor | None = None,
                activation: str = IDENTITY) -> None:
    """A Dense module: ``weight`` (out, in), an optional bias, identity activation by default."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out_features, in_features = weight.shape
    write_json(folder / "config.json", {"in_features": in_features, "out_features": out_features,
                                        "bias": bias is not None, "activation_function": activation})
    tensors = {"linear.weight": weight.detach().float().cpu().contiguous()}
    if bias is not None:
        tensors["linear.bias"] = bias.detach().float().cpu().contiguous()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})


ACTIVATIONS = {"Identity": nn.Identity, "Tanh": nn.Tanh, "ReLU": nn.ReLU, "GELU": nn.GELU, "Sigmoid": nn.Sigmoid,
               "SiLU": nn.SiLU}


def read_dense(folder: str | Path) -> nn.Module:
    """A Dense module as ``nn.Sequential(linear, activation)``; only ``torch.nn`` activations are run."""
    folder = Path(folder)
    cfg_path = folder / "config.json"
    if not cfg_path.exists():
        raise FileNotFoundError(f"{cfg_path}: no Dense config")
    cfg = read_json(cfg_path)
    activation = str(cfg.get("activation_function", "torch.nn.modules.activation.Tanh"))
    name = activation.rsplit(".", 1)[-1]
    if not activation.startswith("torch.") or name not in ACTIVATIONS:
        raise ModelFormatError(f"{cfg_path}: activation_function {activation!r} is not one of the torch.nn "
                               f"activations run here ({', '.join(ACTIVATIONS)})")
    weights = folder / "model.safetensors"
    if weights.exists():
        state = read_safetensors(weights)
    elif (folder / "pytorch_model.bin").exists():
        state = read_checkpoint(folder / "pytorch_model.bin")
    else:
        raise FileNotFoundError(f"{weights}: no weights (model.safetensors or pytorch_model.bin) for the Dense module")
    try:
        linear = nn.Linear(int(cfg["in_features"]), int(cfg["out_features"]), bias=bool(cfg.get("bias", True)))
        linear.load_state_dict({k.removeprefix("linear."): v for k, v in state.items()})
    except (KeyError, RuntimeError) as e:
        raise ModelFormatError(f"{folder}: Dense weights do not match its config.json: {e}") from None
    return nn.Sequential(linear, ACTIVATIONS[name]()).eval()


class Normalize(nn.Module):
    """L2 normalisation of each row (sentence-transformers' Normalize)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(x, p=2, dim=-1)


def write_st_config(folder: str | Path, prompts: dict[str, str] | None = None,
                    default_prompt_name: str | None = None) -> None:
    """``config_sentence_transformers.json``: cosine similarity, the given prompts (none by default)."""
    import sentence_transformers
    import transformers

    write_json(Path(folder) / ST_CONFIG, {
        "model_type": "SentenceTransformer",
        "__version__": {"sentence_transformers": sentence_transformers.__version__,
                        "transformers": transformers.__version__, "pytorch": torch.__version__},
        "prompts": prompts or {}, "default_prompt_name": default_prompt_name, "similarity_fn_name": "cosine"})


def read_st_config(folder: str | Path) -> dict[str, Any]:
    """``config_sentence_transformers.json`` (empty settings when the folder has none, as in older models)."""
    path = Path(folder) / ST_CONFIG
    cfg: dict[str, Any] = read_json(path) if path.exists() else {}
    prompts = cfg.get("prompts") or {}
    if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
        raise ModelFormatError(f"{path}: 'prompts' must map prompt names to strings")
    default = cfg.get("default_prompt_name")
    if default is not None and default not in prompts:
        raise ModelFormatError(f"{path}: default_prompt_name {default!r} is not among its prompts {sorted(prompts)}")
    return {"prompts": prompts, "default_prompt_name": default,
            "similarity_fn_name": cfg.get("similarity_fn_name") or "cosine"}


def write_router(folder: str | Path, routes: dict[str, list[Module]]) -> None:
    """A top-level Router over sub-folders that are module lists of their own (each route's modules, their paths
    relative to ``folder``); no default route, so ``encode`` must name one (``task="en"``)."""
    folder = Path(folder)
    types = {m.path: module_type(m.name) for modules in routes.values() for m in modules}
    structure = {route: [m.path for m in modules] for route, modules in routes.items()}
    write_json(folder / ROUTER_CONFIG, {"types": types, "structure": structure,
                                        "parameters": {"default_route": None, "allow_empty_key": False}})
    write_modules(folder, [Module("Router", "")])


def read_router(folder: str | Path) -> dict[str, list[Module]]:
    """Route -> its modules (paths relative to ``folder``), from ``router_config.json``."""
    path = Path(folder) / ROUTER_CONFIG
    if not path.exists():
        raise FileNotFoundError(f"{path}: a Router module needs its router_config.json")
    cfg = read_json(path)
    try:
        return {route: [Module(str(cfg["types"][p]).rsplit(".", 1)[-1], p) for p in paths]
                for route, paths in cfg["structure"].items()}
    except (KeyError, TypeError) as e:
        raise ModelFormatError(f"{path}: malformed router config ({e})") from None


def sentence_bert_config(folder: str | Path) -> dict[str, Any]:
    """``sentence_bert_config.json`` of a Transformer module (max_seq_length, do_lower_case); {} when absent."""
    path = Path(folder) / "sentence_bert_config.json"
    return json.loads(path.read_text()) if path.exists() else {}
