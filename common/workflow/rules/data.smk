# data_root rebuilt from its public sources (common/data/rebuild.py; what each folder is and where it comes from:
# common/data/sources.yaml), included once by the top-level Snakefile:
#   snakemake data --cores 2 --config data_root=/path/to/new/data
# One job per folder; each downloads its sources into cache_root/data_sources/<folder>/, derives and checks every
# file against its pinned sha256, and writes the folder's MANIFEST.md last. A folder with a MANIFEST.md is done.
import re

from common.data.rebuild import folder_names

DATA_FOLDERS = folder_names()


def _data_path(*parts):
    return "/".join([config["data_root"].rstrip("/"), *parts])


rule data:  # every folder, then INDEX.md (no benchmark file: it would make a complete data_root look unfinished)
    input:
        [ancient(_data_path(f, "MANIFEST.md")) for f in DATA_FOLDERS],  # a complete data_root is done
    output:
        _data_path("INDEX.md"),
    params:
        root=config["data_root"],
        downloads=f"{config['cache_root']}/data_sources",
    log:
        "logs/data/index.log",
    localrule: True
    shell:
        "python -m common.data.rebuild --index --data-root {params.root:q} --downloads {params.downloads:q} "
        "> {log:q} 2>&1"


rule data_folder:
    output:
        _data_path("{folder}", "MANIFEST.md"),
    wildcard_constraints:
        folder="|".join(map(re.escape, DATA_FOLDERS)),
    params:
        root=config["data_root"],
        downloads=f"{config['cache_root']}/data_sources",
        source=["--base-url", config["download_base_url"]] if config.get("download_base_url") else [],
    resources:
        mem_mb=2000,
        runtime=60,
    log:
        "logs/data/{folder}.log",
    benchmark:
        "benchmarks/data/{folder}.tsv"
    shell:
        "python -m common.data.rebuild --folder {wildcards.folder:q} --data-root {params.root:q} "
        "--downloads {params.downloads:q} {params.source:q} > {log:q} 2>&1"
