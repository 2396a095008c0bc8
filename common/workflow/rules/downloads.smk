# Shared downloads, included once by the top-level Snakefile (one copy for every paper): the pinned Hub
# checkpoints (common/models/hub.py) into cache_root, and at scale=rehearsal (and ci) the local mirror that stands in for
# every download host (common/rehearsal/mirror.py).
import re
from pathlib import Path

from common.models import hub
from common.workflow.paths import download_args, download_inputs, mirror_dir, model_done

HUB_FOLDERS = {m.folder: m.name for m in hub.pinned().values()}


rule model:
    input:
        download_inputs(config),
    output:
        model_done(config, "{folder}"),
    wildcard_constraints:
        folder="|".join(map(re.escape, HUB_FOLDERS)),
    params:
        name=lambda wc: HUB_FOLDERS[wc.folder],
        cache=config["cache_root"],
        source=download_args(config),
    resources:
        mem_mb=4000,
        runtime=120,
    log:
        "logs/models/{folder}.log",
    benchmark:
        "benchmarks/models/{folder}.tsv"
    shell:
        "python -m common.models.hub --name {params.name:q} --cache-root {params.cache:q} {params.source:q} > {log:q} 2>&1"


if mirror_dir(config):

    def mirror_data_root(wc):
        """No input: the real files the mirror serves from data_root are there (checked as the DAG is built)."""
        from common.rehearsal.mirror import EXPERIMENTS, data_root_paths
        from common.workflow.data_root import check

        paths = data_root_paths(EXPERIMENTS, "rehearsal", Path(config["data_root"]))
        return check(paths, config["data_root"], "the rehearsal's mirror")

    rule mirror:
        input:
            mirror_data_root,
        output:
            f"{mirror_dir(config)}/done.json",
        params:
            data_root=config["data_root"],
            out=mirror_dir(config),
        log:
            "logs/rehearsal/mirror.log",
        benchmark:
            "benchmarks/rehearsal/mirror.tsv"
        shell:
            "python -m common.rehearsal.mirror --data-root {params.data_root:q} --out {params.out:q} > {log:q} 2>&1"
