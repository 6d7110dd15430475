"""Verify: interleaved reruns with a baseline-vs-baseline (A/A) control.

A **plan** (``plan.py``) says what to run: baseline and candidate commands, the artifacts
they depend on by SHA-256, rounds, arm order, warm-up, timeout and guardrails. It is
immutable once executed. **Preflight** (``preflight.py``, ``gpu_probe.py``) records the
machine and refuses to run when an artifact or the environment changed. An
**execution** (``execute.py``) runs the arms A, B and A′ round by round, never
overlapping, each with ``WB_CAPTURE_OUT`` set, and keeps every finished run through a
Ctrl-C or crash. A **comparison** (``report.py``) turns the runs into the paired effect,
the A/A noise floor and a verdict. The three are separate records (``store.rerun``).

Doors: ``workflow.py`` for the faces (plans, executions, their comparison, through
``store.rerun``'s functions); ``ledger.py`` what an execution keeps, so the executor runs where
the command is typed and records in any store; ``strays.py`` each arm's leftover processes.
"""
