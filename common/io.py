"""File helpers: atomic writes, hashing, strict UTF-8 line reading, and reads that name the file they fail on.

Every artifact the workflow writes goes through :func:`atomic_write` (write to a
temporary file in the same folder, fsync, rename), so an interrupted job never
leaves a half-written output that Snakemake would take for a finished one.

Every file the repository reads goes through :func:`named_read` (JSON, gzip, safetensors, torch checkpoints): a
truncated, corrupt or undecodable file is a :class:`DataFormatError` naming the file (and the line, where there is
one), never a library's traceback without it. JSON is written and read finite only (:func:`write_json`,
:func:`read_json`): a NaN or an infinity is an error naming the file and the key.
"""
from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from common.finite import NonFiniteError, first_nonfinite

if TYPE_CHECKING:
    import torch


class DataFormatError(ValueError):
    """A data file is malformed; the message names the file and the line."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str):
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; rename it onto ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)  # mkstemp makes the file owner-only: give it the mode open() would (shared result folders)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)
        kwargs: dict[str, Any] = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_copy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """Copy ``src`` to ``dst`` through a temporary file renamed into place (:func:`atomic_write`)."""
    with open(src, "rb") as fin, atomic_write(dst, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)


# failures that say the file itself is bad (the caller's own errors, and a missing or unreadable file, which name it
# already, pass through unchanged)
_PASS_THROUGH = (DataFormatError, NonFiniteError, FileNotFoundError, PermissionError, IsADirectoryError, MemoryError)


@contextlib.contextmanager
def named_read(path: str | os.PathLike[str], what: str = "file") -> Iterator[None]:
    """The one place a failed read becomes an error naming the file: wrap the read call (and nothing else) of a JSON,
    gzip, safetensors or checkpoint file in it. Invalid JSON names the line, truncated or corrupt compressed data
    says so, and anything else a library raises while reading (a cut safetensors header, a torch checkpoint that is
    not a zip archive, an unpickler's refusal) becomes a :class:`DataFormatError` with the file's name before the
    library's own message."""
    try:
        yield
    except _PASS_THROUGH:
        raise
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, exc.lineno, f"invalid JSON ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, None, f"invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise DataFormatError(path, None, f"corrupt or truncated compressed data ({exc!r})") from exc
    except Exception as exc:
        raise DataFormatError(path, None, f"not a readable {what} ({type(exc).__name__}: {exc})") from exc


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """``obj`` as JSON, atomically. A NaN or an infinity anywhere in it is refused (:class:`NonFiniteError` naming
    the file and the key) before anything is written: Python would write a bare ``NaN``, which is not JSON."""
    found = first_nonfinite(obj)
    if found is not None:
        raise NonFiniteError(f"{path}: refusing to write {found[0]} = {found[1]}, not a finite number")
    with atomic_write(path) as fh:
        json.dump(obj, fh, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
        fh.write("\n")


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON file (UTF-8). Text that is not JSON is a :class:`DataFormatError` naming the file and the line; a
    ``NaN`` or ``Infinity`` in it (which Python's reader accepts) one naming the file and the key."""
    with named_read(path, "JSON file"):
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    found = first_nonfinite(data)
    if found is not None:
        raise DataFormatError(path, None, f"{found[0]}: {found[1]} is not a finite number")
    return data


def read_safetensors(path: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    """Every tensor of a safetensors file, on the CPU (a cut or corrupt file: an error naming it)."""
    from safetensors.torch import load_file

    with named_read(path, "safetensors file"):
        tensors: dict[str, torch.Tensor] = load_file(str(path))
    return tensors


def iter_safetensors(path: str | os.PathLike[str]) -> Iterator[tuple[str, torch.Tensor]]:
    """The (name, tensor) pairs of a safetensors file, one tensor in memory at a time (a cut or corrupt file: an
    error naming it)."""
    from safetensors import safe_open

    with named_read(path, "safetensors file"):
        handle: Any = safe_open(str(path), "pt")
        names = list(handle.keys())
    for name in names:
        with named_read(path, "safetensors file"):
            tensor = handle.get_tensor(name)
        yield name, tensor


def read_checkpoint(path: str | os.PathLike[str], **load_args: Any) -> Any:
    """A torch checkpoint read with ``torch.load(path, map_location="cpu", weights_only=True, **load_args)`` (a
    truncated file or a refused global: an error naming it). Callers that allow more globals wrap this call in
    ``torch.serialization.safe_globals``."""
    import torch

    with named_read(path, "torch checkpoint"):
        return torch.load(path, **{"map_location": "cpu", "weights_only": True, **load_args})


def write_lines(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    with atomic_write(path) as fh:
        for line in lines:
            if "\n" in line:
                raise ValueError(f"{path}: refusing to write a line containing a newline: {line!r}")
            fh.write(line + "\n")


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def sha256_json(value: Any) -> str:
    """sha256 of a JSON-able value, independent of its dicts' key order (non-JSON leaves as ``str``)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def sha256_files(paths: Iterable[str | os.PathLike[str]]) -> str:
    """One hash over several files (name-independent, order-dependent)."""
    h = hashlib.sha256()
    for p in paths:
        h.update(sha256_file(p).encode())
    return h.hexdigest()


def _open_bytes(path: Path) -> gzip.GzipFile | io.BufferedReader:
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def iter_lines(path: str | os.PathLike[str], *, strip_cr: bool = True) -> Iterator[str]:
    """Stream a UTF-8 text file (optionally gzipped) line by line, without newlines.

    Raises :class:`DataFormatError` naming the file and the 1-based line on bad UTF-8, and on compressed data that
    is corrupt or ends early (the line it could not read).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    lineno = 0
    with _open_bytes(path) as fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataFormatError(path, lineno, f"invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
                text = text.rstrip("\n")
                if strip_cr:
                    text = text.rstrip("\r")
                if lineno == 1:
                    text = text.lstrip("\ufeff")
                yield text
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:  # a truncated or corrupt .gz, at the line it stopped
            raise DataFormatError(path, lineno + 1, f"corrupt or truncated compressed data ({exc})") from exc


def iter_json_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """(1-based line number, parsed value) of each non-blank line of a JSON-lines file (UTF-8, optionally gzipped);
    a line that is not JSON raises :class:`DataFormatError` naming the file and the line. The caller checks each
    value's shape and names the line the same way."""
    for lineno, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, lineno, f"invalid JSON ({exc.msg})") from None


def read_lines(path: str | os.PathLike[str], *, strip_cr: bool = True) -> list[str]:
    """A UTF-8 text file (optionally gzipped) as a list of lines without newlines (:func:`iter_lines`)."""
    return list(iter_lines(path, strip_cr=strip_cr))
