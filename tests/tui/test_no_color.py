"""NO_COLOR means no colour: no SGR colour code at all, only bold, reverse and underline (issue 30 item 7)."""

from __future__ import annotations

import re

import pytest
from rich.color import ColorSystem

from tests.tui.pilot import settle
from workbench.tui.app import WorkbenchApp

COLOUR_CODES = re.compile(
    r"\x1b\[[0-9;]*(?:38;5|48;5|38;2|48;2|3[0-7]m|4[0-7]m|;3[0-7][;m]|;4[0-7][;m]|9[0-7]m|10[0-7]m)"
)


def sgr_written(app) -> str:
    """The escape sequences the driver would write for the screen, in 256 colours."""
    out = []
    for line in app.screen._compositor.render_full_update().strips:
        for strip in line:
            for seg in strip:
                if seg.style is not None:
                    out.append(seg.style.render("x", color_system=ColorSystem.EIGHT_BIT))
    return "".join(out)


@pytest.mark.asyncio
@pytest.mark.parametrize("no_color", [True, False])
async def test_no_color_writes_no_colour_codes(demo_url, monkeypatch, no_color):
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    written = []
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        for key in "123456":
            await pilot.press(key)
            await settle(app, pilot)
            written.append(sgr_written(app))
    text = "".join(written)
    if no_color:
        assert not COLOUR_CODES.search(text), COLOUR_CODES.search(text).group(0).encode()
        assert "\x1b[1" in text or ";1m" in text or "\x1b[7" in text  # bold/reverse still mark states
    else:
        assert COLOUR_CODES.search(text)  # the check can fail: with colour, there are colour codes
