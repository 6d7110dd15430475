"""A small but complete bundle built without a store (pure data)."""

from __future__ import annotations


from workbench.bundle.export import build_bundle


def sample_bundle(embed_samples: bool = True, created_at: str = "2026-11-30T04:00:00Z") -> dict:
    from tests.investigations.fakes import fake_compare, make_run

    base = [make_run(f"base-{i}", 110.0, seed=i) for i in range(3)]
    cand = [make_run(f"cand-{i}", 230.0, seed=10 + i) for i in range(3)]
    for i, r in enumerate(base + cand, start=1):
        r.id = i
    refs = {r.id: f"run/{r.id}" for r in base + cand}
    params = {"lens": "inference", "changes": {"engine": ["v0.8.2", "v0.8.3"]}, "accepts": {}}
    result = fake_compare(base, cand, lens="inference", changes={"engine": ("v0.8.2", "v0.8.3")}, accepts={}).to_json()
    runs = [
        {
            "ref": refs[r.id],
            "id": r.id,
            "label": r.label,
            "lens": r.lens,
            "dimensions": {k: d.to_json() for k, d in r.dimensions.items()},
            "window": r.window,
            "work": {"unit": r.work.unit, "amount": r.work.amount},
            "quality": r.quality,
            "meta": r.meta,
            "captures": [f"{r.id:064x}"],
        }
        for r in base + cand
    ]
    captures = [
        {
            "sha256": f"{r.id:064x}",
            "size": 20,
            "name": f"{r.label}.json",
            "format": "native",
            "importer": "native",
            "importer_version": "1",
            "imported_at": "2026-11-30T03:00:00+00:00",
        }
        for r in base + cand
    ]
    return build_bundle(
        investigation={
            "ref": "investigation/1",
            "title": "engine upgrade",
            "lens": "inference",
            "question": "Ship engine v0.8.3?",
            "guardrails": ["error_rate max 0.001"],
            "intended_change": {"engine": ["v0.8.2", "v0.8.3"]},
            "baseline": [refs[r.id] for r in base],
            "candidate": [refs[r.id] for r in cand],
            "created_by": "ana",
            "created_at": "2026-11-30T03:00:00+00:00",
        },
        runs=runs,
        captures=captures,
        comparisons=[
            {
                "ref": "comparison/1",
                "baseline": [refs[r.id] for r in base],
                "candidate": [refs[r.id] for r in cand],
                "parameters": params,
                "engine": {"name": "workbench.compare", "version": "0.1.0"},
                "result": result,
            }
        ],
        observations=[
            {
                "ref": "observation/1",
                "text": "Queue time grew from 40 ms to 160 ms.",
                "evidence": [{"kind": "comparison", "id": 1}, {"kind": "run", "id": 4}],
                "source": "comparison:1",
                "retracts": None,
                "pinned_by": "ana",
                "pinned_at": "2026-11-30T03:10:00+00:00",
                "flag": True,
                "nothing": None,
            }
        ],
        hypotheses=[
            {
                "ref": "hypothesis/1",
                "statement": "The scheduler admits requests later.",
                "test": "interleaved rerun with an A/A control",
                "test_kind": "rerun",
                "evidence_before": {"comparison": 1, "rerun_comparison": 0, "bisection": 0, "observation": 1},
                "status": "open",
                "links": {"rerun_plans": [], "comparisons": [], "rerun_comparisons": []},
                "history": [
                    {
                        "status": "open",
                        "evidence": [],
                        "note": "",
                        "decided_by": "ana",
                        "decided_at": "2026-11-30T03:11:00+00:00",
                    },
                ],
                "created_by": "ana",
                "created_at": "2026-11-30T03:11:00+00:00",
            }
        ],
        samples={refs[r.id]: r.tables for r in base + cand} if embed_samples else None,
        tool={"name": "wb", "version": "0.1.0"},
        created_at=created_at,
    )
