"""Helpers to drive the app in tests: wait for workers, read what a widget shows."""

from __future__ import annotations


async def settle(app, pilot, rounds: int = 3) -> None:
    """Let workers finish and their results land on the UI, until nothing new starts.

    A result can start more work (an investigation loads, then each pane fetches), so
    wait until the app has been quiet for two checks in a row (at least ``rounds``).
    """
    quiet = 0
    for i in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        busy = any(not w.is_finished for w in app.workers)
        quiet = 0 if busy else quiet + 1
        if quiet >= 2 and i + 1 >= rounds:
            return


def text_of(widget) -> str:
    """The plain text a Static shows (a rich renderable is printed without styles); a
    report's text as it was given, before it is wrapped to its region (tests/tui/fitting.py
    checks what the wrapping draws)."""
    source = getattr(widget, "source", None)
    if source is not None and hasattr(source, "plain"):
        return source.plain
    content = widget.render()
    if hasattr(content, "plain"):
        return content.plain
    import io

    from rich.console import Console

    console = Console(width=200, no_color=True, record=True, file=io.StringIO())
    console.print(getattr(content, "_renderable", content))
    return console.export_text(styles=False)


def option_texts(option_list) -> list[str]:
    return [str(getattr(o.prompt, "plain", o.prompt)) for o in option_list.options]


def run_labels(picker) -> list[str]:
    """The whole labels of the runs a run list shows (its rows keep what differs)."""
    return [picker.label_of(run_id) for run_id in picker.run_ids()]


async def select_only(pilot, picker, run_ids: set[int]) -> None:
    """Make ``run_ids`` the selection of a run list by keys: highlight each run, press space."""
    picker.focus()
    for index, option in enumerate(list(picker.options)):
        if option.disabled:
            continue  # a heading or a folded plan, not a run
        run_id = int(option.id)
        if (run_id in picker.selected) != (run_id in run_ids):
            picker.highlighted = index
            await pilot.press("space")
    await pilot.pause()
    assert picker.selected == run_ids


def screen_text(app) -> list[str]:
    """The characters on screen, one string per row, as the compositor draws them."""
    return [
        "".join(seg.text for strip in line for seg in strip)
        for line in app.screen._compositor.render_full_update().strips
    ]


# Every dialog: (pane key, keys that open it), for the layout and fitting checks.
DIALOGS = [
    ("1", ("n",)),
    ("1", ("n", "enter")),
    ("2", ("d",)),
    ("2", ("a",)),
    ("4", ("h",)),
    ("4", ("x",)),
    ("4", ("tab", "s")),
    ("4", ("tab", "s", "enter")),
    ("5", ("N",)),
    ("6", ("e",)),
    ("6", ("v",)),
    ("1", ("question_mark",)),
]
