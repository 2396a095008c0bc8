"""DAP's claims (Tables 1-4), declared (:mod:`common.report.claim`): DAP above the encoder it starts from on
retrieval and mining (the abstract's "significantly improve sentence embedding"; Tables 1 and 3 against the base
models), and DAP above TR and above TR+TLM on each retrieval and transfer metric, for each initial encoder."""
from __future__ import annotations

from pathlib import Path
from statistics import mean

from common.config import load_yaml
from common.languages import LATIN_SCRIPT, TO_ISO1, XTREME_36
from common.report.claim import Claim, reported, task_side, unseeded_side
from papers.dap.runs import TASKS, registry
from papers.dap.variants import INIT, LABEL

TATOEBA, BUCC, XNLI = TASKS
SUBSET = "Tables 7-8 (our subset)"
REPORTED = load_yaml(Path(__file__).with_name("reported.yaml"))
PAPER_ENCODERS = {"mbert": "mBERT", "xlmr": "XLM-R"}  # the paper's two initialisations and its row names
PAPER_LATIN = [TO_ISO1[lang] for lang in XTREME_36 if lang in LATIN_SCRIPT]


def _paper_value(key: str, encoder: str, method: str) -> float | None:
    """The paper's number for a claims row's metric: a method's row of the paper's table, both directions averaged
    for Tatoeba (Table 1's 36 languages, every one of them trained in the paper, section 4.1; the Latin-script ones
    from Tables 7-8, which have no row for the encoder before pre-training)."""
    name = f"{encoder} (recomputed)" if method == INIT else f"{encoder}+{LABEL[method]}"
    if key in ("tatoeba", "tatoeba-trained"):
        return mean(REPORTED["table1_tatoeba"][d][name][2] for d in ("xx2en", "en2xx"))
    if key == "tatoeba-trained-latin":
        per = [REPORTED[t].get(name) for t in ("table7_xx2en", "table8_en2xx")]
        return None if None in per else mean(table[lang] for table in per for lang in PAPER_LATIN)
    if key == "bucc":
        return REPORTED["table3_bucc_test"][name]["avg_f1"]
    return REPORTED["table4_xnli"][name.removesuffix(" (recomputed)")][-1]  # xnli: the average, its last column


def _reported(key: str, init: str, baseline: str) -> str:
    """The paper's baseline → DAP on the row's metric, for the row's encoder where it is one of the paper's, else
    for both of them."""
    encoders = [PAPER_ENCODERS[init]] if init in PAPER_ENCODERS else list(PAPER_ENCODERS.values())
    return "; ".join(filter(None, (reported(_paper_value(key, e, baseline), _paper_value(key, e, "dap"), e)
                                   for e in encoders)))


def _trained(init: str, latin: bool = False):
    """The Tatoeba languages with training data (as the results list them), Latin-script ones only with ``latin``."""
    def languages(ctx) -> list[str]:
        trained = ctx.store.first("dap", TATOEBA, init)["trained_languages"]
        return [lang for lang in trained if lang in LATIN_SCRIPT] if latin else trained
    return languages


def _section5(init: str):
    """Section 5's average: the 36 XTREME languages, or every evaluated one where they are not all present."""
    def languages(ctx) -> list[str] | None:
        return XTREME_36 if ctx.store.first("dap", TATOEBA, init)["groups"]["36"]["both"] is not None else None
    return languages


def declare(cfg: dict) -> list[Claim]:
    claims = []
    for init in registry(cfg).inits():
        metrics = [("tatoeba", "Table 1", "Tatoeba (section 5 average: XTREME's 36 where present)", TATOEBA,
                    _section5(init)),
                   # our subsets of Tables 7-8's languages (Table 1 averages 14, 28 and 36 languages only)
                   ("tatoeba-trained", SUBSET, "Tatoeba, languages with training data", TATOEBA, _trained(init)),
                   ("tatoeba-trained-latin", SUBSET, "Tatoeba, Latin-script languages with training data", TATOEBA,
                    _trained(init, latin=True)),
                   ("bucc", "Table 3", "BUCC test F1", BUCC, None), ("xnli", "Table 4", "XNLI accuracy", XNLI, None)]
        # a pretrained encoder before pre-training takes no step, so its retrieval and mining scores hold for every
        # seed; one from scratch draws its weights on the seed, and is paired seed by seed (its first seed only)
        pretrained = "pretrained" in cfg["encoders"][init]
        claims += [Claim(f"above-initial.{key}.{init}", "dap", where, "DAP above the encoder it starts from", name,
                         unseeded_side(LABEL[INIT], INIT, task, init, cfg["seeds"], langs) if pretrained
                         else task_side(LABEL[INIT], INIT, task, init, languages=langs),
                         task_side("DAP", "dap", task, init, languages=langs), setting=init,
                         reported=_reported(key, init, INIT))
                   for key, where, name, task, langs in metrics if task != XNLI]
        for baseline in ("tr", "tr_tlm"):
            claims += [Claim(f"above-{baseline}.{key}.{init}", "dap", where, f"DAP > {LABEL[baseline]}", name,
                             task_side(LABEL[baseline], baseline, task, init, languages=langs),
                             task_side("DAP", "dap", task, init, languages=langs), setting=init,
                             reported=_reported(key, init, baseline))
                       for key, where, name, task, langs in metrics]
    return claims
