"""The ``papers/<paper>/all`` target: a manifest of every artifact (path, sha256, rule)."""
from __future__ import annotations

import os
from pathlib import Path

from common.io import atomic_write, sha256_file


def files_under(path: str) -> list[str]:
    p = Path(path)
    if p.is_dir():
        return sorted(str(f) for f in p.rglob("*") if f.is_file())
    return [str(p)]


def write_manifest(out: str | os.PathLike[str], groups: dict[str, list[str]], header: str) -> int:
    rows = sorted({(f, rule) for rule, paths in groups.items() for path in paths for f in files_under(path)})
    with atomic_write(out) as fh:
        fh.write(f"# {header}\n# path\tsha256\trule\n")
        for f, rule in rows:
            fh.write(f"{f}\t{sha256_file(f)}\t{rule}\n")
    return len(rows)
