"""An investigation whose every free text is hostile: labels, dimension values, frame,
observation, hypothesis (captures and user words alike)."""

from __future__ import annotations

from pathlib import Path

from tests.foundation.helpers import inference_capture, write_json

SCRIPT = "<script>alert(1)</script>"
LINK = "[click me](http://evil.example/x)"
IMAGE = "![pixel](http://evil.example/p.png)"
PIPES = "a | b || c"
CONTROL = "red\x1b[31mALERT\x07"
BIDI = "exe.\u202etxt"
MATH = "$\\href{http://evil.example}{x}$"
MENTION = "@everyone"
NEWLINE = "line one\n| forged | row |"
HOSTILE = [SCRIPT, LINK, IMAGE, PIPES, CONTROL, BIDI, MATH, MENTION, NEWLINE]
ALL = " ".join(HOSTILE)


def hostile_investigation(store, folder: Path) -> int:
    """Three baseline and three candidate runs with hostile labels and values; the investigation's id."""
    from workbench.ingest import import_files
    from workbench.investigations import workflow as wf

    paths = []
    for side, revision in (("base", f"v1 {SCRIPT}"), ("cand", f"v2 {LINK}")):
        for i in range(3):
            doc = inference_capture(
                n=8,
                label=f"{side} {i} {HOSTILE[(i + (side == 'cand') * 3) % len(HOSTILE)]}",
                dimensions={
                    "model": f"Llama {IMAGE}",
                    "hardware": f"H100 {PIPES}",
                    "request_mix": f"mix {CONTROL}",
                    "engine_revision": revision,
                },
            )
            for k, s in enumerate(doc["samples"]):
                s["queue_ms"] = 40.0 + k + (40.0 if side == "cand" else 0.0) + i
                s["ttft_ms"] = s["queue_ms"] + 70.0
            paths.append(write_json(folder / f"{side}-{i}.json", doc))
    runs = list(import_files(store, paths).run_ids)
    base, cand = runs[:3], runs[3:]
    inv = wf.new_investigation(
        store,
        lens="inference",
        title=f"title {ALL}",
        question=f"question {ALL}",
        intended_change={"engine_revision": [f"v1 {SCRIPT}", f"v2 {LINK}"]},
        baseline=base,
        candidate=cand,
        by=f"by {MENTION} {BIDI}",
    )
    comp = wf.store_comparison(store, inv.id, base, cand, by="ana")
    if comp.result and comp.result.get("observations"):
        wf.observations_from_comparison(store, inv.id, comp.id, by="ana")
    wf.new_observation(store, inv.id, f"observed {ALL}", [{"kind": "value", "value": f"v {ALL}"}], by="ana")
    wf.new_hypothesis(store, inv.id, f"statement {ALL}", f"test {ALL}", by="ana")
    return inv.id
