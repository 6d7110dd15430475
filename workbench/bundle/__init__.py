"""Evidence bundles: export, canonical form, strict reading, offline verification.

A bundle is one JSON document carrying an investigation's frame, recipe, results,
capture provenance, observations and hypotheses, with SHA-256 digests and a checksum
over its RFC 8785 canonical form (``docs/bundle-format.md``). Bundles are unsigned.

Nothing in this package imports the store, sqlmodel or Textual: ``wb evidence
verify`` runs where none of them can be imported (tested in a subprocess).
"""

from workbench.bundle.format import FORMAT, FORMAT_VERSION, UNSIGNED_NOTE

__all__ = ["FORMAT", "FORMAT_VERSION", "UNSIGNED_NOTE"]
