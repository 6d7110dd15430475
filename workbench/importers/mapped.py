"""``wb import FILE --map MAP.toml``: a file no importer knows, read through a declarative map
(``workbench.formats.record_map``: where the records are, which field is which sample column
and in which unit, which fields are dimensions). Never chosen by content: ``--map`` sends every
file named through it, and a ``[map]`` table in a folder's ``wb.toml`` the files there that no
importer takes. What a sample means is then decided by the lens check, as for every format.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lenses import lens_names
from store.records import SAMPLES, Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats.inference_records import COLUMNS, RequestColumns, inference_run
from workbench.formats.record_map import RecordMap, columns, load_map
from workbench.importers.base import Importer, ImporterOption, ImportOptions, Probe

MAP_OPTION = ImporterOption(
    "map",
    "--map",
    "Read the files through a declarative map onto a lens (a TOML file with a [map] table: lens, records, "
    "[map.columns], [map.dimensions]; see docs/importers.md), for a format no importer knows.",
    metavar="MAP.toml",
)


class MappedImporter(Importer):
    name = "mapped"
    version = "1"
    description = "any JSON, JSON Lines or CSV file, through a declarative map (--map, or [map] in a wb.toml)"
    priority = 99
    options = (MAP_OPTION,)
    by_content = False

    def sniff(self, probe: Probe) -> bool:
        return False  # chosen by --map or a wb.toml's [map], never by content

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        spec = load_map(Path(str(options.params["map"])))
        for path in paths:
            yield mapped_run(path, spec, options)


IMPORTER = MappedImporter()


def mapped_run(path: Path, spec: RecordMap, options: ImportOptions) -> RunRecord:
    if spec.lens not in lens_names():
        raise BadInput(spec.source, f"lens {spec.lens!r} is not one of {', '.join(lens_names())}", where="[map].lens")
    samples, top = columns(path, spec)
    dims: dict[str, Dimension] = {}
    for name, field, value in spec.dimensions:
        if field is not None:
            found = top
            for part in field:
                found = found.get(part) if isinstance(found, dict) else None  # type: ignore[assignment]
            if found is None or isinstance(found, (dict, list)):
                continue  # a dimension the file does not state is unknown
            value = str(found)
        dims[name] = Dimension(value, "declared")
    label = options.label or spec.label or path.stem
    meta: dict[str, object] = {"source_format": f"mapped by {spec.source}", "map": spec.source}
    window: dict[str, object] = {"kind": spec.window, "policy": f"as the map {Path(spec.source).name} states it"}
    if spec.lens == "inference":
        n = len(next(iter(samples.values())))
        full = {c: samples.get(c, np.full(n, np.nan)) for c in COLUMNS if c != "id"}
        full["id"] = samples.get("id", np.array([str(i) for i in range(n)]))
        extra = {k: v for k, v in samples.items() if k not in full}
        run = inference_run(
            label,
            samples=RequestColumns({**full, **extra}),
            summary={},
            dimensions=dims,
            meta=meta,
            sources=[path],
            window=window,
        )
        run.meta.pop("summary_only", None)
        return run
    if spec.pool:
        meta["pool"] = dict(spec.pool)
    run = RunRecord(lens=spec.lens, label=label, dimensions=dims, window=window, meta=meta, sources=[path])
    run.tables[SAMPLES] = samples
    return run
