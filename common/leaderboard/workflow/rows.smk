# Some methods' rows alone: `snakemake leaderboard/rows --config scale=<s> leaderboard_methods='[...]'` trains,
# evaluates and (where the NMT column fine-tunes them) translates with the methods listed, runs their readout check
# where the config asks for one, and rewrites their rows of the committed table
# (figures/leaderboard/<scale>/leaderboard.csv); every other row, outside ones included, is kept as it stands.
from pathlib import Path

from common.nmt import plan as nmtplan

# the systems' translations but the random-init row's, which the committed table keeps ({root}/nmt/{setting}/
# {system}/bleu/{model}/done.json); none where the NMT column is a target of its own (leaderboard/nmt)
ROWS_NMT = [f for f in (NMT_DONE if NMT_CFG and not NMT_OWN_TARGET else []) if Path(f).parts[-4] != nmtplan.RANDOM]


def rows_evals(wc):
    """The named methods' results JSON; without a name, or with fewer tasks or seeds than the table, an error before
    anything runs (the whole leaderboard is `leaderboard/all`)."""
    if not config.get("leaderboard_methods"):
        raise ValueError(f"{ROWS_TARGET}: name the rows to regenerate, --config leaderboard_methods='[...]'")
    if config.get("leaderboard_tasks") or config.get("leaderboard_seeds"):
        raise ValueError(f"{ROWS_TARGET}: the rows keep the table's tasks and seeds; restrict leaderboard_methods only")
    return EVAL_JSONS


rule rows:
    input:
        evals=rows_evals,
        corpus=rules.corpus.output.manifest,
        nmt=ROWS_NMT,
        readout=READOUT_JSONS,
    output:
        ROWS_TARGET,
    params:
        results=P.paper_results,
        out=P.figures,
        extra=REPORT_ARGS,
        scale=SCALE,
        experiment=EXPERIMENT,
    log:
        P.log("rows_report"),
    benchmark:
        P.bench("rows_report")
    run:
        rewrite_committed_table(params, input.corpus, log, output, "--rows",
                                {"evaluate": list(input.evals), "nmt": list(input.nmt)},
                                f"{params.experiment} rows {', '.join(CFG['methods'])}, scale {params.scale}")
