"""The shared evaluation tasks, declared (:mod:`common.eval.tasks`): one id = one protocol = one number.

* ``tatoeba@cosine`` -- LASER / DAP protocol (DAP section 4.4; MoCo-BERT Table 1): cosine nearest
  neighbour, both directions, every Tatoeba language of the manifest; main score = the mean over
  languages of the two-direction mean.
* ``bucc@ratio-k4`` (DAP appendix B), ``bucc@distance-k3`` (MoCo-BERT eq. 4), ``bucc@cosine``
  (VMSST "BUCC (cosine)"): best match with one-to-one filtering, threshold tuned on the manifest's
  tuning split and applied to its test split; main score = mean test F1 over the language pairs.
  ``bucc@cosine-oracle`` and ``bucc@ratio-k4-oracle``: VMSST's protocol (section 6.2), the threshold optimal
  on the reported split itself.
* ``sts-en@wmean`` -- the seven English STS sets (SentEval's "wmean" Spearman per set, averaged
  over the sets; MoCo-BERT Table 3). The "all" aggregation is stored beside it (Table 8).
* ``sts-en@years-pearson``, ``sts-en@years-concat-spearman``, ``sts17@pearson`` -- VMSST's STS protocols
  (:mod:`common.eval.sts_tasks` says how each is computed).
* ``xnli@zero-shot`` -- fine-tune the whole encoder on English, accuracy on every language
  (DAP section 4.6 following InfoXLM); needs a model with one HF encoder. ``xnli@translate-train-all``,
  ``pawsx@...``, ``qa@...``, ``pos@zero-shot``, ``ner@zero-shot`` -- HICTL's XTREME tasks.
* ``question-retrieval@nq`` and ``@mkqa`` -- VMSST's question retrieval.

Each type's evaluation function is registered by the module that implements it (:mod:`common.eval.task_types`):
``tatoeba``, ``bucc``, ``sts-en``, ``xnli`` and ``pawsx`` in :mod:`common.eval.builtin_tasks`, ``sts-en-years`` and
``sts17`` in :mod:`common.eval.sts_tasks`, ``qa`` in :mod:`common.eval.qa`, ``question-retrieval`` in
:mod:`common.eval.question_retrieval`, ``token-classification`` in :mod:`common.eval.token_classification`.
This module imports none of them.
"""
from __future__ import annotations

from common.eval.tasks import Task, register_task

register_task(Task(
    "tatoeba@cosine", "tatoeba", "Tatoeba bitext retrieval, cosine nearest neighbour, both directions",
    "LASER (Artetxe & Schwenk 2019b); DAP section 4.4; MoCo-BERT Table 1",
    "mean over the manifest's Tatoeba languages of (xx->en + en->xx) / 2 accuracy, %"))
for scoring, k, ref in (("ratio", 4, "DAP section 4.5 and appendix B (Artetxe & Schwenk 2019a)"),
                        ("distance", 3, "MoCo-BERT section 3.2, eq. 4")):
    register_task(Task(
        f"bucc@{scoring}-k{k}", "bucc", f"BUCC bitext mining, {scoring} margin over k={k} neighbours, best match in "
        "both directions with one-to-one filtering, threshold tuned on the tuning split",
        ref, "mean F1 (%) over the language pairs on the reported split",
        params={"scoring": scoring, "k": k, "retrieval": "max"}))
register_task(Task(
    "bucc@cosine", "bucc", "BUCC bitext mining, cosine: each non-English sentence's highest-scoring English sentence, "
    "threshold tuned on the tuning split", "VMSST section 6.2 and appendix A.3, 'BUCC (cosine)'",
    "mean F1 (%) over the language pairs on the reported split",
    params={"scoring": "cosine", "k": 1, "retrieval": "forward"}))
