"""Constants shared by the Home Assistant side of the integration."""

from __future__ import annotations

import logging
from typing import Final

DOMAIN: Final = "opennvr_workflows"
TITLE: Final = "OpenNVR Workflows"
LOGGER: Final = logging.getLogger(__package__)

CONF_VERIFY_SSL: Final = "verify_ssl"

#: Token scopes the integration cannot work without: list the cameras, show them, and
#: receive the site's alerts. Others (ptz.control, recordings.view, ...) only enable
#: optional actions, and their absence is reported where they are used.
REQUIRED_SCOPES: Final = frozenset({"cameras.view", "live.view", "alerts.view"})

#: How often the camera list and each camera's online state are re-read. The events
#: websocket pushes camera status as it changes; this poll is the safety net.
CAMERA_POLL_SECONDS: Final = 60
REQUEST_TIMEOUT_SECONDS: Final = 10.0

# ── event transport (config entry options/data) ─────────────────────────────
CONF_TRANSPORT: Final = "transport"
TRANSPORT_WEBSOCKET: Final = "websocket"
TRANSPORT_NATS: Final = "nats"
TRANSPORT_MQTT: Final = "mqtt"
TRANSPORTS: Final = (TRANSPORT_WEBSOCKET, TRANSPORT_NATS, TRANSPORT_MQTT)
CONF_NATS_URL: Final = "nats_url"
CONF_NATS_TOKEN: Final = "nats_token"
CONF_NATS_USER: Final = "nats_user"
CONF_NATS_PASSWORD: Final = "nats_password"
CONF_NATS_TLS_VERIFY: Final = "nats_tls_verify"
#: MQTT: use Home Assistant's MQTT integration when set up, otherwise this broker.
CONF_MQTT_USE_HA: Final = "mqtt_use_ha"
CONF_MQTT_HOST: Final = "mqtt_host"
CONF_MQTT_PORT: Final = "mqtt_port"
CONF_MQTT_USER: Final = "mqtt_user"
CONF_MQTT_PASSWORD: Final = "mqtt_password"
CONF_MQTT_TLS: Final = "mqtt_tls"
#: OpenNVR's MQTT topic prefix site segment (``opennvr/<site>/<key>/event``); "+" for any.
CONF_MQTT_SITE: Final = "mqtt_site"

# ── Ollama and hardware (entry options) ──────────────────────────────────────
CONF_OLLAMA_URL: Final = "ollama_url"
CONF_VISION_MODEL: Final = "vision_model"
CONF_TEXT_MODEL: Final = "text_model"
#: The evaluation gate's stored result (evaluation.gate.GateResult as a mapping): Investigate
#: steps and Describe it are offered once the look suite's Wilson lower bound reaches 0.80.
CONF_MODEL_GATE: Final = "model_gate"
#: An Ollama embedding model for the history search (empty: search by words only).
CONF_EMBEDDING_MODEL: Final = "embedding_model"
#: Set when the user chose to go on without a reachable Ollama: AI steps are unavailable
#: (they answer "unsure"), rule-based workflows still run.
CONF_AI_ENABLED: Final = "ai_enabled"
CONF_HARDWARE: Final = "hardware"
HARDWARE_CPU: Final = "cpu"
HARDWARE_GPU: Final = "gpu"
DEFAULT_OLLAMA_URL: Final = "http://127.0.0.1:11434"
#: Set by an admin to let pictures and texts go to an Ollama server outside the local
#: network (by default only a loopback, private or link-local address is used).
CONF_OLLAMA_ANYWHERE: Final = "ollama_anywhere"

# ── options: how this home uses its site ─────────────────────────────────────
#: {role name: OpenNVR camera id (str)}; workflows name cameras by role, never by id.
CONF_CAMERA_ROLES: Final = "camera_roles"
#: [{"user_id": HA user id, "notify": ["notify.mobile_app_x", ...]}]
CONF_APPROVERS: Final = "approvers"
CONF_SITE_FACTS: Final = "site_facts"
#: {list name: [items]}: what the site_lookup tool and `if: in_list` read.
CONF_SITE_LISTS: Final = "site_lists"
#: {tool name: "auto" | "ask" | "unavailable"}
CONF_TOOL_POLICY: Final = "tool_policy"
CONF_DEFAULT_LIMITS: Final = "default_limits"
#: {destination name: URL}: the only places a workflow's webhook may POST to.
CONF_WEBHOOKS: Final = "webhooks"
#: [destination name]: the webhook destinations an admin marked as moving things (a gate,
#: a relay); a workflow step sending to one is an actuator. The others only inform.
CONF_MOVING_WEBHOOKS: Final = "moving_webhooks"
#: Models an admin may name in the look / investigate actions, besides the configured ones.
CONF_MODEL_ALLOW_LIST: Final = "model_allow_list"
#: [app name]: the OpenNVR apps that run a language or vision model themselves (OpenNVR
#: publishes no catalog saying so); their alerts are AI output to the safety rule.
CONF_MODEL_APPS: Final = "model_apps"
#: [workflow id]: workflows an admin marked as started only by trusted triggers; an
#: automation whose start cannot be traced may start them without the AI mark.
CONF_TRUSTED_STARTS: Final = "trusted_starts"
SITE_FACTS_MAX_WORDS: Final = 300
#: {setting: number}: how long the integration keeps what it stores (see
#: host.settings.Retention for the settings and their defaults).
CONF_RETENTION: Final = "retention"
#: [notify service]: destinations an admin lets carry a notification's full text (plates,
#: names, the model's words) although they may leave the house; the rest get it without.
CONF_FULL_TEXT_TO: Final = "full_text_to"
#: Whether removing the integration also deletes the workflow files (off: they are kept).
CONF_REMOVE_WORKFLOW_FILES: Final = "remove_workflow_files"

# ── workflows ────────────────────────────────────────────────────────────────
#: The folder, under Home Assistant's config folder, that holds the workflow files.
WORKFLOW_FOLDER: Final = "opennvr_workflows"
SITE_MODES: Final = ("disarmed", "armed_home", "armed_away")

#: OpenNVR alert kinds (an app's ``alert_type``) an event entity declares. OpenNVR has no
#: endpoint that lists them, so these are the kinds its shipped apps raise; anything else
#: arrives as ``other`` with the real kind in the event's ``alert_type`` attribute.
ALERT_EVENT_TYPES: Final = (
    "person",
    "vehicle",
    "animal",
    "parcel",
    "face",
    "plate",
    "loitering",
    "intrusion",
    "line_crossing",
    "tamper",
    "motion",
    "safety_gear",
    "fire_smoke",
    "other",
)
#: Contracted events (``opennvr.events.<domain>.<event>.v<N>``) as event types.
CONTRACT_EVENT_TYPES: Final = {
    "detection.observed": "detection_observed",
    "visit.recorded": "visit_recorded",
    "plate.recognized": "plate_recognized",
    "access.decided": "access_decided",
    "occupancy.changed": "occupancy_changed",
}
