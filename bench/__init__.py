"""Benchmarks against the tools researchers would use instead (``snakemake bench/all``): each script
measures ours and the peer in one process, prints the figures and writes a JSON record, a Markdown
table and plots under ``figures/bench/<machine>/<scale>/``."""
