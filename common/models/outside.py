"""Models from outside the repository, named the way ``python -m common.eval --model`` takes them.

* ``NAME@REVISION`` -- a Hugging Face Hub model at a commit (40 hex digits: a commit's files never change), read
  offline: from the repository's download cache (``$XLING_CACHE/models/<name>@<revision>``, as
  :mod:`common.models.hub` writes it) or from the Hugging Face cache (``huggingface_hub`` with
  ``local_files_only``); nothing is downloaded at run time. A Hub name without a revision is an error.
* ``package:<module>/<folder>`` -- model files shipped inside an installed Python package (the offline MiniLM);
  its revision is the package's version.
* a local folder.

The folder is a sentence-transformers model (its ``modules.json``: Dense, Normalize, every pooling mode and its
prompts are honoured) or a plain Hugging Face model, which needs its pooling named. :func:`describe` is what a
results JSON records of it: name, revision, where it came from and the sha256 of its weight files.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.io import sha256_files

COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class ModelSource:
    spec: str  # as given
    name: str  # the Hub name, the package name, or the folder
    revision: str | None  # the Hub commit, the package version; None for a local folder
    origin: str  # "hub", "package" or "path"
    folder: Path


def split_hub(spec: str) -> tuple[str, str | None]:
    """``NAME@REVISION`` -> (NAME, REVISION); no ``@`` -> (spec, None)."""
    name, at, revision = spec.partition("@")
    return name, (revision if at else None)


def looks_like_hub_name(spec: str) -> bool:
    """``org/name`` or ``name`` (optionally ``@revision``) that is no existing path: how the Hub names models."""
    name, _ = split_hub(spec)
    return (not spec.startswith(("package:", "/", ".", "~")) and name.count("/") <= 1 and not Path(spec).exists()
            and bool(re.fullmatch(r"[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?", name)))


def resolve(spec: str) -> ModelSource:
    """Where the files of model ``spec`` are (module docstring); one error naming what is wrong."""
    if spec.startswith("package:"):
        module, _, sub = spec[len("package:"):].partition("/")
        found = importlib.util.find_spec(module)
        if found is None or found.origin is None:
            raise FileNotFoundError(f"model {spec!r}: Python package {module!r} is not installed")
        folder = Path(found.origin).parent / sub
        if not folder.is_dir():
            raise FileNotFoundError(f"model {spec!r}: {folder} does not exist")
        dists = importlib.metadata.packages_distributions().get(module, [])
        version = importlib.metadata.version(dists[0]) if dists else None
        return ModelSource(spec, dists[0] if dists else module, version, "package", folder)
    if Path(spec).expanduser().is_dir():
        folder = Path(spec).expanduser().resolve()
        return ModelSource(spec, folder.name, None, "path", folder)
    if not looks_like_hub_name(spec):
        raise FileNotFoundError(f"model {spec!r}: no such folder")
    name, revision = split_hub(spec)
    if revision is None:
        raise ValueError(f"model {spec!r}: a Hub model needs its revision, {name}@<commit> (40 hex digits), so that "
                         "the scores name the exact weights")
    if not COMMIT.match(revision):
        raise ValueError(f"model {spec!r}: revision {revision!r} is not a commit (40 hex digits); a branch or tag "
                         "can move")
    return ModelSource(spec, name, revision, "hub", hub_folder(name, revision))


def hub_folder(name: str, revision: str) -> Path:
    """The offline copy of Hub model ``name`` at commit ``revision``: the repository's cache, then Hugging Face's."""
    root = os.environ.get("XLING_CACHE")
    if root:
        ours = Path(root) / "models" / f"{name.replace('/', '--')}@{revision}"
        if (ours / "done.json").exists():
            return ours
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id=name, revision=revision, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError) as e:
        raise FileNotFoundError(f"model {name}@{revision}: not in the offline caches ($XLING_CACHE/models, the "
                                "Hugging Face cache); nothing is downloaded at run time "
                                f"({type(e).__name__})") from None


def weight_files(folder: Path) -> list[Path]:
    """Every weight file of a model folder (its modules' sub-folders included)."""
    return sorted(p for pattern in ("*.safetensors", "*.bin") for p in folder.rglob(pattern) if p.is_file())


def describe(source: ModelSource) -> dict[str, Any]:
    """What a results JSON records of an outside model."""
    files = weight_files(source.folder)
    return {"name": source.name, "revision": source.revision, "origin": source.origin, "source": source.spec,
            "path": str(source.folder), "weights_sha256": sha256_files([str(f) for f in files]) if files else None}
