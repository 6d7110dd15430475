"""Incident diagnostics: which rank failed first, why, and which collective waited.

``diagnose(paths) -> Diagnosis`` is the headless entry point (``wb diagnose`` prints its
``to_json()``); ``Diagnosis.observations`` are ``{"text", "evidence"}`` items an
investigation can pin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.diagnostics.diagnosis import Diagnosis

__all__ = ["diagnose", "Diagnosis"]


def diagnose(paths: Any, **options: Any) -> "Diagnosis":
    from workbench.diagnostics.diagnosis import diagnose as _diagnose

    return _diagnose(list(paths), **options)


def __getattr__(name: str) -> Any:
    if name == "Diagnosis":
        from workbench.diagnostics.diagnosis import Diagnosis

        return Diagnosis
    raise AttributeError(name)
