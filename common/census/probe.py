"""One paper-scale training step, counted: the paper's own recipe builds its model at the paper's size on the CPU,
its own collator makes a batch, and one forward and backward are counted.

What stands in for what a paper-scale job downloads (nothing is fetched):

* **pretrained models**: a folder per pinned Hub name holding the pinned ``config.json``
  (:mod:`common.census.architectures`), with ``from_pretrained`` building the model from that config with
  small uniform weights (the counts do not depend on the values; sampled losses need finite scores);
* **tokenizers**: a WordPiece tokenizer per side whose vocabulary has the pinned model's size (or the config's
  ``tokenizer.vocab_size``), so embedding tables and vocabulary heads have the paper's shapes;
* **the corpus**: the paper's smoke corpus (synthetic languages), every sentence repeated to at least
  ``max_length`` words so that each sequence is cut at ``max_length`` (the longest batch a job meets).

Counted, at ``rows`` rows per side (the per-GPU micro batch is a multiple; ``estimate.py`` scales):

* **FLOPs** of forward + backward: ``torch.utils.flop_counter.FlopCounterMode`` (matrix products and attention);
* **activation memory**: the bytes autograd saves for the backward pass (``saved_tensors_hooks``; each storage
  once; attention dropout off, so that the CPU runs fused attention as a GPU does: :func:`attention_dropout_off`),
  under the job's precision (bf16 autocast on the CPU) and its ``gradient_checkpointing`` /
  ``grad_cache_rows`` switches, as the trainer applies them (``length_buckets`` changes nothing here: every probe
  row is cut at ``max_length``);
* **parameters**: trainable and total, of the model the trainer would wrap.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import importlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from common.census import flops
from common.census.architectures import CONFIGS
from common.models import hub, tokenizer_sides
from common.training.activation_checkpointing import count_selective_kept

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel

    from common.runs import Run
    from common.training.cli import Recipe

log = logging.getLogger(__name__)
T = TypeVar("T")


class TooLargeHere(RuntimeError):
    """The job's model does not fit this machine's memory for a counted step; its parameters were counted on the
    meta device (``partial``)."""

    def __init__(self, partial: StepCount, need_gb: float, have_gb: float):
        super().__init__(f"a counted step needs about {need_gb:.0f} GB (fp32 weights and gradients); this machine "
                         f"has {have_gb:.0f} GB available")
        self.partial = partial


def available_gb() -> float:
    """Memory this process can still take: the earlier probes' models collected and their pages returned first."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # glibc keeps freed arenas otherwise
    with open("/proc/meminfo") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("MemAvailable:")) / 2**20


@dataclass
class StepCount:
    rows: int  # sentences (pairs) per side in the counted batch
    flops: float  # forward + backward
    activation_bytes: int  # saved for the backward pass
    params: int
    trainable_params: int
    matrix_params: int  # trainable parameters of 2 or more dimensions (Adafactor factors these)
    matrix_shapes: list[tuple[int, int]]  # (rows, columns) of each such parameter, for Adafactor's state
    training: dict[str, Any]  # the job's training section with the run's own overrides (e.g. a variant's batch)


# ------------------------------------------------------------------ stand-ins for the downloads
@contextlib.contextmanager
def stand_in_models(root: Path) -> Iterator[None]:
    """Pinned Hub names resolve to config-only folders under ``root``; ``from_pretrained`` builds from the config."""
    from transformers import AutoConfig, PreTrainedModel
    from transformers.initialization import no_init_weights

    for name, config in CONFIGS.items():
        folder = root / "models" / hub.model(name).folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(config))
        (folder / "done.json").write_text("{}")
    original = PreTrainedModel.__dict__["from_pretrained"]

    def from_config(cls: type[PreTrainedModel], /, path: str | os.PathLike[str], *args: Any,
                    config: PretrainedConfig | None = None, **kwargs: Any) -> PreTrainedModel:
        config = config if config is not None else AutoConfig.from_pretrained(path)
        with no_init_weights():
            model = cls(config, **{k: v for k, v in kwargs.items() if k == "add_pooling_layer"})
        model.tie_weights()  # as from_pretrained does (no_init_weights skips it: mT5's encoder and decoder
        # embeddings would count as copies of the shared table)
        with torch.no_grad():  # small values (not the paper's, not garbage: sampling losses need finite scores)
            for p in model.parameters():
                p.uniform_(-0.02, 0.02)
        return model

    saved_cache = os.environ.get("XLING_CACHE")
    os.environ["XLING_CACHE"] = str(root)
    PreTrainedModel.from_pretrained = classmethod(from_config)
    try:
        yield
    finally:
        PreTrainedModel.from_pretrained = original
        if saved_cache is None:
            os.environ.pop("XLING_CACHE", None)
        else:
            os.environ["XLING_CACHE"] = saved_cache


