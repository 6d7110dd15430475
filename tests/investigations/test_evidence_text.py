"""Evidence in one line: what is not known is left out, never shown as an empty ``key=``."""

from __future__ import annotations

from workbench.investigations.evidence_text import evidence_text, item_text


def test_phases_not_recorded_leave_out_the_empty_sides():
    # What workbench/compare/observations.py stores when no phase was recorded on either side.
    item = {
        "kind": "comparison",
        "id": 3,
        "metric": "phases not recorded",
        "missing": ["queue", "prefill", "decode"],
        "recorded": {"queue": {}, "prefill": {}, "decode": {}},
    }
    text = item_text(item)
    assert text == "comparison 3 metric=phases not recorded missing=[queue, prefill, decode]"
    assert "=" not in text.split("missing=")[1].replace("[", "")  # no "recorded=queue= prefill= decode="


def test_a_side_that_was_recorded_is_kept():
    item = {"kind": "comparison", "id": 3, "recorded": {"queue": {}, "decode": {"baseline": 1.25, "candidate": None}}}
    assert item_text(item) == "comparison 3 recorded=decode=baseline=1.25"
    assert evidence_text([item, {"kind": "run", "id": 2, "window": ""}]) == (
        "comparison 3 recorded=decode=baseline=1.25; run 2"
    )
