"""Proposed actions: a change an engineer may make, its approval, and its verification.

``workbench.actions.workflow`` is the door (sessions opened there, typed records
returned); the status rule is ``workbench.bundle.action_status`` (shared with
``verify --recompute``); ``watch`` compares later runs with a verified candidate.
No function here applies a change to a system: wb records, plans and verifies; people act.
"""
