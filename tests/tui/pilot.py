"""Helpers to drive the app in tests: wait for workers, read what a widget shows."""

from __future__ import annotations


async def settle(app, pilot, rounds: int = 3) -> None:
    """Let workers finish and their results land on the UI (a few times: results start work)."""
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause()


def text_of(widget) -> str:
    """The plain text a Static shows."""
    content = widget.render()
    return getattr(content, "plain", str(content))


def option_texts(option_list) -> list[str]:
    return [str(getattr(o.prompt, "plain", o.prompt)) for o in option_list.options]
