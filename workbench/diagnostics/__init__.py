"""Incident diagnostics: which rank failed first, why, and which collective waited.

``diagnose(paths) -> Diagnosis`` is the headless entry point; ``Diagnosis.report()`` is the
typed result (``wb diagnose --json`` prints its ``to_json()``, ``diagnostics.render`` draws
it), and its observations are ``Observation(text, evidence)`` records an investigation can pin.
"""

from __future__ import annotations

from workbench.diagnostics.diagnosis import Diagnosis, diagnose
from workbench.diagnostics.report import DiagnosisReport

__all__ = ["diagnose", "Diagnosis", "DiagnosisReport"]
