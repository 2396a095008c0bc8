"""What the NMT stage of a workflow runs (``nmt`` section of HICTL's config, or the leaderboard's; rules in
``common/workflow/rules/nmt.smk``), and where its outputs live.

A *system* is a pre-training run put through the two-stage recipe (its method name, e.g. ``hictl_hns``; suffix
``-nobias`` for the same without the [CLS]-vocabulary logit bias) or ``random``, the random-init baseline (one model
per pair, no stages). A *setting* (``low_resource``, ``transfer``) lists the pairs stage 1 trains on (their
concatenation), the pairs that get a stage 2, and the test sets (``final_only``: translated by the final models
alone, not by stage 1). Every translated test set is one BLEU JSON:
``<results>/nmt/<setting>/<system>/bleu/<model>/<test pair>.<test>.json`` with ``<model>`` ``stage1``,
``stage2-<pair>`` or, for ``random``, ``<pair>``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

RANDOM = "random"
PER_PAIR_FIELDS = {"lr", "stage2_max_update", "warmup_updates", "validate_interval_updates"}  # training only
NOBIAS = "-nobias"


@dataclass(frozen=True)
class Translation:
    setting: str
    system: str
    model: str  # stage1 | stage2-<pair> | <pair> (random)
    pair: str  # the test pair
    test: str

    def path(self, root: str) -> str:
        return f"{root}/nmt/{self.setting}/{self.system}/bleu/{self.model}/{self.pair}.{self.test}.json"


def recipe(nmt: dict[str, Any], setting: str) -> dict[str, Any]:
    """The recipe with the setting's overrides (e.g. the baseline's shape)."""
    return {**nmt["recipe"], **nmt["settings"][setting].get("recipe", {})}


def encoder_init(nmt: dict[str, Any], setting: str, encoders: Mapping[str, Any]) -> str:
    """The encoder setting whose pre-trained runs ``setting`` fine-tunes: its own ``init``, else the section's, else
    the config's first (HICTL's Table 4 fine-tunes the large model, Table 5 the base one)."""
    init: str = nmt["settings"][setting].get("init", nmt.get("init", next(iter(encoders))))
    return init


def settings(nmt: dict[str, Any], setting: str, system: str, pair: str | None = None) -> dict[str, Any]:
    """A job's ``NMTSettings`` fields: the setting's recipe, the pair's own fields (``recipe_by_pair``: a job that
    trains one pair, stage 2 or the baseline), the seed, the system's own switch (the logit bias)."""
    by_pair = nmt["settings"][setting].get("recipe_by_pair", {}).get(pair, {}) if pair else {}
    shaping = sorted(k for k in by_pair if not k.startswith("baseline_") and k not in PER_PAIR_FIELDS)
    if shaping:  # stage 2 continues stage 1's checkpoint (all pairs): its model cannot change per pair
        raise ValueError(f"nmt.settings.{setting}.recipe_by_pair.{pair}: {shaping} would give stage 2 another model "
                         f"than stage 1's; per pair only baseline_* and {sorted(PER_PAIR_FIELDS)}")
    s = {**recipe(nmt, setting), **by_pair, "seed": nmt.get("seed", 1)}
    if system.endswith(NOBIAS):
        s["logit_bias"] = False
    return s


def training_jobs(nmt: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(setting, system, model) of every NMT training job: a pre-trained system's ``stage1`` and ``stage2-<pair>``
    per fine-tuned pair, the random-init baseline's ``<pair>``."""
    out = []
    for setting, spec in nmt["settings"].items():
        for system in spec["systems"]:
            models = (list(spec["finetune"]) if system == RANDOM
                      else ["stage1", *(f"stage2-{p}" for p in spec["finetune"])])
            out += [(setting, system, m) for m in models]
    return out


def pretrained_run(system: str) -> str | None:
    """The pre-training method a system starts from (None for the random-init baseline)."""
    return None if system == RANDOM else system.removesuffix(NOBIAS)


def checkpoint(root: str, setting: str, system: str, model: str) -> str:
    if system == RANDOM:
        return f"{root}/nmt/{setting}/{RANDOM}/{model}"
    if model == "stage1":
        return f"{root}/nmt/{setting}/{system}/stage1"
    return f"{root}/nmt/{setting}/{system}/stage2/{model.removeprefix('stage2-')}"


def tests_of(spec: dict[str, Any], pair: str, system: str) -> list[str]:
    """The test sets of ``pair`` in a setting (``tests``: per pair, ``default`` for the others), plus the
    ``extra_tests`` of that pair for the systems listed in ``extra_tests_systems``."""
    tests = list(spec["tests"][pair] if pair in spec["tests"] else spec["tests"]["default"])
    if system in spec.get("extra_tests_systems", []):
        tests += spec.get("extra_tests", {}).get(pair, [])
    return tests


def translations(nmt: dict[str, Any]) -> list[Translation]:
    """Every (model, test set) the config asks for."""
    out = []
    for setting, spec in nmt["settings"].items():
        for system in spec["systems"]:
            stage1 = [] if spec.get("final_only") else ["stage1"]
            models = (list(spec["finetune"]) if system == RANDOM
                      else [*stage1, *(f"stage2-{p}" for p in spec["finetune"])])
            for model in models:
                trained = model.removeprefix("stage2-")
                pairs = spec["finetune"] if model == "stage1" else spec.get("test_pairs", {}).get(trained, [trained])
                out += [Translation(setting, system, model, pair, t) for pair in pairs
                        for t in tests_of(spec, pair, system)]
    return out


FAIRSEQ_MAX_LEN = (0.0, 200.0)  # fairseq-generate's own output length cap: 0 x source length + 200 tokens


def max_len(nmt: dict[str, Any]) -> tuple[float, float]:
    """The output length cap (a, b), at most a x (source length) + b tokens: the config's ``max_len``, else
    fairseq's."""
    a, b = nmt.get("max_len", FAIRSEQ_MAX_LEN)
    return float(a), float(b)


def tokenized(nmt: dict[str, Any], t: Translation) -> bool:
    """Scored with multi-bleu's convention: the config's ``tokenized_bleu`` names the test set or '<pair>.<test>'."""
    return bool({t.test, f"{t.pair}.{t.test}"} & set(nmt.get("tokenized_bleu", [])))


def test_sets(nmt: dict[str, Any], setting: str) -> dict[str, list[str]]:
    """{pair: every test set some model of the setting translates}."""
    out: dict[str, set[str]] = {}
    for t in translations(nmt):
        if t.setting == setting:
            out.setdefault(t.pair, set()).add(t.test)
    return {p: sorted(v) for p, v in out.items()}
