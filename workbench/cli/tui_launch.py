"""Opening the TUI from the CLI, kept apart so headless commands never import Textual."""

from __future__ import annotations

from workbench.errors import WbError


def launch_tui(
    *, store_url: str | None, server_url: str | None = None, mouse: bool = False, demo: bool = False
) -> None:
    try:
        from workbench.tui.app import run_app  # Textual loads only when the TUI opens
    except ImportError as exc:  # the TUI is optional at this layer
        raise WbError(f"the workbench TUI is not available ({exc}); see 'wb --help' for headless commands") from exc
    run_app(store_url=store_url, server_url=server_url, mouse=mouse, demo=demo)
