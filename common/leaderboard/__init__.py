"""The cross-paper leaderboard: every method of the repository trained on the same corpus, from the
same initial encoder, with the same step and batch budget and the same seeds, scored by the same
registered tasks (``snakemake leaderboard/all``)."""
