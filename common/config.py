"""Configuration: the workflow config (``config/config.yaml``) and per-experiment, per-scale configs.

Every config is validated against a JSON schema with ``additionalProperties: false`` throughout,
so a misspelt or unknown key is an error that names the key and the file. Pieces shared by all
experiments (encoder, training, corpus, resources, ...) are defined once in ``config/defs.yaml``
and referenced from each schema as ``defs#/$defs/<name>``.

An *experiment* is a paper (``papers/<paper>/config/<scale>.yaml``) or the cross-paper leaderboard
(``common/leaderboard/config/<scale>.yaml``): the leaderboard's shared sections (corpus, encoders,
training budget, seeds, ...) plus one paper's method section make a config that the paper's own
schema validates and its training recipe reads (:func:`load_experiment_config`).
"""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource

ROOT = Path(__file__).resolve().parent.parent
SCALES = ("smoke", "mini", "paper", "rehearsal", "ci")
# scales that run the paper's code paths: its corpora (downloads), pinned checkpoints, launchers and tables.
# ``rehearsal`` is the paper config with tiny widths, steps and corpora, on a CPU against a local mirror; ``ci`` is
# the rehearsal with its run registry cut to one run per distinct code path (the default test suite's rehearsal).
PAPER_SCALES = ("paper", "rehearsal", "ci")
# the rehearsals of the paper scale on a CPU: downloads from the local mirror (built from the rehearsal configs)
REHEARSAL_SCALES = ("rehearsal", "ci")
LEADERBOARD = "leaderboard"
# sections of the leaderboard config that every method's config takes as they are
SHARED_SECTIONS = ("scale", "description", "resources", "corpus", "tokenizer", "encoders", "pooling", "training",
                   "eval", "seeds")


class ConfigError(ValueError):
    pass


class Replace(dict[str, Any]):
    """A mapping tagged ``!replace`` in an overlay: it replaces the base's mapping instead of merging into it."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error (PyYAML keeps the last one,
    silently dropping the first block) and the ``!replace`` tag."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor`: merged below, where later keys win
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                hash(key)
            except TypeError:
                raise ConfigError(f"{key_node.start_mark.name}:{line}: a key that is not a scalar ({key!r})") from None
            if key in lines:
                raise ConfigError(f"{key_node.start_mark.name}:{line}: key {key!r} given twice in one mapping (first "
                                  f"at line {lines[key]})")
            lines[key] = line
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


_Loader.add_constructor("!replace", lambda loader, node: Replace(loader.construct_mapping(node, deep=True)))


def load_yaml(path: str | Path) -> Any:
    """A YAML file of this repository (configs, pins, reported numbers): safe loading, duplicate keys refused with
    the file and line."""
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_Loader)  # noqa: S506 (a SafeLoader with one more tag)


def _load_yaml(path: Path) -> dict[str, Any]:
    return load_yaml(path) or {}


def merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """``overlay`` over ``base``: mappings merge key by key (a mapping tagged ``!replace`` replaces), ``null``
    deletes the key, anything else (lists, numbers, strings) replaces."""
    out = dict(base)
    for key, value in overlay.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and not isinstance(value, Replace) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = _plain(value)
    return out


def _plain(value: Any) -> Any:
    """``value`` with every :class:`Replace` turned back into a plain dict (a config is plain YAML data)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, list) else value


def _load_config_file(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A config file; one that says ``extends: <scale>`` is that scale's file of the same folder (itself loaded so,
    in turn) with this file's keys merged over it (:func:`merge`): the rehearsal is the paper config with its sizes
    shrunk, and ``ci`` the rehearsal with its runs cut."""
    cfg = _load_yaml(path)
    if "extends" in cfg:
        base = path.with_name(f"{cfg.pop('extends')}.yaml")
        if not base.exists():
            raise ConfigError(f"{path}: extends {base.stem!r}, but {base} does not exist")
        if base in seen or base == path:
            raise ConfigError(f"{path}: extends {base.stem!r}, which extends it in turn (a cycle)")
        cfg = merge(_load_config_file(base, (*seen, path)), cfg)
    return cfg


@cache
def _registry() -> Registry:
    defs = _load_yaml(ROOT / "config" / "defs.yaml")
    registry: Registry[Any] = Registry().with_resource("defs", Resource.from_contents(defs))
    return registry


def validate(config: dict[str, Any], schema_path: str | Path, source: str) -> dict[str, Any]:
    """Check ``config`` against its schema, then the rules that join keys (a ``training`` section's precision,
    optimizer and ZeRO stage: :func:`common.precision.training_problems`)."""
    schema = _load_yaml(Path(schema_path))
    validator = jsonschema.Draft202012Validator(schema, registry=_registry())
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    lines = [f"{source}: at '{'/'.join(map(str, e.absolute_path)) or '<top>'}': {_message(e)}" for e in errors]
    if not errors and isinstance(config.get("training"), dict):
        from common.precision import training_problems

        for key, _, reason in (p.partition(": ") for p in training_problems(config["training"])):
            lines.append(f"{source}: at 'training/{key}': {reason}")
    if lines:
        raise ConfigError("invalid configuration\n  " + "\n  ".join(lines))
    return config


def _message(error: jsonschema.ValidationError) -> str:
    """The most specific reason (a oneOf failure names what failed in its best-matching branch)."""
    if error.context:
        return str(jsonschema.exceptions.best_match(error.context).message)
    return str(error.message)


def workflow_config(config: dict[str, Any]) -> dict[str, Any]:
    """Validate the Snakemake config (defaults filled in by the schema's defaults)."""
    schema = _load_yaml(ROOT / "config" / "schema.yaml")
    # config/config.yaml refused for a key given twice, which Snakemake's loader lets pass (a --configfile of the
    # user's own is read by Snakemake alone)
    _load_yaml(ROOT / "config" / "config.yaml")
    full = {k: v.get("default") for k, v in schema["properties"].items() if "default" in v}
    full.update(config)
    # `--config key=[1,2]` gives strings: read digits as integers where the schema wants them; it refuses the rest
    for key, prop in schema["properties"].items():
        if prop.get("items", {}).get("type") == "integer" and isinstance(full.get(key), list):
            full[key] = [int(s) if isinstance(s, str) and s.strip().isdigit() else s for s in full[key]]
    return validate(full, ROOT / "config" / "schema.yaml", "workflow config (config/config.yaml and --config)")


def _check_scale(scale: str) -> None:
    if scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r}; expected one of {SCALES}")


