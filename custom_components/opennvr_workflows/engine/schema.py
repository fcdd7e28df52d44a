"""The run database's tables, as ordered migrations.

``PRAGMA user_version`` holds how many migrations a file has had. A new
table or column is a new entry at the end of :data:`MIGRATIONS`; an entry is
never edited once released, so every file reaches the same schema whatever
version it started from. Times are epoch seconds (REAL): cheap to compare
and to prune by.
"""

from __future__ import annotations

from typing import Final

_V1: Final = """
CREATE TABLE workflows (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    state       TEXT NOT NULL,            -- off | test | on | needs_attention
    reason      TEXT,                     -- why it needs attention
    version     TEXT NOT NULL,            -- the current version's content hash
    updated_at  REAL NOT NULL
);
CREATE TABLE workflow_versions (
    workflow_id TEXT NOT NULL,
    version     TEXT NOT NULL,            -- content hash
    created_at  REAL NOT NULL,
    source      TEXT NOT NULL,            -- the workflow as JSON
    PRIMARY KEY (workflow_id, version)
) WITHOUT ROWID;
CREATE TABLE workflow_runs (
    id              TEXT PRIMARY KEY,
    workflow_id     TEXT NOT NULL,
    version         TEXT NOT NULL,
    correlation_id  TEXT NOT NULL,
    chain           TEXT NOT NULL,        -- JSON list, this run's id last
    depth           INTEGER NOT NULL,
    trigger         TEXT NOT NULL,        -- JSON NvrEvent summary
    limit_key       TEXT NOT NULL,
    test            INTEGER NOT NULL,
    status          TEXT NOT NULL,        -- running | waiting | done | failed | cancelled
    outcome         TEXT,
    seen_again      INTEGER NOT NULL DEFAULT 0,
    unknown_steps   INTEGER NOT NULL DEFAULT 0,
    started_at      REAL NOT NULL,
    ended_at        REAL,
    error           TEXT
);
CREATE INDEX workflow_runs_active ON workflow_runs (status)
    WHERE status IN ('running', 'waiting');
CREATE INDEX workflow_runs_by_workflow ON workflow_runs (workflow_id, started_at);
CREATE INDEX workflow_runs_by_start ON workflow_runs (started_at);
CREATE TABLE workflow_run_steps (
    run_id            TEXT NOT NULL,
    path              TEXT NOT NULL,      -- where in the workflow: then.0, then.0.alert.1, ...
    seq               INTEGER NOT NULL,   -- order within the run
    kind              TEXT NOT NULL,      -- ai | if | for_each | ask_person | wait | <action>
    status            TEXT NOT NULL,      -- intent | running | waiting | done | failed
                                          -- | unknown | would_have | skipped
    inputs            TEXT,               -- JSON
    result            TEXT,               -- JSON
    outcome           TEXT,
    started_at        REAL NOT NULL,
    ended_at          REAL,
    ms                INTEGER,
    fields            TEXT,               -- AI steps (spec 000, "What gets stored")
    reason            TEXT,
    confidence        REAL,
    confidence_source TEXT,
    self_reported     REAL,
    unsure_reason     TEXT,
    rule              INTEGER,
    model             TEXT,
    usage             TEXT,
    state             TEXT,               -- only while suspended
    PRIMARY KEY (run_id, path)
) WITHOUT ROWID;
CREATE TABLE workflow_tool_calls (
    id          TEXT PRIMARY KEY,         -- the SDK TraceRow's id
    run_id      TEXT NOT NULL,
    step_path   TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    kind        TEXT NOT NULL,            -- llm | tool
    name        TEXT NOT NULL,
    args_asked  TEXT,
    result      TEXT,
    status      TEXT NOT NULL,            -- ok | failed | refused | suspended
    mode        TEXT,
    started_at  REAL NOT NULL,
    ms          INTEGER NOT NULL,
    tokens_in   INTEGER,
    tokens_out  INTEGER
);
CREATE INDEX workflow_tool_calls_by_run ON workflow_tool_calls (run_id);
CREATE INDEX workflow_tool_calls_llm ON workflow_tool_calls (workflow_id, started_at)
    WHERE kind = 'llm';
CREATE TABLE workflow_approvals (
    id           TEXT PRIMARY KEY,
    run_id       TEXT NOT NULL,
    step_path    TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    who          TEXT NOT NULL,           -- JSON list
    message      TEXT NOT NULL,
    replies      TEXT NOT NULL,           -- JSON list
    default_reply TEXT,
    camera_id    TEXT,
    status       TEXT NOT NULL,           -- pending | answered | timed_out | cancelled | would_have
    reply        TEXT,
    answered_by  TEXT,
    asked        INTEGER NOT NULL DEFAULT 0,   -- the host has delivered it
    created_at   REAL NOT NULL,
    expires_at   REAL NOT NULL,
    answered_at  REAL
);
CREATE INDEX workflow_approvals_by_run ON workflow_approvals (run_id);
CREATE INDEX workflow_approvals_pending ON workflow_approvals (status) WHERE status = 'pending';
CREATE TABLE workflow_marks (
    run_id      TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL,
    right       INTEGER NOT NULL,
    user        TEXT,
    at          REAL NOT NULL,
    ai_steps    TEXT NOT NULL             -- JSON list of the AI step keys that decided
);
CREATE INDEX workflow_marks_by_workflow ON workflow_marks (workflow_id);
CREATE TABLE workflow_due (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,            -- schedule | approval_timeout | wait | offline
    workflow_id TEXT NOT NULL,
    run_id      TEXT,
    due_at      REAL NOT NULL,
    payload     TEXT NOT NULL             -- JSON
);
CREATE INDEX workflow_due_by_time ON workflow_due (due_at);
CREATE TABLE workflow_limit_counters (
    workflow_id TEXT NOT NULL,
    counter     TEXT NOT NULL,            -- started | seen_again | dropped:<reason>
    hour        INTEGER NOT NULL,         -- epoch hour
    count       INTEGER NOT NULL,
    PRIMARY KEY (workflow_id, counter, hour)
) WITHOUT ROWID;
"""

