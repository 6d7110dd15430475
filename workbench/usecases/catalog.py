"""Every use case, registered: what ``wb serve`` serves (one route an operation) and its OpenAPI
document describes. A face that runs one use case imports only that use case's module; the
server imports them all, here."""

from __future__ import annotations

from workbench.usecases import actions, bundles, comparisons, investigations, reruns, runs, tokens
from workbench.usecases.core import OPERATIONS, Operation

MODULES = (runs, comparisons, investigations, actions, reruns, bundles, tokens)


def operations() -> list[Operation]:
    """The registered use cases, by name."""
    return [OPERATIONS[name] for name in sorted(OPERATIONS)]
