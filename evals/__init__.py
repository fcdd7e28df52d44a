"""The AI step's evaluation command line: live runs, record and replay, reports.

The cases and the library that runs them ship inside the integration
(``custom_components/opennvr_workflows/evaluation``), because the options measure a model
with them. Cases fix everything but the model: the AI step (a shipped template's, or one
written in the case), the event, the pictures (each labelled with what it really shows),
what the NVR answers each tool with, and what a good run gives. The runner drives the
integration's own AI step library (``ai.run_ai_step``) against a real Ollama server, or
against a recording of one, scores each row (rules first, an LLM judge of another model
family only for rows that opt in), reports XFAIL and stale XPASS rows, and measures
decision accuracy with its Wilson interval, needed tools, unsure answers, limit hits,
latency and calibration. The ``draft`` suite measures Describe it (``ai.draft``).

``python -m evals --help`` for the command line; the README's "Evaluating a model" for
how to run it on your own hardware.
"""
