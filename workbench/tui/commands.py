"""Command palette: every action by name (ctrl+p)."""

from __future__ import annotations

from functools import partial

from textual.command import Hit, Hits, Provider

# (title, help, stage to show first or None, action on that stage or on the app)
COMMANDS = [
    ("Go to Frame", "stage 1", "frame", None),
    ("Go to Compare", "stage 2", "compare", None),
    ("Go to Inspect", "stage 3", "inspect", None),
    ("Go to Hypothesize", "stage 4", "hypothesize", None),
    ("Go to Verify", "stage 5", "verify", None),
    ("Go to Share", "stage 6", "share", None),
    ("Pick an investigation", "open the investigation picker", None, "pick"),
    ("New investigation", "frame a new question", "frame", "new"),
    ("Compare selected runs", "comparability first, then the delta", "compare", "compare"),
    ("Declare the intended change", "dimension, from, to", "compare", "declare"),
    ("Declare what is missing", "the refusal's wb declare lines, then compare", "compare", "declare_missing"),
    ("Accept a refused dimension", "record an acceptance with a reason", "compare", "accept"),
    ("Compare two load sweeps", "level by level at matched load, with the curve", "compare", "sweeps"),
    ("Refresh Inspect", "recompute the inspect report", "inspect", "refresh"),
    ("Pin observation", "pin the selected derived observation", "inspect", "pin"),
    ("New hypothesis", "a claim with its deciding test", "hypothesize", "hypothesis"),
    ("Set hypothesis status", "supported, refuted, undetermined", "hypothesize", "status"),
    ("Retract observation", "the original is kept", "hypothesize", "retract"),
    ("New rerun plan", "with the bundled CPU workload", "verify", "new_plan"),
    ("Run rerun plan", "preflight and interleaved A/B/A′ rounds", "verify", "run"),
    ("Cancel rerun", "after the current run; finished runs are kept", "verify", "cancel"),
    ("Export bundle", "evidence bundle with its checksum", "share", "export"),
    ("Verify bundle", "recheck a bundle file offline", "share", "verify"),
    ("Help", "all keys", None, "help"),
]


class WorkbenchCommands(Provider):
    async def discover(self) -> Hits:
        for title, help_text, stage, action in COMMANDS:
            yield Hit(1.0, title, partial(self.app.run_palette_command, stage, action), help=help_text)  # type: ignore[attr-defined]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, stage, action in COMMANDS:
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(self.app.run_palette_command, stage, action),  # type: ignore[attr-defined]
                    help=help_text,
                )
