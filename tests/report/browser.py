"""Headless Chromium as the tests and the bench drive it: a screenshot of a page, and the
requests the page made, read from Chromium's own net log.

Every name resolves to nothing (``--host-resolver-rules``), so neither the page nor the
browser's own background work can reach past this machine; the page's requests are the
ones whose network isolation key is the page's ``file://`` frame (the browser's own are
keyed otherwise), whatever happened to them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--hide-scrollbars",
]


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Shot:
    png: Path
    page_requests: list[str]  # URLs the page asked for, other than itself
    seconds: float


def screenshot(page: Path, folder: Path, *, width: int = 1200, height: int = 3000, browser: str | None = None) -> Shot:
    browser = browser or chromium()
    assert browser, "no chromium"
    png, netlog = folder / f"{page.stem}.png", folder / f"{page.stem}.netlog.json"
    profile = folder / f"{page.stem}.profile"
    started = time.perf_counter()
    out = subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--log-net-log={netlog}",
            f"--screenshot={png}",
            f"--window-size={width},{height}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    seconds = time.perf_counter() - started
    assert png.is_file(), out.stdout + out.stderr
    return Shot(png, page_requests(netlog, page.resolve().as_uri()), seconds)


def page_requests(netlog: Path, page_url: str) -> list[str]:
    doc = json.loads(netlog.read_text(encoding="utf-8"))
    start_job = doc["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in doc["events"]:
        params = event.get("params") or {}
        if event.get("type") != start_job or "url" not in params:
            continue
        if "file://" in str(params.get("network_isolation_key", "")) and params["url"] != page_url:
            urls.append(params["url"])
    return urls
