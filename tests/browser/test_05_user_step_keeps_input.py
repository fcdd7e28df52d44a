"""The first step of adding a site keeps what the user typed when the address is wrong: the
API token too, so correcting a typo in the URL does not mean fetching the token again."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.frontend import Screenshots, assert_translated, field, submit
from tests.browser.services import Stack
from tests.browser.test_01_add_integration import (
    DOMAIN,
    close,
    connect,
    error_text,
    open_user_step,
)


def test_an_address_error_keeps_the_token(page: Page, stack: Stack, shot: Screenshots) -> None:
    dialog = open_user_step(page, stack)
    connect(dialog, "nvr at home", stack.sim.token)
    errors = error_text(dialog)
    shot(page, "address-error")
    assert "not a web address" in errors, errors
    assert_translated(dialog, "the user step with an address error")
    expect(field(dialog, "OpenNVR URL")).to_have_value("nvr at home")
    assert field(dialog, "API token").input_value() == stack.sim.token, (
        "the API token typed before the address error was emptied"
    )
    # Only the address is corrected, and the site check passes with the kept token: the
    # flow goes on to the transport step, or (the site being added already by test_01)
    # says so, which it does only after the site accepted the token.
    added = bool(stack.ha.entries(DOMAIN))
    field(dialog, "OpenNVR URL").fill(stack.sim.url)
    submit(dialog)
    if added:
        expect(dialog.get_by_text("already configured", exact=False)).to_be_visible()
        shot(page, "address-corrected")
        dialog.get_by_role("button", name="Close").first.click()
        expect(dialog).to_be_hidden()
    else:
        expect(dialog.get_by_text("How events reach Home Assistant", exact=True)).to_be_visible()
        shot(page, "address-corrected")
        close(page, dialog)