# VMSST section 6.2 (following Schwenk 2018): "scoring all pairs ... and finding the optimal threshold that separates
# the data", on the public BUCC data (Table 5: "results on the training sets"): F1 at the threshold that is optimal
# on the reported split itself, an upper bound of the tuned protocol above
for name, params, what in (
        ("bucc@cosine-oracle", {"scoring": "cosine", "k": 1, "retrieval": "forward"},
         "cosine: each non-English sentence's highest-scoring English sentence"),
        ("bucc@ratio-k4-oracle", {"scoring": "ratio", "k": 4, "retrieval": "max"},
         "ratio margin over k=4 neighbours, best match in both directions with one-to-one filtering")):
    register_task(Task(
        name, "bucc", f"BUCC bitext mining, {what}, threshold optimal on the reported split",
        "VMSST section 6.2, Tables 1, 5 and 13 'BUCC (cosine)' / 'BUCC (margin)'",
        "mean over the language pairs of the optimal-threshold F1 (%) on the reported split",
        params={**params, "threshold": "oracle"}))
register_task(Task(
    "sts-en@wmean", "sts-en", "English STS: STS12-16, STS-B, SICK-R (SentEval files), cosine vs gold",
    "SentEval 'wmean' (Conneau & Kiela 2018); MoCo-BERT Table 3 (Table 8: the 'all' aggregation, stored beside it)",
    "mean over the datasets of the subset-size-weighted mean Spearman x100", params={"aggregation": "wmean"}))
register_task(Task(
    "xnli@zero-shot", "xnli", "XNLI: fine-tune the whole encoder on English NLI, accuracy on every language",
    "Conneau et al. 2018; DAP section 4.6 and appendix C (following InfoXLM)", "mean accuracy (%) over the languages",
    # paper: Table 9 of DAP; smaller scales fine-tune smaller models on the XNLI dev items (see common.eval.xnli)
    params={"batch_size": 256, "learning_rate": 5e-5, "epochs": 2, "max_length": 128, "weight_decay": 0.0,
            "train_fraction": 0.667},
    scale_params={"smoke": {"batch_size": 32, "learning_rate": 1e-3, "epochs": 4, "max_length": 64},
                  # mini fine-tunes a pretrained MiniLM-sized encoder: Table 9's learning rate
                  "mini": {"batch_size": 32, "learning_rate": 5e-5, "epochs": 3, "max_length": 64}},
    embedders=("sentence-encoder",)))
register_task(Task(
    "pawsx@zero-shot", "pawsx", "PAWS-X: fine-tune the whole encoder on English paraphrase pairs, accuracy on every "
    "language", "Yang et al. 2019; XTREME (Hu et al. 2020); HICTL Table 1", "mean accuracy (%) over the languages",
    params={"batch_size": 32, "learning_rate": 2e-5, "epochs": 5, "max_length": 128}, embedders=("sentence-encoder",)))
register_task(Task(
    "pawsx@translate-train-all", "pawsx", "PAWS-X, translate-train-all: fine-tuned on the English pairs and their "
    "machine translations (the x-final release), accuracy on every language", "XTREME (Hu et al. 2020); HICTL "
    "Tables 1, 11", "mean accuracy (%) over the languages",
    params={"batch_size": 32, "learning_rate": 2e-5, "epochs": 2, "max_length": 128, "translate_train": True},
    embedders=("sentence-encoder",)))
register_task(Task(
    "xnli@translate-train-all", "xnli", "XNLI, translate-train-all: fine-tuned on English MultiNLI and its machine "
    "translations (XNLI-MT 1.0), accuracy on every language", "XTREME (Hu et al. 2020); HICTL Tables 1, 10",
    "mean accuracy (%) over the languages",
    params={"batch_size": 256, "learning_rate": 5e-5, "epochs": 1, "max_length": 128, "weight_decay": 0.0,
            "train_fraction": 0.667, "translate_train": True}, embedders=("sentence-encoder",)))

register_task(Task(
    "sts-en@years-pearson", "sts-en-years", "English STS 2012-2016, cosine vs gold, Pearson averaged within each year",
    "Wieting et al. 2016; VMSST section 6.2 and Table 9 (top)",
    "mean over the years of the mean Pearson x100 of the year's datasets", params={"protocol": "pearson"}))
