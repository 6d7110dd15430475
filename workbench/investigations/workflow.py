"""The headless investigation workflow: frame, compare, pin observations, hypothesize.

Every function takes an open ``Store`` and returns plain dicts (what ``--json``
prints); :func:`investigation_view` and :func:`investigation_summaries` return the typed
records (``workbench.investigations.views``) those dicts encode. Rules kept here rather than in the CLI so the TUI gets them too:

- an observation is never edited: :func:`retract_observation` pins a retraction;
- hypotheses and observations stay apart; nothing turns one into the other;
- ``supported`` and ``refuted`` need evidence (a rerun plan or a comparison);
- an imported investigation is read-only.
"""

from workbench.investigations.common import (  # noqa: F401 - the workflow's public names, in one place
    DECIDED,
    HYPOTHESIS_STATUSES,
    LENSES,
    OBSERVATION_LABEL,
    current_user,
    parse_id,
    resolve_runs,
)
from workbench.investigations.comparisons import add_comparison, comparison_view, default_compare_engine, engine_identity, get_comparison  # noqa: F401
from workbench.investigations.frame import (  # noqa: F401
    create_investigation,
    investigation_summaries,
    investigation_view,
    list_investigations,
    show_investigation,
)
from workbench.investigations.hypotheses import (  # noqa: F401
    add_hypothesis,
    hypothesis_view,
    parse_hypothesis_evidence,
    rerun_table,
    set_hypothesis_status,
)
from workbench.investigations.observations import (  # noqa: F401
    observation_views,
    observations_from_comparison,
    parse_evidence,
    pin_observation,
    retract_observation,
)