def paper_config_path(paper: str, scale: str) -> Path:
    _check_scale(scale)
    return ROOT / "papers" / paper / "config" / f"{scale}.yaml"


def papers(scale: str | None = None) -> list[str]:
    """The papers of this repository, in name order: every folder ``papers/<p>/`` with a workflow
    (``workflow/Snakefile``); with ``scale``, those that have a config at that scale. A paper is added or removed
    with its folder."""
    found = sorted(p.parent.parent.name for p in (ROOT / "papers").glob("*/workflow/Snakefile"))
    return [p for p in found if scale is None or paper_config_path(p, scale).exists()]


def load_paper_config(paper: str, scale: str) -> dict[str, Any]:
    path = paper_config_path(paper, scale)
    return validate(_load_config_file(path), path.parent / "schema.yaml", str(path))


def leaderboard_config_path(scale: str) -> Path:
    _check_scale(scale)
    return ROOT / "common" / "leaderboard" / "config" / f"{scale}.yaml"


def load_leaderboard_config(scale: str) -> dict[str, Any]:
    path = leaderboard_config_path(scale)
    return validate(_load_config_file(path), path.parent / "schema.yaml", str(path))


BENCH_SCALES = ("smoke", "mini")  # bench/config/<scale>.yaml; the GPU benchmark is scripts/bench_mfu.py


def bench_config_path(scale: str) -> Path:
    _check_scale(scale)
    path = ROOT / "bench" / "config" / f"{scale}.yaml"
    if not path.exists():
        raise ConfigError(f"{path}: the benchmarks have no {scale!r} scale; they run at smoke (the default) "
                          "or mini")
    return path


def load_bench_config(scale: str) -> dict[str, Any]:
    path = bench_config_path(scale)
    return validate(_load_yaml(path), path.parent / "schema.yaml", str(path))


def load_config(experiment: str, scale: str) -> dict[str, Any]:
    """An experiment's own config: ``papers/<experiment>/config/<scale>.yaml`` or the leaderboard's."""
    return load_leaderboard_config(scale) if experiment == LEADERBOARD else load_paper_config(experiment, scale)


def load_experiment_config(experiment: str, paper: str, scale: str) -> dict[str, Any]:
    """The config one of ``paper``'s methods trains with inside ``experiment``: the paper itself; another paper
    declared on ``paper``'s recipe (its own config, which must also be one ``paper``'s schema accepts); or the
    leaderboard (its shared sections plus ``papers.<paper>`` of the leaderboard config)."""
    if experiment == paper:
        return load_paper_config(paper, scale)
    if experiment != LEADERBOARD:
        path = paper_config_path(experiment, scale)
        if not path.exists():
            raise ConfigError(f"unknown experiment {experiment!r}: no {path}, and not {LEADERBOARD!r}")
        return validate(load_paper_config(experiment, scale), paper_config_path(paper, scale).parent / "schema.yaml",
                        f"{path} (read by {paper}'s recipe)")
    board = load_leaderboard_config(scale)
    if paper not in board["papers"]:
        raise ConfigError(f"{leaderboard_config_path(scale)}: no settings for {paper!r} under 'papers'")
    cfg = {k: board[k] for k in SHARED_SECTIONS if k in board} | board["papers"][paper]
    return validate(cfg, paper_config_path(paper, scale).parent / "schema.yaml",
                    f"{leaderboard_config_path(scale)} (shared sections + papers.{paper})")
