"""A stored comparison (its JSON contract, ``Comparison.to_json``) back as the typed
``Comparison``, so that one renderer (``render.render_comparison``) draws fresh and
stored comparisons alike: the CLI, the demo and the TUI print the same report."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from workbench.compare.comparability import Comparability, DimensionRow, SideValue
from workbench.compare.model import Comparison

# Comparison fields rebuilt by hand below; every other field is read by its own name.
_BUILT = {"lens", "runs", "comparability"}


def comparison_from_json(doc: dict[str, Any]) -> Comparison:
    """The ``Comparison`` a stored result describes (what the renderer needs of it)."""
    from lenses import builtin_lens

    lens = builtin_lens(str(doc.get("lens")))
    # The stored note and extension sources are what the comparison was made with.
    lens = replace(lens, phase_note=str(doc.get("phase_note") or lens.phase_note),
                   extensions=tuple(str(e) for e in doc.get("extensions") or ()))
    rows = []
    for d in doc.get("dimensions") or []:
        spec = lens.dimension(str(d.get("name")))
        rows.append(DimensionRow(
            name=str(d.get("name")),
            title=spec.title if spec is not None and hasattr(spec, "title") else str(d.get("name")),
            must_match=bool(d.get("must_match")),
            state=str(d.get("state")),
            baseline=SideValue(d.get("baseline"), d.get("source")),  # the combined source, shown once
            candidate=SideValue(d.get("candidate"), None),
            note=str(d.get("note") or ""),
            declared_change=bool(d.get("declared_change")),
            accepted_why=(d.get("accepted") or {}).get("why"),
        ))
    check = Comparability(rows, doc.get("refusal"), list(doc.get("changes_not_made") or []))
    extra = {f.name: doc[f.name] for f in fields(Comparison) if f.name not in _BUILT and doc.get(f.name) is not None}
    return Comparison(lens, dict(doc.get("runs") or {}), check, **extra)
