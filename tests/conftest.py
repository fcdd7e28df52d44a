"""Shared test setup.

pytest-homeassistant-custom-component ships its own ``custom_components`` package in its
testing config. Importing ours first makes Home Assistant find this integration instead of
reporting "Integration not found" (see README, "Development").
"""

import custom_components.opennvr_workflows  # noqa: F401  (import order matters, see above)
