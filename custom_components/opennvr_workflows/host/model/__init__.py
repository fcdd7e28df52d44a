"""The vision model on the host's side: the AI port the engine calls (:mod:`.port`), the
``look`` and ``investigate`` actions (:mod:`.actions`), the AI Task's Look
(:mod:`.task_look`, :mod:`.task_structure`), the watch on Ollama and the Looks' time
(:mod:`.watch`, :mod:`.latency`), and the pictures the model looked at (:mod:`.evidence_store`,
:mod:`.evidence_scope`)."""
