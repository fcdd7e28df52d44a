"""Stream tokens never reach a log line: the text redaction, and the filter on a real logger."""

from __future__ import annotations

import logging

import pytest

from custom_components.opennvr_workflows.nvr.redact import SECRET_FILTER, redact_secrets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Error opening stream (Not Found, rtsps://nvr:8322/cam2?token=Ab-c_12)",
            "Error opening stream (Not Found, rtsps://nvr:8322/cam2?token=****)",
        ),
        (
            "https://nvr/hls/cam2/index.m3u8?x=1&token=abc&y=2",
            "https://nvr/hls/cam2/index.m3u8?x=1&token=****&y=2",
        ),
        ("'rtsp://admin:hunter2@10.0.0.2/live'", "'rtsp://****@10.0.0.2/live'"),
        ("rtsps://nvr:8322/cam2?JWT=eyJ0", "rtsps://nvr:8322/cam2?JWT=****"),
        (
            "camera 2: no stream (rtsps://nvr:8322/cam2)",
            "camera 2: no stream (rtsps://nvr:8322/cam2)",
        ),
    ],
)
def test_redact_secrets(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


def test_filter_rewrites_messages_and_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("tests.redact.stream")
    logger.addFilter(SECRET_FILTER)
    try:
        with caplog.at_level(logging.DEBUG, logger=logger.name):
            logger.error("Error from stream worker: %s", "rtsps://nvr/cam2?token=t0p")
            try:
                raise OSError("cannot open rtsps://nvr/cam2?token=t0p")
            except OSError:
                logger.exception("Failed")
            logger.info("Nothing secret: %d cameras", 3)
    finally:
        logger.removeFilter(SECRET_FILTER)
    assert "t0p" not in caplog.text
    assert "rtsps://nvr/cam2?token=****" in caplog.text
    assert "cannot open rtsps://nvr/cam2?token=****" in caplog.text
    assert "Nothing secret: 3 cameras" in caplog.text
    assert len(caplog.records) == 3  # every record kept
