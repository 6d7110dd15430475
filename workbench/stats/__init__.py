"""Statistics engine: honest effects, A/A noise floors, verdicts, deterministic bounds.

Pure numpy/scipy; no store, no Textual. scipy is imported inside functions only, so
importing this package stays cheap. Methods and their sources: docs/methods.md.

The public API:

- ``reduce_run(values, warmup=0) -> RunReduction``: one run's steps to run-level
  statistics (mean primary; median; min diagnostic; p95 and Harrell–Davis p95 from
  72 samples). ``default_warmup(n)`` is the no-pilot default.
- ``analyze(a, b, a_prime=None, *, paired, delta=0.02, lower_is_better=True,
  seed=12345, n_boot=10000, ...) -> Analysis``: a, b, a_prime hold **one value per
  run** (never steps). ``Analysis`` has ``.ratio`` (time-like θ, > 1 is worse),
  ``.throughput_ratio`` (1/θ), ``.time_change_pct``, ``.throughput_change_pct``,
  ``.intervals`` (list of ``Interval``: method, level, low, high, params), ``.ci95`` /
  ``.ci90`` (primary Fieller), ``.aa`` (``AAResult`` or None), ``.verdict``,
  ``.flags``, ``.gate``, ``.tests``, ``.planning`` (MDE, rounds needed) and
  ``.to_json()`` (the ``wb stats --json`` document).
- ``gate_metrics(analyses) -> GateSummary``: the CI gate over several metrics (Holm).
- ``bounds(a_low, a_high, b_low, b_high, work=None) -> BoundsResult``: exact
  ``Fraction`` ratio bounds from stated duration bounds, not a confidence interval.
- ``histogram_quantile(edges, cumulative_counts, q) -> QuantileEstimate``: value plus
  the bucket bounds that contain the true sample quantile.
- ``holm(p)``, ``benjamini_hochberg(p)``: adjusted p-values.
- ``drift(values, slots=None)``, ``outlier_runs(values)``, ``modified_z(values)``:
  flagged, never dropped.
- Lower level: ``paired_fieller``, ``welch_fieller``, ``paired_log_t``,
  ``delta_log_welch``, ``bootstrap_ratios``, ``percentile_interval``, ``mde_log``,
  ``mde_log_exact``, ``rounds_needed``, ``mann_whitney``, ``wilcoxon_signed_rank``,
  ``harrell_davis``, ``quantile_ci_ranks``, ``kj_t2``, ``kj_optimal_reps``,
  ``hierarchical_bootstrap_ratio``, ``pooled_quantile_ratio`` (a pooled p95 ratio,
  labelled descriptive, with a run-level cluster bootstrap).

Verdicts: REGRESSION, IMPROVEMENT, EQUIVALENT, SLOWER_UNRESOLVED, FASTER_UNRESOLVED,
INCONCLUSIVE. Gate: PASS, FAIL, RERUN. Bounds: SLOWER_CERTAIN, FASTER_CERTAIN,
UNDETERMINED. Flags: UNSTABLE, UNDERPOWERED, TOO_FEW_ROUNDS, FEW_ROUNDS,
NO_AA_CONTROL, SIGNIFICANT_BELOW_THRESHOLD, UNBOUNDED_INTERVAL, METHODS_DISAGREE,
DRIFT, OUTLIER_RUNS.
"""

from __future__ import annotations

from workbench.stats.analysis import (
    DRIFT,
    EQUIVALENT,
    FAIL,
    FASTER_UNRESOLVED,
    FEW_ROUNDS,
    IMPROVEMENT,
    INCONCLUSIVE,
    METHODS_DISAGREE,
    MIN_ROUNDS,
    NO_AA_CONTROL,
    OUTLIER_RUNS,
    PASS,
    REGRESSION,
    RERUN,
    SIGNIFICANT_BELOW_THRESHOLD,
    SLOWER_UNRESOLVED,
    TOO_FEW_ROUNDS,
    UNBOUNDED_INTERVAL,
    UNDERPOWERED,
    UNSTABLE,
    WARN_ROUNDS,
    AAResult,
    Analysis,
    Effect,
    GateSummary,
    analyze,
    decide,
    effect,
    gate_for,
    gate_metrics,
)
from workbench.stats.bounds import FASTER_CERTAIN, SLOWER_CERTAIN, UNDETERMINED, BoundsResult, bounds
from workbench.stats.stability import (
    Drift,
    drift,
    hierarchical_bootstrap_ratio,
    kj_mean_ci,
    kj_optimal_reps,
    kj_s2,
    kj_t2,
    modified_z,
    outlier_runs,
)
from workbench.stats.histogram import QuantileEstimate, cumulative_histogram, histogram_quantile
from workbench.stats.intervals import (
    Interval,
    bootstrap_ratios,
    delta_log_welch,
    expanded_alpha,
    fieller,
    paired_fieller,
    paired_log_t,
    percentile_interval,
    WelchDifference,
    welch_difference,
    welch_fieller,
)
from workbench.stats.multiplicity import benjamini_hochberg, holm
from workbench.stats.pooled import PooledRatio, pooled_quantile_ratio
from workbench.stats.power import mde_log, mde_log_exact, rounds_needed
from workbench.stats.rank_tests import RankTest, mann_whitney, mwu_min_p, wilcoxon_min_p, wilcoxon_signed_rank
from workbench.stats.reduce import (
    P95_MIN_SAMPLES,
    RunReduction,
    default_warmup,
    harrell_davis,
    harrell_davis_se,
    quantile_ci_ranks,
    reduce_run,
)
from workbench.stats.verdicts import VERDICTS  # the verdicts' one definition

__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]
