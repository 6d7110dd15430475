"""The ``toy-latency`` format: a first line ``# toy-latency v1``, then ``key: value``
lines (``label``, ``machine``, ``build``) and one ``latency_ms: N`` line per request."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from store.records import Dimension, RunRecord, Work
from workbench.errors import BadInput
from workbench.importers.base import Importer, ImporterOption, ImportOptions, Probe, read_bounded

MARKER = "# toy-latency v1"


class ToyImporter(Importer):
    name = "toy-latency"
    version = "1"
    description = "toy latency files (the example plug-in)"
    options = (
        ImporterOption(
            "toy_scale", "--toy-scale", "Multiply every toy latency by this factor.", float, metavar="FACTOR"
        ),
    )

    def sniff(self, probe: Probe) -> bool:
        return probe.stripped.startswith(MARKER)

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        scale = float(options.params.get("toy_scale", 1.0))
        for path in paths:
            fields: dict[str, str] = {}
            latencies: list[float] = []
            text = read_bounded(path, 1 << 20, "larger than 1 MiB; not a toy file").decode("utf-8", errors="replace")
            for n, line in enumerate(text.splitlines()[1:], 2):
                if not line.strip():
                    continue
                key, sep, value = line.partition(":")
                if not sep:
                    raise BadInput(path, "expected 'key: value'", where=f"line {n}")
                if key.strip() == "latency_ms":
                    try:
                        latencies.append(float(value) * scale)
                    except ValueError:
                        raise BadInput(
                            path, f"latency_ms {value.strip()!r} is not a number", where=f"line {n}"
                        ) from None
                else:
                    fields[key.strip()] = value.strip()
            if not latencies or not all(math.isfinite(v) for v in latencies):
                raise BadInput(path, "no finite latency_ms lines")
            yield RunRecord(
                lens="toy",
                label=options.label or fields.get("label", path.stem),
                dimensions={k: Dimension(fields[k]) for k in ("machine", "build") if k in fields},
                window={"kind": "steady"},
                work=Work("requests", float(len(latencies))),
                tables={"samples": {"latency_ms": np.asarray(latencies, dtype=np.float64)}},
                sources=[path],
            )


IMPORTER = ToyImporter()
