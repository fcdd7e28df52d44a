"""Real publishers for the transport tests: what an OpenNVR app (NATS) or OpenNVR core (MQTT)
sends, built with OpenNVR's own SDK types so the payloads are the contract's."""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any

import nats
from opennvr_app_sdk.alerts import Alert, AlertSource, alert_subject
from opennvr_app_sdk.testing import tier0_event, tier0_track
from opennvr_app_sdk.tier0 import TIER0_SUBJECT_PREFIX
from paho.mqtt import publish as paho_publish

from .brokers import Mosquitto, NatsServer

#: The site segment the MQTT tests publish under (``opennvr/<site>/<key>/event``).
SITE = "0755a9401ff5"


def no_verify() -> ssl.SSLContext:
    """A client TLS context that accepts the brokers' self-signed certificates."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def nats_publish(
    server: NatsServer, messages: list[tuple[str, bytes]], **options: Any
) -> None:
    """Publish with a fresh nats-py client (as an OpenNVR app would), then disconnect."""
    if server.tls:
        options["tls"] = no_verify()
    nc = await nats.connect(server.url, **options)
    try:
        for subject, data in messages:
            await nc.publish(subject, data)
        await nc.flush()
    finally:
        await nc.close()


def sdk_alert(camera: str = "cam2", **changes: Any) -> tuple[str, bytes]:
    """An app alert on its NATS subject, as ``opennvr_app_sdk`` publishes it."""
    alert = Alert(
        title="Intruder",
        description="",
        camera_id=camera,
        severity="high",
        source=AlertSource(kind="app", name="intrusion-detection", version="1.0.0"),
        alert_type="person",
        **changes,
    )
    return alert_subject(alert), json.dumps(alert.to_wire()).encode()


def tier0_person(
    camera: str = "cam3",
    track_id: str = "8812",
    centre: tuple[float, float] = (0.15, 0.5),
    frame: tuple[int, int] = (1280, 720),
    **track: Any,
) -> tuple[str, bytes]:
    """One Tier-0 frame on ``opennvr.inference.tier0.<camera>.completed``, as the detector
    publishes it (``opennvr.tier0.v1``, pixel boxes): a standing person's box around
    ``centre`` (fractions of the frame). ``track`` adds fields (``matched``, ``misses``)."""
    w, h = frame
    x, y = centre[0] * w, centre[1] * h
    box = (x - 0.03 * w, y - 0.1 * h, x + 0.03 * w, y + 0.1 * h)
    event = tier0_event(
        tier0_track(track.pop("label", "person"), track_id=track_id, bbox=box, **track),
        camera_id=camera,
        frame=frame,
    )
    return f"{TIER0_SUBJECT_PREFIX}{camera}.completed", json.dumps(event).encode()


async def mqtt_publish(
    broker: Mosquitto, messages: list[tuple[str, str | bytes]], **auth: str
) -> None:
    """Publish with a one-off paho client (connect, publish, disconnect), off the loop."""
    await asyncio.to_thread(
        paho_publish.multiple,
        [{"topic": topic, "payload": payload, "qos": 1} for topic, payload in messages],
        hostname="127.0.0.1",
        port=broker.port,
        auth=auth or None,
    )


def webhook_alert(camera: str = "cam2", **changes: Any) -> tuple[str, str]:
    """``opennvr/alerts``: the webhook body, ``{subject, message, **alert}``."""
    alert = Alert(title="Parcel taken", description="", camera_id=camera, alert_type="parcel")
    body = {"subject": alert.title, "message": "porch", **alert.to_wire(), **changes}
    return "opennvr/alerts", json.dumps(body)


def cloud_event(key: str, data: dict[str, Any], site: str = SITE) -> tuple[str, str]:
    """A CloudEvents 1.0 event on ``opennvr/<site>/<key>/event``."""
    envelope = {
        "specversion": "1.0",
        "id": "e1",
        "source": f"/opennvr/{site}/entities/{key}",
        "type": f"com.opennvr.{key.split('.')[-1]}",
        "time": "2026-11-05T10:00:00+00:00",
        "data": data,
    }
    return f"opennvr/{site}/{key}/event", json.dumps(envelope)
