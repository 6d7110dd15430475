"""Evidence bundles: export, canonical form, strict reading, offline verification.

A bundle is one JSON document carrying an investigation's frame, recipe, results,
capture provenance, observations and hypotheses, with SHA-256 digests and a checksum
over its RFC 8785 canonical form (``docs/bundle-format.md``). Bundles are unsigned.

Nothing in this package imports the store, sqlmodel or Textual: ``wb evidence
verify`` runs where none of them can be imported (tested in a subprocess).

Modules: ``schema.py`` the typed readers export checks and verify and import read with;
``decisions.py`` the one validator of action decisions; ``rederive.py`` rebuilds the whole derived
document for ``--recompute`` (``recompute.py`` the results, ``claims.py`` statuses, links and
bisection steps) and ``whole.py`` compares it with the stated one by path; ``decisive.py`` what
evidence can decide a hypothesis; ``action_status.py`` an action's status, store and bundle alike.
"""

from workbench.bundle.format import FORMAT, FORMAT_VERSION, UNSIGNED_NOTE

__all__ = ["FORMAT", "FORMAT_VERSION", "UNSIGNED_NOTE"]
