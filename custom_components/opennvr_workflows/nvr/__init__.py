"""The OpenNVR side of the integration: the camera coordinator and (later) event sources."""
