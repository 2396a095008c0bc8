"""``embedder.json`` as a typed record (:mod:`common.records`): what a saved model folder says about itself, checked
when it is written and whenever it is read (:func:`common.models.embedder.read_embedder_meta`), so a folder whose
``embedder.json`` lacks ``max_length`` or gives it as text is an error naming the file and the field before any
model is loaded, not a ``KeyError`` in the middle of an evaluation."""
from __future__ import annotations

from dataclasses import dataclass, field

_MODE = "(cls|mean|max|mean_sqrt_len_tokens|weightedmean|lasttoken)"
POOLING_PATTERN = f"^{_MODE}(\\+{_MODE})*$"


@dataclass(frozen=True)
class EmbedderRecord:
    """A saved model folder's ``embedder.json``: its kind and how it encodes (kind-specific fields optional)."""

    kind: str  # a registered embedder kind (common.models.embedder.EMBEDDERS)
    max_length: int = field(metadata={"schema": {"minimum": 1}})  # tokens per sentence when encoding
    # sentence-transformers' pooling modes (common.models.pooling.POOLING_MODES), several joined by "+"
    pooling: str | None = field(default=None, metadata={"schema": {"pattern": POOLING_PATTERN}})
    projection: str | None = None  # sentence-encoder saved before projections were Dense modules: its linear map's file
    modules: list[str] | None = None  # sentence-encoder: its sentence-transformers modules in order (modules.json)
    sides: list[str] | None = None  # dual-encoder: its language-specific sentence-encoder folders
    checkpoint: str | None = None  # fairseq-encoder: the NMT checkpoint whose encoder weights it loads
    encoder: str | None = None  # fairseq-encoder: the sentence-encoder folder it started from (relative)