def side_vocab_size(cfg: dict[str, Any], spec: dict[str, Any]) -> int:
    name = spec.get("tokenizer") or spec.get("pretrained")
    return CONFIGS[name]["vocab_size"] if name else int(cfg["tokenizer"]["vocab_size"])


def stand_in_tokenizers(cfg: dict[str, Any], init: str, words: list[str], out: Path) -> Path:
    """The ``--tokenizer`` folder of a run: per side, a WordPiece vocabulary of the paper's size holding ``words``
    whole (and every character), filled up with unused pieces."""
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    from common.models.tokenizer import SPECIAL_TOKENS, save_wordpiece

    enc = cfg["encoders"][init]
    folder = Path(tokenizer_sides.folder(str(out), init, enc))
    words = sorted({w.lower() for w in words})  # the stand-in lower-cases, as our WordPiece tokenizers do
    chars = sorted({c for w in words for c in w})
    for side in tokenizer_sides.sides(enc):
        spec = tokenizer_sides.spec(enc, side)
        size = side_vocab_size(cfg, spec)
        vocab = list(dict.fromkeys(SPECIAL_TOKENS + chars + [f"##{c}" for c in chars] + words))[:size]
        vocab += [f"[unused{i}]" for i in range(size - len(vocab))]
        side_dir = folder / side if side != tokenizer_sides.SHARED else folder
        name = spec.get("tokenizer") or spec.get("pretrained")
        if name and CONFIGS[name].get("type_vocab_size", 2) == 1:
            # a model with one token type (XLM-R): no token types, pairs laid out as RoBERTa's, all type 0 (saved as a
            # plain fast tokenizer: BertTokenizerFast would put its own pair template back when loaded)
            backend = save_wordpiece(vocab, side_dir).backend_tokenizer
            backend.post_processor = TemplateProcessing(
                single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] [SEP] $B:0 [SEP]",
                special_tokens=[(t, vocab.index(t)) for t in ("[CLS]", "[SEP]")])
            PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                                    sep_token="[SEP]", mask_token="[MASK]",
                                    model_input_names=["input_ids", "attention_mask"]).save_pretrained(side_dir)
        else:
            save_wordpiece(vocab, side_dir)
    return folder


