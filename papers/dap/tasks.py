"""DAP's own evaluation task, declared (:mod:`common.eval.tasks`; its evaluation function is in
:mod:`papers.dap.evaluators`):

``dap-tokens`` -- Figure 1: the token representations (the encoder's last layer, special tokens left out) of
``pairs`` Tatoeba pairs of ``language`` and English, projected to 2-D by PCA (one projection over both languages'
tokens), coloured by language. The paper draws 100 Arabic-English pairs and shows the plots only; it reads them as
"large misaligned areas" after TR alone and that misalignment removed by RTL. What the plot shows is measured:
main score, % of tokens whose nearest other token (cosine, full dimension) is of the other language (0 when the two
languages' tokens sit apart, about 50 when they mix); also the distance between the two languages' token centroids
in the PCA plane over the mean distance of a token to its own language's centroid there. A manifest without
``language``'s Tatoeba pairs (the synthetic smoke data) takes its first Tatoeba language, recorded in the result.
"""
from __future__ import annotations

from common.eval.tasks import Task, register_task

register_task(Task(
    "dap-tokens", "dap-tokens", "token representations of Tatoeba pairs, PCA", "DAP Figure 1",
    "% of tokens whose nearest other token (cosine) is of the other language",
    params={"pairs": 100, "language": "ara"}, scale_params={"smoke": {"pairs": 30}}))
