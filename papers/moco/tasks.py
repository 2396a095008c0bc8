"""MoCo-BERT's own evaluation tasks, declared (:mod:`common.eval.tasks`; their evaluation functions are in
:mod:`papers.moco.evaluators`):

* ``moco-tsne`` -- Figure 3: 2-D t-SNE of ``pairs`` random Tatoeba parallel pairs of the first
  training language (both sides); main score = % of the 2n points whose nearest neighbour in the
  map is their own translation (how visibly the pairs are linked; the paper shows the plot only).
* ``moco-neighbors`` -- Table 10: the ``k`` nearest English training sentences (cosine, exact match
  excluded) of the paper's four queries (at smoke scale, of English Tatoeba sentences, since the
  synthetic English cannot express the paper's queries); main score = mean top-1 cosine.
"""
from __future__ import annotations

from common.eval.tasks import Task, register_task

PAPER_QUERIES = ("I am willing to devote my life to education career.",
                 "The Committee resumed consideration of the item.",
                 "There are a great many books on the bookshelf.",
                 "Everyone has the privilege to be tried by a jury.")

register_task(Task("moco-tsne", "moco-tsne", "t-SNE of random Tatoeba parallel pairs", "MoCo-BERT Figure 3",
                   "% of points whose nearest map neighbour is their translation",
                   params={"pairs": 15, "seed": 1, "perplexity": 5}))
register_task(Task("moco-neighbors", "moco-neighbors", "nearest English training sentences of fixed queries",
                   "MoCo-BERT Table 10", "mean top-1 cosine", split="train",
                   params={"k": 3, "corpus_size": 1_000_000, "queries": PAPER_QUERIES},
                   # the synthetic English cannot express the paper's queries: English Tatoeba sentences stand in
                   scale_params={"smoke": {"queries": (), "n_queries": 4}}))
