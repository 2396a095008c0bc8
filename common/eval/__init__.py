"""Evaluators. Each returns a dict of metrics with a ``main_score`` and names its protocol.

Registry: ``EVALUATORS`` maps a task name to its module-level ``evaluate`` entry point.
"""
