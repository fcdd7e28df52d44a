"""Searching the site's history: the host's fused search over the engine's index of AI
decisions and OpenNVR's own search (:mod:`.search`, :mod:`.nvr`), and the
``search_history`` action (:mod:`.action`). Assist's tools use the same search."""
