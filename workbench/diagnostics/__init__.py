"""Incident diagnostics: which rank failed first, why, and which collective waited.

``diagnose(paths) -> Diagnosis`` is the headless entry point; ``Diagnosis.report()`` is the
typed result (``wb diagnose --json`` prints its ``to_json()``, ``diagnostics.render`` draws
it), and its observations are ``Observation(text, evidence)`` records an investigation can pin.

Modules: ``result.py`` the typed ``DiagnosisReport`` and ``render.py`` its one renderer;
``logs.py`` and ``engine_logs.py`` log and engine start-up signatures; ``host_events.py`` link
flaps and other host observations; ``log_year.py`` the year of a stamp without one; ``hangs.py``
hung ranks from the recorder's hang and termination snapshots; ``safe_pickle.py`` reads
flight-recorder dumps without ever running ``pickle.load``.
"""

from __future__ import annotations

from workbench.diagnostics.diagnosis import Diagnosis, diagnose
from workbench.diagnostics.result import DiagnosisReport

__all__ = ["diagnose", "Diagnosis", "DiagnosisReport"]
