"""The flows' parts, in one place: the options flow (:mod:`.options`), the steps the config
and options flows share (the event transport and the local AI, :mod:`.steps`), the site
and server addresses they check (:mod:`.urls`), the Ollama models they offer
(:mod:`.models`), and the option pages of the home's own cases (:mod:`.home_cases`) and
of measuring the model (:mod:`.model_gate`).

The config flow itself stays in ``config_flow.py``, where Home Assistant looks for it.
"""
