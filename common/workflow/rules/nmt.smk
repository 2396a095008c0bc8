# NMT from the experiment's pre-trained encoders (HICTL section 3.2, Figure 3): binarize each setting's pairs with
# the encoder's tokenizer -> stage 1 (encoder frozen, all pairs of the setting) -> stage 2 (everything, per pair)
# -> fairseq-generate + BLEU per test set; the random-init baseline per pair. The plan (systems, settings, tests)
# is CFG["nmt"] (common/nmt/plan.py). Included after train.smk (the encoders are run outputs).
import json

from common.nmt import plan as nmtplan

NMT = CFG["nmt"]


wildcard_constraints:
    setting="[^/]+",
    system="[^/]+",
    pair="[^/.]+",
    model="[^/]+",


def nmt_init(setting):
    """The encoder setting whose runs ``setting`` fine-tunes (common/nmt/plan.py)."""
    return nmtplan.encoder_init(NMT, setting, CFG["encoders"])


NMT_ROOT = P.paper_results
NMT_GPUS = NMT["recipe"].get("gpus", 0)  # fairseq's --distributed-world-size (one process per GPU)


def nmt_settings_json(setting, system, pair=None):
    """NMTSettings as JSON (common/nmt/plan.py: the setting's recipe, the pair's, the seed, the system's logit
    bias)."""
    return json.dumps(nmtplan.settings(NMT, setting, system, pair))


def nmt_encoder(setting, system):
    """The saved model a system fine-tunes in a setting (the train rule's output folder)."""
    return f"{P.run_dir(nmt_init(setting), nmtplan.pretrained_run(system), NMT['encoder_seed'])}/model"


def nmt_encoder_dir(setting, system):
    """The HF encoder folder inside it: a language-specific pair (dual-encoder) gives the side that reads the
    source language (``encoder_side``)."""
    side = NMT.get("encoder_side", {}).get(system)
    return f"{nmt_encoder(setting, system)}/{side}" if side else nmt_encoder(setting, system)


rule nmt_data:
    input:
        corpus=rules.corpus.output.manifest,
        tokenizer=lambda wc: f"{P.paper_results}/tokenizer/{nmt_init(wc.setting)}/shared",
    output:
        directory(f"{NMT_ROOT}/nmt/data/{{setting}}"),
    params:
        spec=lambda wc: json.dumps({"finetune": NMT["settings"][wc.setting]["finetune"],
                                    "tests": nmtplan.test_sets(NMT, wc.setting),
                                    "max_length": NMT.get("max_length", 256),
                                    "train_set": NMT["settings"][wc.setting].get("train_set"),
                                    "target_vocab": NMT.get("target_vocab")}),
    resources:
        **job_resources(CFG, "corpus"),  # holds a setting's pairs in memory (WMT'14 En-Fr: tens of millions)
    log:
        P.log("nmt/data/{setting}"),
    benchmark:
        P.bench("nmt/data/{setting}")
    shell:
        "python -m common.nmt.data --corpus {input.corpus:q} --tokenizer {input.tokenizer:q} --spec {params.spec:q} "
        "--out {output:q} > {log:q} 2>&1"


rule nmt_stage1:
    input:
        data=f"{NMT_ROOT}/nmt/data/{{setting}}",
        encoder=lambda wc: nmt_encoder(wc.setting, wc.system),
    output:
        f"{NMT_ROOT}/nmt/{{setting}}/{{system}}/stage1/done.json",
    wildcard_constraints:
        system=f"(?!{nmtplan.RANDOM}$)[^/]+",
    params:
        settings=lambda wc: nmt_settings_json(wc.setting, wc.system),
        scale=SCALE,
        encoder=lambda wc: nmt_encoder_dir(wc.setting, wc.system),
        save=lambda wc, output: str(Path(output[0]).parent),
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=NMT_GPUS,
        # at paper scale the census's figures for this job (figures/census/paper.json, common/census/nmt.py)
        **train_resources(CFG, EXPERIMENT, job=lambda wc: f"nmt/{wc.setting}/{wc.system}/stage1",
                           ranks=max(1, NMT_GPUS)),
    log:
        P.log("nmt/{setting}/{system}/stage1"),
    benchmark:
        P.bench("nmt/{setting}/{system}/stage1")
    shell:
        "OMP_NUM_THREADS={threads} python -m common.nmt.recipe stage1 --settings {params.settings:q} --scale {params.scale:q} "
        "--data {input.data:q}/stage1 --encoder {params.encoder:q} --save-dir {params.save:q} > {log:q} 2>&1"


