"""Tests of the OpenNVR event transports: normalising, the hub, and each source."""
