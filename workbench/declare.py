"""Declaring dimensions on stored runs (``wb declare``, ``wb import --dim`` on a stored
file, ``wb.toml``): the checks against the data, then one append-only history write.

The store refuses a value that contradicts a ``measured``/``derived`` dimension of the
run; here the lens's own reading of the samples (request mix from token lengths, rank
count from the steps...) is checked too, so a declaration can never say something the
data contradict.
"""

from __future__ import annotations

import getpass
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lenses import get_lens
from store.records import Dimension
from lenses.base import DimensionSpec
from workbench.compare.comparability import _equal, run_value
from workbench.errors import UsageError

if TYPE_CHECKING:
    from store.api import Store
    from store.declarations import Declared
    from store.records import RunRecord


def _login_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "unknown"


def contradiction(record: "RunRecord", values: Mapping[str, Any]) -> "tuple[str, Any, Dimension] | None":
    """The first declared ``(name, value, what the data show)`` that the run's own data
    contradict, as the lens reads them (request mix from token lengths, rank count from
    the steps, eligibility history from the jobs...); None when there is none."""
    try:
        lens = get_lens(record.lens)
    except Exception:  # noqa: BLE001 - a run of a lens this wb does not know: nothing to check against
        return None
    # Read the data as a comparison will (``comparability.run_value``, the one reading of a
    # dimension), with the declarations in place: some readings exist only against a
    # declaration (an eligibility history the jobs do not carry). A value the importer
    # measured is the value, as in every comparison; else what the lens derives.
    measured = {k: d for k, d in record.dimensions.items() if d.source != "declared"}
    declared = {
        **record.dimensions,
        **{name: Dimension(value, "declared") for name, value in values.items()},
        **measured,
    }
    probe = replace(record, dimensions=declared)
    observed = lens.observed_dimensions(probe)
    specs = {s.name: s for s in lens.dimensions}
    for name, value in values.items():
        spec = specs.get(name) or DimensionSpec(name, name, False)
        reading = run_value(spec, probe, observed)
        if reading.source in (None, "declared") or reading.value is None:
            continue  # nothing but the declaration itself (or an unpinned one): nothing to contradict
        if not _equal(spec, value, reading.value):
            return name, value, Dimension(reading.value, reading.source)
    return None


def _check_against_data(store: "Store", run_id: int, values: Mapping[str, Any]) -> None:
    found = contradiction(store.load_run(run_id), values)
    if found:
        name, value, seen = found
        raise UsageError(
            f"run {run_id}: {name}={value} contradicts the data, which say {name} = {seen.value!r} ({seen.source})"
        )


def declare_dimensions(
    store: "Store",
    run_ids: Sequence[int],
    values: Mapping[str, str],
    unset: Sequence[str] = (),
    *,
    why: str = "",
    who: str | None = None,
) -> list["Declared"]:
    """Record the declarations on every run (all or nothing); refusals are usage errors
    that name both values."""
    from store.declarations import DeclarationRefused, declare  # loads SQLAlchemy: not for 'wb declare --help'

    if not run_ids:
        raise UsageError("name the runs to declare on: wb declare RUN... NAME=VALUE...")
    if not values and not unset:
        raise UsageError("nothing to declare: give NAME=VALUE or --unset NAME")
    for name, value in values.items():  # an empty value would make two unknowns look "same"
        if not str(value).strip():
            raise UsageError(
                f"declare {name}=: an empty value declares nothing (to take a declaration back: wb declare RUN --unset "
                f"{name})"
            )
    both = sorted(set(values) & set(unset))
    if both:
        raise UsageError(f"{both[0]} is both set and unset")
    for run_id in run_ids:
        _check_against_data(store, run_id, values)
    try:
        return declare(store, list(run_ids), dict(values), list(unset), who=who or _login_name(), why=why.strip())
    except DeclarationRefused as exc:
        raise UsageError(str(exc)) from None
