"""A demo report in headless Chromium: the screenshot is a drawn page (text, the charts in
their colours), and the page asked the network for nothing. A control page with one image
from 127.0.0.1 shows that a request would be seen. Chromium comes from Debian (.ci/run
installs it); where it cannot be had the test is skipped with the reason."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from tests.report.browser import chromium, screenshot

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="no chromium on this machine (.ci/run installs Debian's; apt-get install chromium)"
)

BASELINE_BLUE = (0x00, 0x72, 0xB2)  # charts.BASELINE: drawn only where a chart is


@pytest.fixture(scope="module")
def written(demo, tmp_path_factory):
    from workbench.report.gather import bundle_report
    from workbench.report.render import write_report

    _url, bundles = demo
    folder = tmp_path_factory.mktemp("browser")
    return folder, write_report(bundle_report(bundles[2]), folder / "training.html", "html")


def test_the_page_renders_and_asks_for_nothing(written):
    folder, page = written
    shot = screenshot(page, folder)
    assert shot.page_requests == [], shot.page_requests
    pixels = np.asarray(Image.open(shot.png).convert("RGB"), dtype=np.int32).reshape(-1, 3)
    inked = int((pixels.sum(axis=1) < 600).sum())  # not white: text, rules, charts
    assert inked > 0.02 * len(pixels), f"only {inked} of {len(pixels)} pixels drawn: a blank page"
    assert len(np.unique(pixels, axis=0)) > 50
    blue = (np.abs(pixels - np.array(BASELINE_BLUE)) <= 24).all(axis=1)
    assert blue.sum() > 100, "no chart was drawn (the baseline's blue is absent)"


def test_a_request_would_be_seen(tmp_path):
    page = tmp_path / "control.html"
    page.write_text('<!DOCTYPE html><p>control</p><img src="http://127.0.0.1:9/pixel.png">', encoding="utf-8")
    shot = screenshot(page, tmp_path, height=600)
    assert shot.page_requests == ["http://127.0.0.1:9/pixel.png"]
