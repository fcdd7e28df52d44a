"""The entry's options as the workflow host reads them: malformed values fall back."""

from __future__ import annotations

from dataclasses import replace

from custom_components.opennvr_workflows.const import (
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_DEFAULT_LIMITS,
    CONF_HARDWARE,
    CONF_SITE_LISTS,
    CONF_WEBHOOKS,
)
from custom_components.opennvr_workflows.host.settings import HostSettings


def test_roles_and_the_cameras_they_are_on() -> None:
    settings = HostSettings.from_options(
        {CONF_CAMERA_ROLES: {"gate": "2", "driveway": 2, "door": "1", "broken": "x"}}
    )
    assert settings.roles == {"gate": 2, "driveway": 2, "door": 1}
    assert settings.roles_of_camera == {2: ("gate", "driveway"), 1: ("door",)}
    # Derived again whenever the roles change.
    assert replace(settings, roles={"yard": 3}).roles_of_camera == {3: ("yard",)}


def test_malformed_options_fall_back_to_defaults() -> None:
    settings = HostSettings.from_options(
        {
            CONF_APPROVERS: "alice",
            CONF_SITE_LISTS: ["not", "a", "mapping"],
            CONF_HARDWARE: "tpu",
            CONF_WEBHOOKS: {"tickets": "https://desk.example/hook", "local": "file:///etc/passwd"},
            CONF_DEFAULT_LIMITS: {"chain_depth": 99},
        }
    )
    assert settings.approver_users == ()
    assert settings.site.lists == {}
    assert settings.hardware == "cpu"
    assert settings.webhooks == {"tickets": "https://desk.example/hook"}
    assert settings.max_chain_depth == 10
    assert HostSettings.from_options({}).max_chain_depth == 3
