"""The camera assistant: read-only tools for LLM conversation agents and a scoped API.

:mod:`.tools` are the tools (a camera now, events and alerts, history, camera health,
the site's facts, workflows, a run's trace, pending approvals), each answering as the
person asking (:mod:`..host.asker`) with a ``cite`` marker on every fact (:mod:`.citations`).
:mod:`.api` is the integration's own LLM API with the scoped prompt of :mod:`.prompt`;
the integration's ``llm`` platform offers the same tools to Home Assistant's Assist API.
:mod:`.turn_guard` strips the citations no tool returned from each answer.
"""
