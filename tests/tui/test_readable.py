"""Readable without colour: every text pair drawn in the default theme has at least 4.5:1
contrast (WCAG 2), and states are told apart by words and marks, not colour alone."""

from __future__ import annotations

import pytest

from tests.tui.pilot import settle, text_of
from workbench.tui.app import WorkbenchApp


MINIMUM = 4.5


def _luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: tuple[int, int, int], bg: tuple[int, int, int]) -> float:
    a, b = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def test_contrast_formula_matches_known_values():
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)  # #767676, the classic AA grey
    assert contrast((119, 119, 119), (119, 119, 119)) == pytest.approx(1.0)


def low_contrast(screen) -> list[str]:
    """Text on the screen, as the compositor drew it, whose colours are below the minimum.

    On a dialog, only the dialog counts: what lies behind it is dimmed on purpose."""
    from rich.cells import cell_len

    dialogs = list(screen.query(".dialog"))
    region = dialogs[0].region if dialogs else screen.region
    bad = []
    for y, line in enumerate(screen._compositor.render_full_update().strips):
        x = 0
        for segment in (seg for strip in line for seg in strip):
            text, style = segment.text, segment.style
            x0, x = x, x + cell_len(text)
            if not (region.y <= y < region.bottom and x0 >= region.x and x <= region.right):
                continue
            if style is None or not any(ch.isalnum() for ch in text) or style.color is None or style.bgcolor is None:
                continue
            fg, bg = style.color.get_truecolor(), style.bgcolor.get_truecolor()
            if style.reverse:
                fg, bg = bg, fg
            ratio = contrast(tuple(fg), tuple(bg))
            if ratio < MINIMUM:
                bad.append(f"row {y}: {text.strip()!r} {ratio:.2f}:1")
    return bad


@pytest.mark.asyncio
async def test_every_pane_and_dialog_keeps_the_contrast(demo_url):
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    problems: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        problems += [f"picker {p}" for p in low_contrast(app.screen)]
        await pilot.press("enter")
        await settle(app, pilot)
        for key in "123456":
            await pilot.press(key)
            await settle(app, pilot)
            problems += [f"pane {key} {p}" for p in low_contrast(app.screen)]
        for pane, dialog in (("2", "d"), ("2", "a"), ("4", "h"), ("5", "N"), ("6", "e"), ("1", "question_mark")):
            await pilot.press(pane)
            await settle(app, pilot)
            await pilot.press(dialog)
            await settle(app, pilot)
            problems += [f"dialog {dialog} {p}" for p in low_contrast(app.screen)]
            await pilot.press("escape")
            await settle(app, pilot)
    assert not problems, "\n".join(problems)


@pytest.mark.asyncio
async def test_states_read_without_colour(demo_url):
    """The active stage, marks, verdicts and refusals carry words or marks a monochrome terminal shows."""
    from store import open_store

    from tests.tui.pilot import select_only

    (other,) = [r.id for r in open_store(demo_url).list_runs("inference") if "other hardware" in r.label]
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        assert "[2 Compare]" in text_of(app.query_one("#stage-bar"))
        runs = app.query_one("#baseline-list")
        assert "[x]" in str(runs.get_option_at_index(runs.index_of(runs.run_ids()[0])).prompt)
        report = text_of(app.query_one("#compare-report"))
        assert " changed " in report and " same " in report
        await select_only(pilot, app.query_one("#candidate-list"), {other})
        await pilot.press("c")
        await settle(app, pilot)
        assert text_of(app.query_one("#compare-banner")).startswith(" REFUSED ")
        assert " different " in text_of(app.query_one("#compare-report"))


def sixteen_colour_segments(screen):
    """(row, text, style, fg, bg) of every text segment on the screen, its colours as a
    16-colour terminal gets them (ANSI numbers 0-15: Rich's downgrade, which the app's
    console applies when ``TEXTUAL_COLOR_SYSTEM=standard``)."""
    from rich.color import ColorSystem

    out = []
    for y, line in enumerate(screen._compositor.render_full_update().strips):
        for segment in (seg for strip in line for seg in strip):
            style = segment.style
            if style is None or not segment.text.strip():
                continue
            fg, bg = (
                c.downgrade(ColorSystem.STANDARD).number if c is not None else None
                for c in (style.color, style.bgcolor)
            )
            out.append((y, segment.text, style, fg, bg))
    return out


@pytest.mark.asyncio
async def test_sixteen_colours_keep_states_apart_by_words_and_weight(demo_url, monkeypatch):
    """With 16 colours the active tab, the states, verdicts and the REFUSED banner still
    read apart by text or weight (brackets, words, bold, reverse), and no text is drawn
    in its own background's colour."""
    from textual import constants

    from store import open_store

    from tests.tui.pilot import select_only

    # TEXTUAL_COLOR_SYSTEM is read once, when Textual is imported: set what the app reads.
    monkeypatch.setattr(constants, "COLOR_SYSTEM", "standard")
    (other,) = [r.id for r in open_store(demo_url).list_runs("inference") if "other hardware" in r.label]
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    invisible: list[str] = []

    def check_visible(where: str) -> list:
        segments = sixteen_colour_segments(app.screen)
        invisible.extend(
            f"{where} row {y}: {text.strip()!r}"
            for y, text, style, fg, bg in segments
            if any(ch.isalnum() for ch in text) and fg is not None and fg == bg
        )
        return segments

    async with app.run_test(size=(80, 24)) as pilot:
        assert app.console.color_system == "standard"
        await settle(app, pilot)
        check_visible("picker")
        await pilot.press("enter", "2")
        await settle(app, pilot)
        segments = check_visible("compare")
        # The active tab: brackets (text) and bold reverse (weight); the others neither.
        (active,) = [s for y, text, s, _fg, _bg in segments if y == 1 and "[2 Compare]" in text]
        assert active.bold and active.reverse
        assert all(not (s.bold or s.reverse) for y, text, s, _f, _b in segments if y == 1 and "Frame" in text)
        # Verdicts and states are words in the banner and the report.
        assert any("COMPARABLE" in text and s.bold and s.reverse for _y, text, s, _f, _b in segments)
        assert any("REGRESSION" in text and s.bold for _y, text, s, _f, _b in segments)
        report = text_of(app.query_one("#compare-report"))
        assert all(f" {state} " in report for state in ("same", "changed", "unknown"))
        for key in "13456":
            await pilot.press(key)
            await settle(app, pilot)
            check_visible(f"pane {key}")
        await pilot.press("2")
        await settle(app, pilot)
        await select_only(pilot, app.query_one("#candidate-list"), {other})
        await pilot.press("c")
        await settle(app, pilot)
        segments = check_visible("refused")
        assert any("REFUSED" in text and s.bold and s.reverse for _y, text, s, _f, _b in segments)
        assert " different " in text_of(app.query_one("#compare-report"))
        for dialog in ("d", "a"):
            await pilot.press(dialog)
            await settle(app, pilot)
            check_visible(f"dialog {dialog}")
            await pilot.press("escape")
            await settle(app, pilot)
    assert not invisible, "\n".join(invisible)
