"""Evaluators and the task registry.

Each evaluator module names the protocol it follows; tasks (:mod:`common.eval.tasks`, declared in
:mod:`common.eval.declarations` and ``papers/<paper>/tasks.py``) say which protocol and data make one number, each
task type's evaluation function is registered in :mod:`common.eval.task_types`, and ``python -m common.eval`` runs any
registered task
on any saved model, writing an MTEB-style results JSON (:mod:`common.eval.results`).
"""