#: What happened to each question, in order: delivered, answered, refused (who tried, and
#: why: not an addressee, a replayed or forged token, an expired link), timed out. The run's
#: trace shows it beside the approval.
_V2: Final = """
CREATE TABLE workflow_approval_log (
    approval_id  TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    at           REAL NOT NULL,
    event        TEXT NOT NULL,           -- delivered | answered | refused | timed_out | ...
    user         TEXT,
    detail       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX workflow_approval_log_by_run ON workflow_approval_log (run_id);
"""

#: The history index's rows, read from an AI step's finished record and its run's trigger
#: (:mod:`.history`). The V3 backfill and the recorder's hook both insert what this selects,
#: so the two can never disagree. Malformed JSON reads as empty rather than failing.
HISTORY_SOURCE: Final = """
SELECT s.run_id, s.path, r.workflow_id, coalesce(s.ended_at, s.started_at),
    json_extract(t.j, '$.camera_id'),
    coalesce(
        iif(json_type(t.j, '$.payload.event_id') = 'integer',
            json_extract(t.j, '$.payload.event_id'), NULL),
        iif(json_extract(t.j, '$.kind') = 'camera_event'
            AND json_type(t.j, '$.payload.id') = 'integer',
            json_extract(t.j, '$.payload.id'), NULL)),
    json_extract(t.j, '$.alert_id'), r.test, coalesce(s.outcome, ''), coalesce(s.reason, ''),
    coalesce((SELECT group_concat(f.key || ' ' || f.value, ' ')
              FROM json_each(iif(json_valid(s.fields), s.fields, '{}')) f), ''),
    ltrim(coalesce(' ' || nullif(w.name, ''), '')
          || coalesce(' ' || nullif(json_extract(t.j, '$.title'), ''), '')
          || coalesce(' ' || nullif(json_extract(t.j, '$.type'), ''), '')
          || coalesce(' ' || nullif(json_extract(t.j, '$.camera_role'), ''), '')
          || coalesce(' ' || nullif(json_extract(t.j, '$.plate'), ''), '')
          || coalesce(' ' || (SELECT group_concat(l.value, ' ')
                              FROM json_each(t.j, '$.labels') l), ''))
FROM workflow_run_steps s
JOIN workflow_runs r ON r.id = s.run_id
JOIN (SELECT id, iif(json_valid(trigger), trigger, '{}') AS j FROM workflow_runs) t ON t.id = r.id
LEFT JOIN workflows w ON w.id = r.workflow_id
WHERE s.kind = 'ai' AND s.status = 'done'
"""

#: The history index (spec 001's hybrid retrieval over this site's AI decisions): one row
#: per finished AI step with what it decided and why, the words it is found by (the
#: full-text table, kept by :mod:`.history` and filled here from the runs already kept),
#: and its embedding once the host has one. ``camera_id`` is what a search filters on, so
#: a person never retrieves a decision about a camera they may not see.
_V3: Final = f"""
CREATE TABLE workflow_history (
    id          INTEGER PRIMARY KEY,      -- the full-text row
    run_id      TEXT NOT NULL,
    step_path   TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    at          REAL NOT NULL,            -- when the step decided
    camera_id   TEXT,                     -- the run's camera (NULL: none)
    event_id    INTEGER,                  -- the OpenNVR event the run was about
    alert_id    TEXT,
    test        INTEGER NOT NULL,
    decision    TEXT NOT NULL,
    reason      TEXT NOT NULL,
    fields      TEXT NOT NULL,            -- the AI's fields as words (name value ...)
    subject     TEXT NOT NULL,            -- workflow name, trigger title, type, role, plate, labels
    embed_model TEXT,                     -- the model of the two vectors below
    bits        BLOB,                     -- the embedding's signs, one bit a dimension
    vector      BLOB,                     -- float32 scale, then int8 components
    UNIQUE (run_id, step_path)
);
CREATE INDEX workflow_history_by_time ON workflow_history (at);
CREATE INDEX workflow_history_unembedded ON workflow_history (id) WHERE embed_model IS NULL;
CREATE VIRTUAL TABLE workflow_history_text USING fts5(
    decision, reason, fields, subject,
    content = 'workflow_history', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO workflow_history (run_id, step_path, workflow_id, at, camera_id, event_id,
    alert_id, test, decision, reason, fields, subject) {HISTORY_SOURCE};
INSERT INTO workflow_history_text (workflow_history_text) VALUES ('rebuild')
"""

#: The text of the workflow file each version was read from, as its author saved it (with
#: the comments and layout a rollback writes back; the JSON ``source`` is the model only).
#: NULL for versions recorded before it was kept, and for workflows built without a file.
_V4: Final = """
ALTER TABLE workflow_versions ADD COLUMN saved_text TEXT
"""

#: Migration n (1-based) takes a file from user_version n-1 to n.
MIGRATIONS: Final[tuple[str, ...]] = (_V1, _V2, _V3, _V4)

SCHEMA_VERSION: Final = len(MIGRATIONS)
