"""Typed JSON records: a dataclass is the record's shape, its JSON schema is derived from it and written beside the
files, and reading a file checks it against the schema (an error names the file and the field). A field's
``metadata={"schema": {...}}`` adds constraints its type cannot say (``main_score`` a number, a minimum, the keys
a mapping must have); every number of a record must be finite (NaN and infinities are refused on write and read).

The records: :class:`common.eval.results.ResultRecord` (one evaluation's results JSON),
:class:`common.report.claim.ClaimRecord` (a claim's row in ``claims.json``),
:class:`common.data.manifest.CorpusManifest` (a corpus job's ``manifest.json``) and
:class:`common.models.embedder_record.EmbedderRecord` (a saved model folder's ``embedder.json``).
"""
from __future__ import annotations

import dataclasses
import os
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import jsonschema

from common.finite import first_nonfinite
from common.io import DataFormatError, read_json, write_json

R = TypeVar("R")
SCHEMA = "https://json-schema.org/draft/2020-12/schema"


def _json_type(t: Any) -> dict[str, Any]:
    """The JSON schema of one annotated type (str, int, float, bool, None, list[...], dict[...], unions, Any)."""
    origin, args = typing.get_origin(t), typing.get_args(t)
    if t is Any:
        return {}
    if t is type(None):
        return {"type": "null"}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_json_type(a) for a in args]}
    if t is bool:
        return {"type": "boolean"}
    if t is int:
        return {"type": "integer"}
    if t is float:
        return {"type": "number"}
    if t is str:
        return {"type": "string"}
    if t is list or origin is list:
        return {"type": "array", **({"items": _json_type(args[0])} if args else {})}
    if t is dict or origin is dict:
        return {"type": "object", **({"additionalProperties": _json_type(args[1])} if args else {})}
    raise TypeError(f"no JSON schema for the annotation {t!r}")


def schema(cls: type) -> dict[str, Any]:
    """The JSON schema of a dataclass record: every field typed (plus its ``metadata["schema"]``), the fields without
    a default required, no others."""
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    required = [f.name for f in fields
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    return {"$schema": SCHEMA, "title": cls.__name__, "description": (cls.__doc__ or "").strip().split("\n")[0],
            "type": "object",
            "properties": {f.name: {**_json_type(hints[f.name]), **f.metadata.get("schema", {})} for f in fields},
            "required": required, "additionalProperties": False}


def write_schema(folder: str | os.PathLike[str], cls: type) -> Path:
    """``<folder>/<ClassName>.schema.json``, beside the records it describes."""
    path = Path(folder) / f"{cls.__name__}.schema.json"
    write_json(path, schema(cls))
    return path


def check(data: Any, cls: type, where: str | os.PathLike[str]) -> None:
    """Raise :class:`DataFormatError` naming ``where`` and the first field that does not fit the record's schema, or
    the first number in it that is not finite."""
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema(cls)).iter_errors(data))
    if error is not None:
        field = "/".join(map(str, error.absolute_path)) or "the record"
        raise DataFormatError(where, None, f"not a {cls.__name__}: {field}: {error.message}")
    found = first_nonfinite(data)
    if found is not None:
        raise DataFormatError(where, None, f"not a {cls.__name__}: {found[0]}: {found[1]} is not a finite number")


def read_record(path: str | os.PathLike[str], cls: type[R]) -> R:
    """A record file, checked against its class's schema."""
    data = read_json(path)
    check(data, cls, path)
    return cls(**data)
