"""Pretrained checkpoints of the paper scale, pinned and downloaded once into one cache.

Every Hub model a config names (``encoders.<init>.pretrained`` or ``.tokenizer``) has an entry in
``hub_pins.yaml``: the repository, the commit ``revision`` (Hub URLs ``/resolve/<commit>/<file>`` are
immutable) and the files the code loads. ``python -m common.models.hub`` (the workflow's ``model`` rule)
fetches those files with :class:`common.data.download.Downloader` -- retried, resumed, written atomically,
each file's sha256 recorded in the folder's ``downloads.lock.json`` on first download -- into
``<cache_root>/models/<name>@<revision>/``, a folder ``from_pretrained`` loads. Jobs never reach the Hub:
the workflow sets ``HF_HUB_OFFLINE=1`` and :func:`local_folder` maps a pinned name to its cache folder
(``XLING_CACHE``), so a model that was not downloaded is an error naming the rule, not a silent download.
"""
from __future__ import annotations

import argparse
import logging
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from common.config import load_yaml
from common.io import write_json

log = logging.getLogger(__name__)
HUB = "https://huggingface.co"
PINS = Path(__file__).with_name("hub_pins.yaml")


@dataclass(frozen=True)
class HubModel:
    name: str  # as configs write it (``xlm-roberta-base``)
    repo: str  # the repository (``FacebookAI/xlm-roberta-base``)
    revision: str  # a 40-hex commit, or a branch whose files are pinned by digest on first download
    files: tuple[str, ...]

    @property
    def by_commit(self) -> bool:
        return len(self.revision) == 40 and all(c in "0123456789abcdef" for c in self.revision)

    @property
    def folder(self) -> str:
        """The cache folder name: ``<name with / as -->@<revision>``."""
        return f"{self.name.replace('/', '--')}@{self.revision}"

    def url(self, file: str) -> str:
        return f"{HUB}/{self.repo}/resolve/{self.revision}/{file}"


@cache
def pinned() -> dict[str, HubModel]:
    raw = load_yaml(PINS)
    return {name: HubModel(name, e["repo"], e["revision"], tuple(e["files"])) for name, e in raw.items()}


def is_hub_name(name: str | None) -> bool:
    """A Hub name (``org/model`` or ``model``), not a local path nor ``package:...``."""
    if not name:
        return False
    return not name.startswith(("package:", "/", ".")) and not Path(name).exists()


def model(name: str) -> HubModel:
    try:
        return pinned()[name]
    except KeyError:
        raise KeyError(f"Hub model {name!r} has no pinned revision in {PINS}; add its repository, commit and "
                       "files there") from None


def cache_root() -> Path | None:
    root = os.environ.get("XLING_CACHE")
    return Path(root) if root else None


def local_folder(name: str) -> Path:
    """The downloaded folder of a pinned Hub model (under ``$XLING_CACHE/models``)."""
    m = model(name)
    root = cache_root()
    if root is None:
        raise FileNotFoundError(f"Hub model {name!r}: XLING_CACHE is not set (the workflow sets it to its "
                                "cache_root); download it with `python -m common.models.hub --name ...`")
    folder = root / "models" / m.folder
    if not (folder / "done.json").exists():
        raise FileNotFoundError(f"Hub model {name!r} is not downloaded: {folder} is missing (the workflow's "
                                f"'model' rule fetches it)")
    return folder


def models_of(cfg: dict[str, Any]) -> list[str]:
    """Every Hub model an experiment config names (pretrained encoders and pretrained tokenizers)."""
    names: list[str] = []
    for enc in cfg["encoders"].values():
        for spec in ([enc["xx"], enc["en"]] if "xx" in enc else [enc]):
            names += [n for n in (spec.get("pretrained"), spec.get("tokenizer")) if is_hub_name(n)]
    return list(dict.fromkeys(names))


def download(name: str, root: str | Path, base_url: str | None = None, pins: dict[str, str] | None = None) -> Path:
    """Fetch a pinned model's files into ``<root>/models/<folder>`` (resumable; ``done.json`` marks it whole)."""
    from common.data.download import Downloader, Resource

    m = model(name)
    folder = Path(root) / "models" / m.folder
    d = Downloader(folder, base_url=base_url, pins={k.split("/", 1)[1]: v for k, v in (pins or {}).items()
                                                     if k.startswith(m.folder + "/")})
    if not m.by_commit:
        log.warning("%s is pinned by branch %r, not by commit: each file's sha256 is recorded on its first download "
                    "(%s) and held to from then on", name, m.revision, folder / "downloads.lock.json")
    for file in m.files:
        d.fetch(Resource(file, m.url(file), revision=m.revision))
    write_json(folder / "done.json", {"name": name, "repo": m.repo, "revision": m.revision, "files": list(m.files)})
    log.info("%s@%s: %d files in %s", name, m.revision, len(m.files), folder)
    return folder


def main(argv: list[str] | None = None) -> None:
    from common.data.mirror_server import serving

    p = argparse.ArgumentParser(prog="python -m common.models.hub", description=__doc__.splitlines()[0])
    p.add_argument("--name", required=True, help="a model of hub_pins.yaml")
    p.add_argument("--cache-root", required=True)
    p.add_argument("--base-url", default=None, help="a mirror replacing the scheme and host of the Hub's URLs")
    p.add_argument("--mirror", default=None, help="serve this rehearsal mirror folder and download from it")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    with serving(a.mirror, a.base_url) as (base_url, pins):
        download(a.name, a.cache_root, base_url, pins)


if __name__ == "__main__":
    main()
