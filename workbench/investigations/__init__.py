"""Investigations, headless: frame a question, store comparisons, pin observations apart
from hypotheses, export and import evidence bundles.

``workflow`` holds the records' rules, ``bundling`` moves investigations into and out
of bundles, ``demo`` builds the three seed investigations for ``wb demo``. The CLI
(``wb investigate``, ``observe``, ``hypothesize``, ``hypothesis``, ``bundle``) and the
TUI both call these functions; none of them imports Textual.

``bundle_refs.py`` remaps every reference of an imported bundle in one place;
``origin.py`` says what a stored hypothesis came from, for the rule that only its own test
decides it.
"""
