"""Evaluators and the task registry.

Each evaluator module names the protocol it follows; tasks (:mod:`common.eval.tasks`) declare
which protocol and data make one number, and ``python -m common.eval`` runs any registered task
on any saved model, writing an MTEB-style results JSON (:mod:`common.eval.results`).
"""
