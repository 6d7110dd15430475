"""One module per ``wb`` command; see ``workbench.cli`` for the convention.

``SUMMARIES`` is the one place ``wb --help`` reads: each command's name and the first
sentence of its help, so listing the commands imports none of their modules (and none
of what they import). tests/foundation/test_cli_commands.py checks it against the
modules, so a new or reworded command fails a test until its line here says the same.
"""

from __future__ import annotations

import keyword

SUMMARIES: dict[str, str] = {
    "action": "Proposed actions: a change, who approved it and why, and whether it worked.",
    "bisect": "Find the first bad change: each step an interleaved A/B/A′ rerun that stops once decided.",
    "bounds": "Certain bounds on the time and throughput ratios, from duration bounds.",
    "bundle": "Evidence bundles (JSON, checksummed, unsigned).",
    "compare": "Compare BASELINE runs with candidate runs (--vs CAND...), by id or label.",
    "declare": "Declare dimensions on stored runs (ids or labels), e.g.",
    "demo": "Load the seed's three worked examples (inference, training, fleet) into a separate demo store "
    "($XDG_DATA_HOME/wb/demo.sqlite, or --store), idempotently.",
    "diagnose": "Diagnose an incident from rank dumps and logs in PATHS (files or directories).",
    "doctor": "Show what the rerun preflight sees on this machine, in 80 columns or --json.",
    "evidence": "Evidence checks.",
    "hypothesis": "Work with one hypothesis.",
    "hypothesize": "Add a hypothesis to INVESTIGATION; it starts 'open'.",
    "import": "Import capture files or directories (format detected from content).",
    "inspect": "Inspect BASELINE runs against candidate runs (--vs CAND...), by id or label.",
    "investigate": "Investigations: a lens, a decision question, guardrails, runs, comparisons.",
    "observe": "Pin an observation to INVESTIGATION.",
    "remove": "Remove RUNS (ids or labels) with their columns and declaration history.",
    "rename": "Rename RUN (an id or a label) to LABEL.",
    "report": "Write a report of INVESTIGATION or BUNDLE: a self-contained HTML page or a Markdown summary.",
    "rerun": "Verify a change with interleaved reruns: A, B and an A/A control A′ in every round.",
    "runs": "List runs: id, lens, label, window, samples, key dimensions.",
    "show": "Show RUN (an id or a label).",
    "snapshot": "Ask the flight recorder in a running process (yours) for a snapshot and print its path.",
    "stats": "Effect, intervals, A/A noise floor and verdict from per-run values.",
    "push": "Upload capture files or directories to a wb server (one request per file), as 'wb import' would import "
    "them.",
    "serve": "Serve the store over HTTP for GPU nodes, CI jobs and colleagues (docs/server.md).",
    "token": "API tokens for 'wb serve': add (shown once), list, revoke.",
}

# With a server named (``--server``, ``WB_SERVER``) the store commands run on the server's store
# (``workbench.usecases``). These work on a local store only and are refused in one line, with the
# way to do it instead; any other command that reaches for the local store is refused the same way
# (``cli.context.open_store_from``), and the store-free ones (``stats``, ``evidence verify``...) run as
# they always do.
LOCAL_ONLY: dict[str, str] = {
    "import": "to send files to the server's store: wb push FILE...",
    "demo": "the demo loads its own local store (wb --store PATH demo)",
    "serve": "a server serves its local store (wb --store URL serve)",
}


def module_name(command: str) -> str:
    """The module of ``wb COMMAND``: dashes become underscores, a Python keyword gets a
    trailing ``_`` (``wb import`` is ``import_.py``)."""
    name = command.replace("-", "_")
    return f"{name}_" if keyword.iskeyword(name) else name
