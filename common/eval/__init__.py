"""Evaluators. Each names the protocol it follows and returns a dict of metrics with a
``main_score``; results are written with :func:`common.eval.results.write_result`.

Registry: ``EVALUATORS`` maps a task name to its module.
"""
from common.eval import bucc, sts, tatoeba, xnli

EVALUATORS = {"tatoeba": tatoeba, "bucc": bucc, "sts": sts, "xnli": xnli}
