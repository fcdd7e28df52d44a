"""The AI step's golden cases and the library that runs and scores them.

It ships inside the integration because the product measures a model itself: the options'
model page runs the ``look`` suite against the chosen model and stores the result, the gate
for Investigate steps and for drafting workflows from a sentence. The command line
(``python -m evals`` in a checkout: live runs, record and replay, reports) is built on it.

Cases (``cases/<suite>/*.yaml``, checked against ``case.schema.json``) fix everything but
the model: the AI step (a shipped template's, or one written in the case), the event, the
pictures (each labelled with what it really shows), what the NVR answers each tool with, and
what a good run gives. :mod:`.harness` drives the integration's own AI step library
(``ai.run_ai_step``), :mod:`.scoring` scores each row (rules first, an LLM judge of another
model family only for rows that opt in), :mod:`.metrics` measures decision accuracy with its
Wilson interval, needed tools, unsure answers, limit hits, latency and calibration.
No Home Assistant imports.
"""
