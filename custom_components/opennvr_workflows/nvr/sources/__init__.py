"""Event transports feeding the hub: the OpenNVR events websocket, NATS and MQTT."""

from .base import EventSource

__all__ = ["EventSource"]
