"""The headless investigation workflow: frame, compare, pin observations, hypothesize.

Every function takes an open ``Store``. The typed ones (:func:`investigation_view`,
:func:`investigation_summaries`, :func:`new_investigation`, :func:`store_comparison`,
:func:`new_observation`, :func:`new_retraction`, :func:`new_hypothesis`,
:func:`decide_hypothesis`) return the records of ``workbench.investigations.views``, which
the TUI holds; the others return those records encoded (what ``--json`` prints).
Rules kept here rather than in the CLI so the TUI gets them too:

- an observation is never edited: :func:`new_retraction` pins a retraction;
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
from workbench.investigations.comparisons import (  # noqa: F401
    comparison_in,
    default_compare_engine,
    engine_identity,
    get_comparison,
    store_comparison,
)
from workbench.investigations.frame import (  # noqa: F401
    investigation_summaries,
    new_investigation,
    investigation_view,
    list_investigations,
)
from workbench.investigations.hypotheses import (  # noqa: F401
    decide_hypothesis,
    new_hypothesis,
    parse_hypothesis_evidence,
)
from workbench.investigations.observations import (  # noqa: F401
    derived_observations,
    new_observation,
    new_retraction,
    pin_derived,
    observations_from_comparison,
    parse_evidence,
)
