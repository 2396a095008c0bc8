"""HICTL's own evaluation task, declared (:mod:`common.eval.tasks`; its evaluation function is in
:mod:`papers.hictl.evaluators`):

``hictl-tsne`` -- appendix D, Figure 4: sentence embeddings of ``sets`` sets of ``per_set`` parallel sentences in
five languages, mapped to 2-D by t-SNE, coloured by set and shaped by language. The paper draws its sets from
WMT'14-19 test data in en, fr, de, ru, es; no WMT file here is 5-way parallel, XNLI is (the same items in 15
languages), so the sets are consecutive blocks of distinct XNLI hypotheses in the manifest's NLI files (XNLI test
at paper scale, dev at mini scale, the synthetic NLI set at smoke scale) in the first five of ``languages`` the
manifest has. Main score: % of points whose nearest neighbour (cosine, full embedding) is in their own set; also
stored: % whose nearest neighbour is a translation of the same sentence, and both measured in the 2-D map.
"""
from __future__ import annotations

from common.eval.tasks import Task, register_task

register_task(Task(
    "hictl-tsne", "hictl-tsne", "t-SNE of sets of parallel sentences in five languages", "HICTL appendix D, Figure 4",
    "% of points whose nearest neighbour (cosine) is in their own set",
    params={"sets": 10, "per_set": 20, "languages": ["en", "fr", "de", "ru", "es"], "perplexity": 30, "seed": 1},
    scale_params={"smoke": {"per_set": 6, "perplexity": 10}}))
