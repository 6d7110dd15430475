"""Training captures: normalized rank traces, per-step breakdown, diagnostics (see docs/training.md)."""