def stretch(example: object, length: int) -> object:
    """Each sentence of an example repeated to at least ``length`` words (other fields unchanged)."""
    def long(s: object) -> object:
        if not isinstance(s, str) or not s:
            return s
        n = len(s.split())
        return " ".join([s] * (-(-length // max(n, 1))))

    return tuple(long(x) for x in example) if isinstance(example, tuple) else long(example)


def recipe_of(paper: str) -> Recipe:
    module = importlib.import_module(f"papers.{paper}.train")
    for value in vars(module).values():
        if isinstance(value, type) and getattr(value, "paper", None) == paper and hasattr(value, "build"):
            recipe: Recipe = value()
            return recipe
    raise LookupError(f"papers.{paper}.train defines no recipe")


# ------------------------------------------------------------------ counting
def attention_dropout_off(model: torch.nn.Module) -> int:
    """Attention-probability dropout off in ``model``'s attention modules (Hugging Face's ``*Attention`` modules'
    ``nn.Dropout``, ``nn.MultiheadAttention``'s rate); returns how many. On a GPU, attention with dropout runs a
    fused kernel that keeps no (S x S) score matrix; on the CPU, dropout sends it down the decomposed path, which
    keeps three per head (scores, softmax, mask): counted as they are, the CPU's activations would not be the GPU's.
    Without dropout the CPU takes its own fused kernel (``common.census.flops`` counts its FLOPs as the GPU's)."""
    n = 0
    for m in model.modules():
        if isinstance(m, torch.nn.MultiheadAttention) and m.dropout > 0:
            m.dropout, n = 0.0, n + 1
        elif "Attention" in type(m).__name__ and isinstance(getattr(m, "dropout", None), torch.nn.Dropout):
            m.dropout.p, n = 0.0, n + 1
    return n


def saved_activation_bytes(model: torch.nn.Module, run_step: Callable[[], T]) -> tuple[int, T]:
    """Bytes of the distinct storages autograd saves for the backward pass while ``run_step()`` builds its graph,
    and of those selective activation checkpointing keeps in its own cache, the parameters' own storages excepted
    (under autocast their bf16 copies count: they live through the step).
    A storage is known by its ``_cdata`` (its C++ object), so fake tensors, which have no data, count too."""
    params = {p.untyped_storage()._cdata for p in model.parameters()}
    storages: dict[int, int] = {}
    keep = []  # the saved tensors, so that no storage is freed and its address reused while counting

    def pack(t: torch.Tensor) -> torch.Tensor:
        s = t.untyped_storage()
        if s._cdata not in params:
            storages[s._cdata] = s.nbytes()
            keep.append(t)
        return t

    kept: dict[int, int] = {}  # what selective checkpointing keeps in its own cache, out of autograd's sight
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), count_selective_kept(kept):
        out = run_step()
    return sum({**storages, **{k: v for k, v in kept.items() if k not in params}}.values()), out


def count_steps(paper: str, cfg: dict[str, Any], run: Run, rows: tuple[int, ...], corpus_manifest: dict[str, Any],
                workdir: Path) -> list[StepCount]:
    """Count one training step of ``run`` (a :class:`common.runs.Run`) as its paper-scale job would take it, at each
    batch size of ``rows``: the stand-ins and the model are built once, a step counted per batch size. The
    vocabulary heads' scored positions are counted unpadded (``training.pad_scored_to`` 1): at the probe's few rows
    a multiple of 64 positions would be mostly padding, the same at both sizes, and the fit per row would miss the
    heads' work; at a paper-scale micro batch the padding adds at most ``pad_scored_to - 1`` positions."""
    from common.models.encoder import autocast
    from common.training.model_switches import apply_model_switches

    cfg = {**cfg, "training": {**cfg["training"], "pad_scored_to": 1}}
    recipe, args, examples = _prepare(paper, cfg, run, corpus_manifest, workdir, max(rows))
    t = cfg["training"]
    length = int(t["max_length"])
    shapes = _meta_parameters(recipe, cfg, args, corpus_manifest, examples, workdir, max(rows))
    if shapes is not None:
        need, have = 8 * shapes.params / 1e9 * 1.3, available_gb()  # weights and gradients, and some room
        if need > have:
            raise TooLargeHere(shapes, need, have)
    with stand_in_models(workdir / "hub"):
        built = recipe.build(cfg, args, corpus_manifest, examples)
    model = built.model.train()
    attention_dropout_off(model)
    training = {**t, **built.training_overrides}
    apply_model_switches(model, training)
    counts = []
    for n in rows:
        batch = built.collate([stretch(e, length) for e in examples[:n]], torch.Generator().manual_seed(0))
        counter = flops.counter()
        with counter:
            with autocast("cpu", training.get("precision", "fp32")):
                saved, out = saved_activation_bytes(model, functools.partial(model, **batch))
            out["loss"].backward()
        model.zero_grad(set_to_none=True)
        counts.append(_parameters(model, training, n))
        counts[-1].flops, counts[-1].activation_bytes = float(counter.get_total_flops()), int(saved)
    return counts


def count_parameters(paper: str, cfg: dict[str, Any], run: Run, corpus_manifest: dict[str, Any],
                     workdir: Path) -> StepCount:
    """The parameter counts of ``run``'s model (no step: for a run that only saves its encoder), built on the meta
    device, or for real where the recipe cannot build there."""
    recipe, args, examples = _prepare(paper, cfg, run, corpus_manifest, workdir, 1)
    shapes = _meta_parameters(recipe, cfg, args, corpus_manifest, examples, workdir, 0)
    if shapes is None:
        with stand_in_models(workdir / "hub"):
            built = recipe.build(cfg, args, corpus_manifest, examples)
        shapes = _parameters(built.model, {**cfg["training"], **built.training_overrides}, 0)
    return shapes


def _prepare(paper: str, cfg: dict[str, Any], run: Run, corpus_manifest: dict[str, Any], workdir: Path,
             rows: int) -> tuple[Recipe, Any, Sequence[Any]]:
    """The recipe, its run arguments (with a stand-in tokenizer) and its examples, of at least ``rows``."""
    from common.training.cli import RunArguments

    recipe = recipe_of(paper)
    args = RunArguments(scale="paper", method=run.method, init=run.init, seed=run.seed, corpus="-",
                        tokenizer="-", output_dir=str(workdir / "run"), experiment=paper)
    with stand_in_models(workdir / "hub"):  # a recipe may read its pretrained model's config (VMSST's depth)
        examples = recipe.examples(cfg, args, corpus_manifest)
    if len(examples) < rows:
        raise ValueError(f"{len(examples)} probe examples for {run.key}; {rows} needed")
    words = sorted({w for ex in examples[:2000] for s in (ex if isinstance(ex, tuple) else (ex,))
                    if isinstance(s, str) for w in s.split()})
    args.tokenizer = str(stand_in_tokenizers(cfg, run.init, words, workdir / "tokenizer"))
    return recipe, args, examples


def _meta_parameters(recipe: Recipe, cfg: dict[str, Any], args: Any, corpus_manifest: dict[str, Any],
                     examples: Sequence[Any], workdir: Path, rows: int) -> StepCount | None:
    """The parameter counts from a build on the meta device (no memory), or None where the recipe cannot build
    there."""
    try:
        with stand_in_models(workdir / "hub"), torch.device("meta"):
            meta = recipe.build(cfg, args, corpus_manifest, examples)
        return _parameters(meta.model, {**cfg["training"], **meta.training_overrides}, rows)
    except Exception:  # noqa: BLE001 - a recipe that cannot build on the meta device is built for real
        return None


def _parameters(model: torch.nn.Module, training: dict[str, Any], rows: int) -> StepCount:
    """The parameter counts of ``model`` (any device, the meta device included); FLOPs and activations zero."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    matrices = [(p.shape[0], p[0].numel()) for p in trainable if p.ndim >= 2]
    return StepCount(rows=rows, flops=0.0, activation_bytes=0, params=sum(p.numel() for p in model.parameters()),
                     trainable_params=sum(p.numel() for p in trainable),
                     matrix_params=sum(r * c for r, c in matrices), matrix_shapes=matrices, training=training)


def probe_corpus(paper: str, workdir: Path, data_root: str, languages: list[str] | None = None) -> dict[str, Any]:
    """The paper's smoke corpus (synthetic languages), written under ``workdir``: the probe's examples. With
    ``languages`` (the paper config's ``census.languages``), the first synthetic training languages take those
    codes, for runs that train on named languages."""
    from common.config import load_config
    from common.data.corpus import prepare

    spec = load_config(paper, "smoke")["corpus"]
    manifest = prepare(spec["kind"], workdir / "corpus", data_root, spec.get(spec["kind"], {}))
    keys = sorted(manifest["train"])
    rename = dict(zip(keys, languages or []))
    manifest["train"] = {rename.get(k, k): path for k, path in manifest["train"].items()}
    return manifest

