# Tokenizers: one per encoder initialisation, or one per language for language-specific encoders
# (common/models/tokenizer_sides.py).


rule tokenizer:
    input:
        corpus=rules.corpus.output.manifest,
        models=model_inputs,
    output:
        directory(f"{P.paper_results}/tokenizer/{{init}}/{{side}}"),
    wildcard_constraints:
        side="shared|xx|en",
    params:
        args=lambda wc: tokenizers.arguments(CFG, wc.init, wc.side),
    log:
        P.log("tokenizer/{init}/{side}"),
    benchmark:
        P.bench("tokenizer/{init}/{side}")
    shell:
        "python -m common.models.tokenizer --corpus {input.corpus:q} {params.args} --out {output:q} > {log:q} 2>&1"
