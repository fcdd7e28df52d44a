"""A run as Home Assistant sees it: its context and what it sent once (:mod:`.context`),
where a context's AI mark comes from (:mod:`.lineage`, :mod:`.ai_mark`), a run shown
(:mod:`.view`, :mod:`.summary`), the doors that start, read and replay runs
(:mod:`.actions`, :mod:`.trial` with what a trial looks at, :mod:`.trial_picture`,
:mod:`.messages`), and the logbook line of a limit that holds an event back
(:mod:`.held`)."""