rule nmt_stage2:
    input:
        data=f"{NMT_ROOT}/nmt/data/{{setting}}",
        encoder=lambda wc: nmt_encoder(wc.setting, wc.system),
        stage1=f"{NMT_ROOT}/nmt/{{setting}}/{{system}}/stage1/done.json",
    output:
        f"{NMT_ROOT}/nmt/{{setting}}/{{system}}/stage2/{{pair}}/done.json",
    params:
        settings=lambda wc: nmt_settings_json(wc.setting, wc.system, wc.pair),
        scale=SCALE,
        encoder=lambda wc: nmt_encoder_dir(wc.setting, wc.system),
        save=lambda wc, output: str(Path(output[0]).parent),
        stage1=lambda wc, input: str(Path(input.stage1).parent),
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=NMT_GPUS,
        # at paper scale the census's figures for this job (figures/census/paper.json, common/census/nmt.py)
        **train_resources(CFG, EXPERIMENT, job=lambda wc: f"nmt/{wc.setting}/{wc.system}/stage2-{wc.pair}",
                           ranks=max(1, NMT_GPUS)),
    log:
        P.log("nmt/{setting}/{system}/stage2/{pair}"),
    benchmark:
        P.bench("nmt/{setting}/{system}/stage2/{pair}")
    shell:
        "OMP_NUM_THREADS={threads} python -m common.nmt.recipe stage2 --settings {params.settings:q} --scale {params.scale:q} "
        "--data {input.data:q}/{wildcards.pair:q} --encoder {params.encoder:q} --stage1 {params.stage1:q} "
        "--save-dir {params.save:q} > {log:q} 2>&1"


def nmt_random_shape(wc):
    """``baseline_arch: same``: a pre-trained system's encoder folder gives the random-init model its shape (its
    weights are not used); a fairseq architecture needs nothing but the data."""
    if nmtplan.settings(NMT, wc.setting, nmtplan.RANDOM, wc.pair).get("baseline_arch", "same") != "same":
        return []
    return [nmt_encoder(wc.setting, nmt_shape_system(wc.setting))]


def nmt_shape_system(setting):
    return next(s for s in NMT["settings"][setting]["systems"] if s != nmtplan.RANDOM)


rule nmt_random:
    input:
        data=f"{NMT_ROOT}/nmt/data/{{setting}}",
        shape=nmt_random_shape,
    output:
        f"{NMT_ROOT}/nmt/{{setting}}/{nmtplan.RANDOM}/{{pair}}/done.json",
    params:
        settings=lambda wc: nmt_settings_json(wc.setting, nmtplan.RANDOM, wc.pair),
        scale=SCALE,
        arch=lambda wc: nmt_encoder_dir(wc.setting, nmt_shape_system(wc.setting)) if nmt_random_shape(wc) else "none",
        save=lambda wc, output: str(Path(output[0]).parent),
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=NMT_GPUS,
        # at paper scale the census's figures for this job (figures/census/paper.json, common/census/nmt.py)
        **train_resources(CFG, EXPERIMENT, job=lambda wc: f"nmt/{wc.setting}/{nmtplan.RANDOM}/{wc.pair}",
                           ranks=max(1, NMT_GPUS)),
    log:
        P.log("nmt/{setting}/random/{pair}"),
    benchmark:
        P.bench("nmt/{setting}/random/{pair}")
    shell:
        "OMP_NUM_THREADS={threads} python -m common.nmt.recipe baseline --settings {params.settings:q} --scale {params.scale:q} "
        "--data {input.data:q}/{wildcards.pair:q} --encoder {params.arch:q} --save-dir {params.save:q} > {log:q} 2>&1"


def nmt_model_done(wc):
    return f"{nmtplan.checkpoint(NMT_ROOT, wc.setting, wc.system, wc.model)}/done.json"


def nmt_model_tests(wc):
    return [t for t in nmtplan.translations(NMT)
            if (t.setting, t.system, t.model) == (wc.setting, wc.system, wc.model)]


def nmt_beam(t):
    beams = NMT.get("beam", {})
    return beams.get(f"{t.pair}.{t.test}", beams.get("default", [5, 1.0]))


rule nmt_translate:
    """One job per model: every test set it is translated on (fairseq-generate in-process, then BLEU)."""
    input:
        data=f"{NMT_ROOT}/nmt/data/{{setting}}",
        model=nmt_model_done,
    output:
        done=f"{NMT_ROOT}/nmt/{{setting}}/{{system}}/bleu/{{model}}/done.json",
    params:
        checkpoint=lambda wc, input: f"{Path(input.model).parent}/checkpoint_best.pt",
        tests=lambda wc: json.dumps([{"pair": t.pair, "test": t.test, "out": t.path(NMT_ROOT),
                                      "beam": nmt_beam(t)[0], "lenpen": nmt_beam(t)[1],
                                      "tokenized": nmtplan.tokenized(NMT, t),
                                      "max_len": nmtplan.max_len(NMT)}
                                     for t in nmt_model_tests(wc)]),
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=min(1, NMT_GPUS),
        **job_resources(CFG, "evaluate"),
    log:
        P.log("nmt/{setting}/{system}/bleu/{model}"),
    benchmark:
        P.bench("nmt/{setting}/{system}/bleu/{model}")
    shell:
        "OMP_NUM_THREADS={threads} python -m common.nmt.recipe translate --data {input.data:q} "
        "--checkpoint {params.checkpoint:q} --tests {params.tests:q} > {log:q} 2>&1 && echo '{{}}' > {output.done:q}"


NMT_DONE = sorted({f"{NMT_ROOT}/nmt/{t.setting}/{t.system}/bleu/{t.model}/done.json"
                   for t in nmtplan.translations(NMT)})
