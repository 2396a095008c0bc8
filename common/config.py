"""Configuration: the workflow config (``config/config.yaml``) and per-paper, per-scale configs.

Both are validated against JSON schemas (``config/schema.yaml``,
``papers/<paper>/config/schema.yaml``) with ``additionalProperties: false`` throughout,
so a misspelt or unknown key is an error that names the key and where it is.
"""
from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCALES = ("smoke", "mini", "paper")


class ConfigError(ValueError):
    pass


def _load_yaml(path: Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def validate(config: dict, schema_path: str | Path, source: str) -> dict:
    schema = _load_yaml(Path(schema_path))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{source}: at '{'/'.join(map(str, e.absolute_path)) or '<top>'}': {e.message}" for e in errors]
        raise ConfigError("invalid configuration\n  " + "\n  ".join(lines))
    return config


def workflow_config(config: dict) -> dict:
    """Validate the Snakemake config (defaults filled in by the schema's defaults)."""
    schema = _load_yaml(ROOT / "config" / "schema.yaml")
    full = {k: v.get("default") for k, v in schema["properties"].items() if "default" in v}
    full.update(config)
    return validate(full, ROOT / "config" / "schema.yaml", "workflow config (config/config.yaml and --config)")


def paper_config_path(paper: str, scale: str) -> Path:
    if scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r}; expected one of {SCALES}")
    return ROOT / "papers" / paper / "config" / f"{scale}.yaml"


def load_paper_config(paper: str, scale: str) -> dict:
    path = paper_config_path(paper, scale)
    cfg = _load_yaml(path)
    return validate(cfg, path.parent / "schema.yaml", str(path))