register_task(Task(
    "sts-en@years-concat-spearman", "sts-en-years", "English STS 2012-2016, Spearman of each year's concatenation",
    "Reimers & Gurevych 2019; VMSST Table 9 (bottom)", "mean over the years of the concatenation's Spearman x100",
    params={"protocol": "concat-spearman"}))
register_task(Task(
    "sts17@pearson", "sts17", "SemEval-2017 cross-lingual and non-English STS (ar-ar, ar-en, es-es, es-en, tr-en)",
    "Cer et al. 2017; VMSST section 6.2 and Table 10", "mean Pearson x100 over the datasets (XL)"))

# XTREME's QA fine-tuning (Hu et al. 2020): batch 32, lr 3e-5, 2 epochs (TyDiQA-GoldP: more epochs on its small
# train set), length 384, stride 128, answers up to 30 tokens. Smaller scales: shorter windows, more epochs.
_QA_SMALL = {"smoke": {"batch_size": 16, "learning_rate": 1e-3, "epochs": 6, "max_length": 96, "doc_stride": 32},
             "mini": {"batch_size": 16, "learning_rate": 5e-5, "epochs": 3, "max_length": 256, "doc_stride": 64}}
for name, ref, epochs in (("xquad", "XQuAD (Artetxe et al. 2020), trained on SQuAD v1.1", 2),
                          ("mlqa", "MLQA (Lewis et al. 2020), trained on SQuAD v1.1", 2),
                          ("tydiqa", "TyDiQA-GoldP (Clark et al. 2020), trained on its English train set", 15)):
    register_task(Task(
        f"qa@{name}", "qa", f"extractive QA, zero-shot cross-lingual transfer: {ref}; SQuAD v1.1 F1 / EM",
        "XTREME (Hu et al. 2020); HICTL Table 1", "mean F1 (%) over the test languages",
        params={"dataset": name, "batch_size": 32, "learning_rate": 3e-5, "epochs": epochs, "max_length": 384,
                "doc_stride": 128, "max_answer_length": 30},
        scale_params=_QA_SMALL, embedders=("sentence-encoder",)))
for name in ("xquad", "mlqa"):  # XTREME's translated SQuAD train sets; one epoch over the larger mix
    register_task(Task(
        f"qa@{name}-translate-train-all", "qa", f"extractive QA, translate-train-all: {name} trained on SQuAD v1.1 "
        "and its machine translations (XTREME); SQuAD v1.1 F1 / EM", "XTREME (Hu et al. 2020); HICTL Table 1",
        "mean F1 (%) over the test languages",
        params={"dataset": name, "batch_size": 32, "learning_rate": 3e-5, "epochs": 1, "max_length": 384,
                "doc_stride": 128, "max_answer_length": 30, "translate_train": True}, embedders=("sentence-encoder",)))

register_task(Task(
    "question-retrieval@nq", "question-retrieval",
    "English questions retrieve an English question with the same answer",
    "VMSST section 6.2 and Table 11 (NQ over PAQ)", "R@1 (%) of the English queries", params={"queries": "nq"}))
register_task(Task(
    "question-retrieval@mkqa", "question-retrieval", "MKQA questions (each configured language, English among them at "
    "paper scale, Table 12) retrieve an English question with the "
    "same answer", "VMSST section 6.2 and Table 12 (MKQA over PAQ)", "mean R@1 (%) over the query languages",
    params={"queries": "mkqa"}))

# XTREME's fine-tuning of structured prediction (Hu et al. 2020): batch 32, lr 2e-5, 10 epochs, length 128.
for name, dataset, metric, ref in (("pos", "udpos", "word_accuracy", "UD v2.5 POS, 17 universal tags; Table 12"),
                                   ("ner", "panx", "entity_f1", "WikiANN (PAN-X) NER; Table 13")):
    register_task(Task(
        f"{name}@zero-shot", "token-classification", f"{ref}: fine-tuned on English, tested on every language",
        "XTREME (Hu et al. 2020); HICTL Table 1", f"mean {metric.replace('_', ' ')} (%) over the test languages",
        params={"dataset": dataset, "metric": metric, "batch_size": 32, "learning_rate": 2e-5, "epochs": 10,
                "max_length": 128}, embedders=("sentence-encoder",)))
