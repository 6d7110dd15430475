"""The A/B(/A′) analysis: effect, intervals, A/A noise floor, verdict, flags and CI gate.

Inputs are per-run statistics (one value per run, e.g. each run's mean step time),
never steps. ``paired=True`` means index k of every arm belongs to round k.
All inference runs on a time-like ratio θ where > 1 is worse: the candidate over the
baseline for lower-is-better metrics, the baseline over the candidate otherwise.
Normative rules: statistics.md section 8.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from workbench.stats import control, intervals as iv, stability, power as pw, rank_tests
from workbench.stats._tdist import t_cdf, t_quantile, t_sf, t_two_sided_p
from workbench.stats.multiplicity import holm
from workbench.stats.verdicts import Flag, Gate, Verdict

# Verdicts, gate and flags are defined once in workbench.stats.verdicts (string enums);
# these names stay for the engine's own code and its callers.
REGRESSION, IMPROVEMENT, EQUIVALENT = Verdict.REGRESSION, Verdict.IMPROVEMENT, Verdict.EQUIVALENT
SLOWER_UNRESOLVED, FASTER_UNRESOLVED, INCONCLUSIVE = (
    Verdict.SLOWER_UNRESOLVED,
    Verdict.FASTER_UNRESOLVED,
    Verdict.INCONCLUSIVE,
)
PASS, FAIL, RERUN = Gate.PASS, Gate.FAIL, Gate.RERUN
UNSTABLE, UNDERPOWERED, TOO_FEW_ROUNDS, FEW_ROUNDS = (
    Flag.UNSTABLE,
    Flag.UNDERPOWERED,
    Flag.TOO_FEW_ROUNDS,
    Flag.FEW_ROUNDS,
)
NO_AA_CONTROL, SIGNIFICANT_BELOW_THRESHOLD = Flag.NO_AA_CONTROL, Flag.SIGNIFICANT_BELOW_THRESHOLD
UNBOUNDED_INTERVAL, METHODS_DISAGREE, DRIFT, OUTLIER_RUNS, WIDENED = (
    Flag.UNBOUNDED_INTERVAL,
    Flag.METHODS_DISAGREE,
    Flag.DRIFT,
    Flag.OUTLIER_RUNS,
    Flag.WIDENED,
)

MIN_ROUNDS = 3
WARN_ROUNDS = 5
EXPANDED_BELOW = 20
DEFAULT_SEED = 12345
DEFAULT_N_BOOT = 10_000
DISAGREE_FRACTION = 0.1  # of the primary CI95 log half-width


@dataclass(frozen=True)
class Effect:
    """The intervals and tests for one time-like ratio num/den."""

    ratio: float
    n: int  # rounds (paired) or the smaller arm's run count (unpaired)
    primary95: iv.Interval | None
    primary90: iv.Interval | None
    intervals: list[iv.Interval]
    log_estimate: float  # φ̂: mean log ratio (paired) or difference of mean logs (unpaired)
    log_se: float
    log_df: float
    sd_unit_log: float  # SD of one unit's log ratio (the noise floor when this is A′/A)

    def p_values(self, delta: float) -> dict[str, float]:
        """Paired (or Welch) t on logs: θ = 1, "regression > δ", "improvement > δ", TOST."""
        if not (self.log_se >= 0 and math.isfinite(self.log_df)):
            return {}
        big = math.log1p(delta)

        def z(x: float) -> float:  # t statistic; a zero se (identical rounds) gives ±inf or 0
            if self.log_se > 0:
                return x / self.log_se
            return math.copysign(math.inf, x) if x else 0.0

        p_equal = t_two_sided_p(z(self.log_estimate), self.log_df)
        p_reg = t_sf(z(self.log_estimate - big), self.log_df)  # H0: φ ≤ +Δ
        p_imp = t_cdf(z(self.log_estimate + big), self.log_df)  # H0: φ ≥ -Δ
        p_lower = t_sf(z(self.log_estimate + big), self.log_df)  # TOST H01: φ ≤ -Δ
        return {
            "p_no_change": p_equal,
            "p_regression_beyond_delta": p_reg,
            "p_improvement_beyond_delta": p_imp,
            "p_tost": max(p_lower, 1.0 - p_reg),
        }


def _values(name: str, x: Any) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64).ravel()
    if len(arr) == 0:
        raise ValueError(f"{name}: no values")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: values must be finite numbers (a missing run is unknown, not zero; leave it out)")
    if np.any(arr <= 0):
        raise ValueError(f"{name}: values must be positive (ratios of times or rates)")
    return arr


def effect(
    num: np.ndarray,
    den: np.ndarray,
    *,
    paired: bool,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_N_BOOT,
    boot_indices: Any = None,
    boot_ratios: np.ndarray | None = None,
) -> Effect:
    """Primary, cross-check and bootstrap intervals (95 % and 90 %) for mean(num)/mean(den).
    ``boot_ratios`` passes resampled ratios computed by the caller (shared round draws)."""
    ratio = float(num.mean() / den.mean())
    n = len(num) if paired else min(len(num), len(den))
    ints: list[iv.Interval] = []
    p95 = p90 = None
    ln_n, ln_d = np.log(num), np.log(den)
    if paired:
        diff = ln_n - ln_d
        sd_unit = float(diff.std(ddof=1)) if n >= 2 else math.nan
        log_est, log_se, log_df = float(diff.mean()), sd_unit / math.sqrt(n), float(n - 1)
    else:
        vn = float(ln_n.var(ddof=1)) if len(num) >= 2 else math.nan
        vd = float(ln_d.var(ddof=1)) if len(den) >= 2 else math.nan
        sd_unit = math.sqrt(vn + vd)
        log_est = float(ln_n.mean() - ln_d.mean())
        a, b = vn / len(num), vd / len(den)
        log_se = math.sqrt(a + b)
        denom = a * a / (len(num) - 1) + b * b / (len(den) - 1) if n >= 2 else math.nan
        log_df = (a + b) ** 2 / denom if denom and math.isfinite(denom) else float(len(num) + len(den) - 2)
    if n < 2:
        log_df = math.nan  # no spread, no test
    else:
        primary, check = (iv.paired_fieller, iv.paired_log_t) if paired else (iv.welch_fieller, iv.delta_log_welch)
        for level in (0.95, 0.90):
            f = primary(num, den, level)
            f = iv.Interval(f.method, level, f.low, f.high, {"role": "primary", **f.params})
            ints.append(f)
            if level == 0.95:
                p95 = f
            else:
                p90 = f
        for level in (0.95, 0.90):
            c = check(num, den, level)
            ints.append(iv.Interval(c.method, level, c.low, c.high, {"role": "cross-check", **c.params}))
        if n_boot > 0:
            if boot_ratios is None:
                boot_ratios = iv.bootstrap_ratios(
                    den, num, paired=paired, seed=seed, n_boot=n_boot, indices=boot_indices
                )
            params = {"role": "cross-check", **iv.bootstrap_params(paired=paired, seed=seed, n_boot=n_boot)}
            expanded = n if n < EXPANDED_BELOW else None
            ints += iv.percentile_intervals(boot_ratios, (0.95, 0.90), expanded_m=expanded, params=params)
    return Effect(ratio, n, p95, p90, ints, log_est, log_se, log_df, sd_unit)


@dataclass(frozen=True)
class AAResult:
    """The A′/A control: stability guard, noise floor, MDE and rounds needed."""

    effect: Effect
    delta: float
    alpha: float
    power: float
    paired: bool
    unstable: bool
    underpowered: bool
    mde_pct: float
    rounds_needed: int | None
    rounds_needed_equivalence: int | None

    @property
    def ratio(self) -> float:
        return self.effect.ratio

    @property
    def mde_pct_exact(self) -> float:
        """MDE from the exact noncentral-t power equation (computed on demand: it is slower)."""
        e = self.effect
        return pw.pct(pw.mde_log_exact(e.sd_unit_log, e.n, alpha=self.alpha, power=self.power, paired=self.paired))

    @property
    def noise_floor_sd_log(self) -> float:
        return self.effect.sd_unit_log

    @property
    def resolution_pct(self) -> float:
        """Half-width of the session's CI95 on the log scale, as a percentage."""
        e = self.effect
        if e.n < 2:
            return math.inf
        return pw.pct(t_quantile(1 - self.alpha / 2, e.log_df) * e.log_se)

    def to_json(self) -> dict[str, object]:
        return _clean(
            {
                "ratio": self.ratio,
                "intervals": [i.to_json() for i in self.effect.intervals],
                "noise_floor_sd_log": self.noise_floor_sd_log,
                "resolution_pct": self.resolution_pct,
                "mde_pct": self.mde_pct,
                "mde_pct_exact": self.mde_pct_exact,
                "rounds_needed": self.rounds_needed,
                "rounds_needed_equivalence": self.rounds_needed_equivalence,
                "unstable": self.unstable,
                "underpowered": self.underpowered,
                "n": self.effect.n,
                "power": self.power,
            }
        )


def _aa(eff: Effect, *, delta: float, alpha: float, power: float, paired: bool) -> AAResult:
    band_low, band_high = 1 / (1 + delta), 1 + delta
    unstable = underpowered = False
    if eff.primary95 is not None and eff.primary90 is not None:
        excludes_one = not eff.primary95.contains(1.0)
        unstable = excludes_one and abs(math.log(eff.ratio)) > math.log1p(delta) / 2
        underpowered = not (eff.primary90.low >= band_low and eff.primary90.high <= band_high)
    else:
        underpowered = True
    sd = eff.sd_unit_log
    mde = pw.mde_log(sd, eff.n, alpha=alpha, power=power, paired=paired)
    return AAResult(
        eff,
        delta,
        alpha,
        power,
        paired,
        unstable,
        underpowered,
        pw.pct(mde),
        pw.rounds_needed(sd, delta, alpha=alpha, power=power, paired=paired, minimum=MIN_ROUNDS),
        pw.rounds_needed(sd, delta, alpha=alpha, power=power, paired=paired, goal="equivalence", minimum=MIN_ROUNDS),
    )


def decide(
    ci95: iv.Interval, ci90: iv.Interval, delta: float, strict: iv.Interval | None = None
) -> tuple[Verdict, bool]:
    """Rules 2-5 of section 8.6 on a time-like ratio: (verdict, significant_below_threshold).
    ``strict``: under the control rule, the α/5 interval a change must also exclude 1 by."""
    hi_band, lo_band = 1 + delta, 1 / (1 + delta)
    if ci95.low > hi_band and (strict is None or strict.low > 1):
        return REGRESSION, False
    if ci95.high < lo_band and (strict is None or strict.high < 1):
        return IMPROVEMENT, False
    if ci90.low >= lo_band and ci90.high <= hi_band:
        return EQUIVALENT, not ci95.contains(1.0)
    if ci95.low > 1:
        return SLOWER_UNRESOLVED, False
    if ci95.high < 1:
        return FASTER_UNRESOLVED, False
    return INCONCLUSIVE, False


def gate_for(ci95: iv.Interval, ci90: iv.Interval, delta: float, strict: iv.Interval | None = None) -> Gate:
    """The CI gate on one metric: FAIL iff L95 > 1+δ (and, under the control rule, the α/5
    interval excludes 1); PASS iff U90 ≤ 1+δ (non-inferiority); else RERUN."""
    if ci95.low > 1 + delta and (strict is None or strict.low > 1):
        return FAIL
    if ci90.high <= 1 + delta:
        return PASS
    return RERUN


@dataclass(frozen=True)
class TestResults:
    """The tests on the log effect (``None``: not computed, e.g. below two units) and
    the rank test beside them."""

    method: str  # "paired t on log ratios" or "Welch t on log values"
    df: float
    p_no_change: float | None = None
    p_regression_beyond_delta: float | None = None
    p_improvement_beyond_delta: float | None = None
    p_tost: float | None = None
    rank_test: rank_tests.RankTest | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"method": self.method, "df": self.df}
        for name in ("p_no_change", "p_regression_beyond_delta", "p_improvement_beyond_delta", "p_tost"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.rank_test is not None:
            out["rank_test"] = self.rank_test.to_json()
        return out


@dataclass(frozen=True)
class Planning:
    """How many units would resolve the band, from the noise floor named in ``noise_source``."""

    noise_source: str
    sd_unit_log: float
    n: int
    alpha: float
    power: float
    mde_pct: float
    rounds_needed: int | None
    rounds_needed_equivalence: int | None
    counts: str  # "rounds" or "runs per arm"

    def to_json(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Analysis:
    """Result of ``analyze``; ``to_json()`` is the ``wb stats --json`` document."""

    ratio: float
    throughput_ratio: float
    time_change_pct: float
    throughput_change_pct: float
    intervals: list[iv.Interval]
    aa: AAResult | None
    verdict: str
    flags: list[str]
    gate: str
    significant_below_threshold: bool
    tests: TestResults
    planning: Planning
    drift: dict[str, stability.Drift | None]  # per arm; None below three runs
    outliers: dict[str, list[int]]
    paired: bool
    delta: float
    alpha: float
    lower_is_better: bool
    n: dict[str, int]
    means: dict[str, float]
    reason: str
    effect: Effect = field(repr=False)
    widening: control.Widening | None = None  # where the control rule changed the verdict or gate: what it read

    @property
    def ci95(self) -> iv.Interval | None:
        return self.effect.primary95

    @property
    def ci90(self) -> iv.Interval | None:
        return self.effect.primary90

    @property
    def p_regression(self) -> float:
        p = self.tests.p_regression_beyond_delta
        return math.nan if p is None else p

    def to_json(self) -> dict[str, object]:
        return _clean(
            {
                "ratio": self.ratio,
                "throughput_ratio": self.throughput_ratio,
                "time_change_pct": self.time_change_pct,
                "throughput_change_pct": self.throughput_change_pct,
                "intervals": [i.to_json() for i in self.intervals],
                "aa": self.aa.to_json() if self.aa else None,
                "verdict": self.verdict,
                "flags": list(self.flags),
                "gate": self.gate,
                "significant_below_threshold": self.significant_below_threshold,
                "reason": self.reason,
                **({"widened": self.widening.to_json()} if self.widening is not None else {}),
                "ratio_definition": (
                    "time-like: mean(B)/mean(A) of per-run values"
                    if self.lower_is_better
                    else "time-like: mean(A)/mean(B) of per-run values (higher is better, inverted)"
                ),
                "paired": self.paired,
                "unit": "round" if self.paired else "run",
                "delta": self.delta,
                "band": [1 / (1 + self.delta), 1 + self.delta],
                "alpha": self.alpha,
                "lower_is_better": self.lower_is_better,
                "n": self.n,
                "means": self.means,
                "tests": self.tests.to_json(),
                "planning": self.planning.to_json(),
                "drift": {arm: d.to_json() if d else None for arm, d in self.drift.items()},
                "outliers": self.outliers,
                "numpy_version": np.__version__,
            }
        )


def _clean(obj: Any) -> Any:
    """JSON-safe: non-finite floats become null (unknown, never zero)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.generic):
        return _clean(obj.item())
    return obj


def _disagree(p: iv.Interval | None, c: iv.Interval | None) -> bool:
    if p is None or c is None or not (p.bounded and c.bounded) or p.low <= 0 or c.low <= 0:
        return False
    half = (math.log(p.high) - math.log(p.low)) / 2
    gap = max(abs(math.log(p.low / c.low)), abs(math.log(p.high / c.high)))
    return half > 0 and gap > DISAGREE_FRACTION * half


def analyze(
    a: Sequence[float],
    b: Sequence[float],
    a_prime: Sequence[float] | None = None,
    *,
    paired: bool,
    delta: float = 0.02,
    lower_is_better: bool = True,
    alpha: float = 0.05,
    power: float = 0.8,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_N_BOOT,
    rank_test: bool = True,
    slots: dict[str, Sequence[float]] | None = None,
    boot_indices: Any = None,
) -> Analysis:
    """Compare candidate B with baseline A (and the A/A control A′ when given).

    ``a``, ``b``, ``a_prime``: one positive value per run (e.g. each run's mean step
    time). ``paired``: index k of every arm is round k (equal lengths required).
    ``delta``: the practical band [1/(1+δ), 1+δ]. ``slots``: optional slot index of
    every run per arm (``{"A": [...], "B": [...], "A'": [...]}``) for the drift
    check; position in the list otherwise. ``boot_indices``: inject the bootstrap
    index matrix (tests). Raises ValueError on invalid input.
    """
    av, bv, apv = _arms(a, b, a_prime, paired=paired, delta=delta, alpha=alpha)

    def orient(x: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (x, base) if lower_is_better else (base, x)

    num, den = orient(bv, av)
    boot_ratios = _shared_boot_ratios(av, bv, apv, paired, n_boot, seed, boot_indices, lower_is_better)
    eff = effect(
        num, den, paired=paired, seed=seed, n_boot=n_boot, boot_indices=boot_indices, boot_ratios=boot_ratios["B"]
    )
    aa = None
    if apv is not None:
        aa_num, aa_den = orient(apv, av)
        aa_eff = effect(
            aa_num,
            aa_den,
            paired=paired,
            seed=seed,
            n_boot=n_boot,
            boot_indices=boot_indices,
            boot_ratios=boot_ratios["A'"],
        )
        aa = _aa(aa_eff, delta=delta, alpha=alpha, power=power, paired=paired)

    n_units = eff.n if aa is None else min(eff.n, aa.effect.n)
    flags = _design_flags(eff, aa, n_units)
    # Drift and outliers, per arm, on the values as given.
    arms = {"A": av, "B": bv} | ({"A'": apv} if apv is not None else {})
    drifts, outliers, drifting = _drift_and_outliers(arms, slots, alpha, delta)
    if drifting:
        flags.append(DRIFT)
    if outliers:
        flags.append(OUTLIER_RUNS)

    # Verdict and gate (section 8.6): guards first, never a verdict from too few runs.
    widening = _widening(num, den, eff, aa, paired=paired, alpha=alpha) if aa is not None else None
    verdict, gate, reason, significant_below, widening = _verdict(eff, widening, flags, delta, paired, n_units)
    if significant_below:
        flags.append(SIGNIFICANT_BELOW_THRESHOLD)

    rank = None
    if rank_test and eff.n >= 2:
        if paired:
            rank = rank_tests.wilcoxon_signed_rank(np.log(num) - np.log(den), alpha=alpha)
        else:
            rank = rank_tests.mann_whitney(den, num, alpha=alpha)
    tests = TestResults(
        method="paired t on log ratios" if paired else "Welch t on log values",
        df=eff.log_df,
        **eff.p_values(delta),
        rank_test=rank,
    )
    planning = _planning(eff, aa, delta=delta, alpha=alpha, power=power, paired=paired)

    ratio = eff.ratio
    return Analysis(
        ratio=ratio,
        throughput_ratio=1 / ratio,
        time_change_pct=100 * (ratio - 1),
        throughput_change_pct=100 * (1 / ratio - 1),
        intervals=eff.intervals,
        aa=aa,
        verdict=verdict,
        flags=flags,
        gate=gate,
        significant_below_threshold=significant_below,
        tests=tests,
        planning=planning,
        drift=drifts,
        outliers=outliers,
        paired=paired,
        delta=delta,
        alpha=alpha,
        lower_is_better=lower_is_better,
        n={k: len(v) for k, v in arms.items()},
        means={k: float(v.mean()) for k, v in arms.items()},
        reason=reason,
        effect=eff,
        widening=widening if WIDENED in flags else None,
    )


def _arms(
    a: Sequence[float], b: Sequence[float], a_prime: Sequence[float] | None, *, paired: bool, delta: float, alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The arms' values, checked (``ValueError`` on invalid input): positive, and one per round when paired."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    av, bv = _values("A", a), _values("B", b)
    apv = _values("A'", a_prime) if a_prime is not None else None
    if paired:
        lengths = {len(av), len(bv)} | ({len(apv)} if apv is not None else set())
        if len(lengths) != 1:
            raise ValueError(
                "paired analysis needs one value per round in every arm (equal lengths); use unpaired otherwise"
            )
    return av, bv, apv


def _shared_boot_ratios(
    av: np.ndarray,
    bv: np.ndarray,
    apv: np.ndarray | None,
    paired: bool,
    n_boot: int,
    seed: int,
    boot_indices: Any,
    lower_is_better: bool,
) -> dict[str, np.ndarray | None]:
    """Paired: one draw of round indices serves B/A and A′/A (the same draw each would make); every arm's
    resampled means are computed once. None where there is no shared draw."""
    boot_ratios: dict[str, np.ndarray | None] = {"B": None, "A'": None}
    if not (paired and n_boot > 0 and len(av) >= 2):
        return boot_ratios
    if boot_indices is None:
        iv.check_bootstrap_size(n_boot, len(av))
    others = {name: arm for name, arm in (("B", bv), ("A'", apv)) if arm is not None}
    rng = np.random.Generator(np.random.PCG64(seed)) if boot_indices is None else None
    boot_a, *boot_others = iv.resampled_means([av, *others.values()], n_boot=n_boot, rng=rng, indices=boot_indices)
    for name, boot_x in zip(others, boot_others):
        boot_ratios[name] = boot_x / boot_a if lower_is_better else boot_a / boot_x
    return boot_ratios


def _design_flags(eff: Effect, aa: AAResult | None, n_units: int) -> list[str]:
    """What the design and the intervals say before any verdict: rounds, the A/A control, unbounded or
    disagreeing intervals."""
    flags: list[str] = []
    if n_units < MIN_ROUNDS:
        flags.append(TOO_FEW_ROUNDS)
    elif n_units < WARN_ROUNDS:
        flags.append(FEW_ROUNDS)
    if aa is None:
        flags.append(NO_AA_CONTROL)
    else:
        if aa.unstable:
            flags.append(UNSTABLE)
        if aa.underpowered:
            flags.append(UNDERPOWERED)
    if eff.primary95 is not None and not eff.primary95.bounded:
        flags.append(UNBOUNDED_INTERVAL)
    cross95 = next((i for i in eff.intervals if i.params.get("role") == "cross-check" and i.level == 0.95), None)
    if _disagree(eff.primary95, cross95):
        flags.append(METHODS_DISAGREE)
    return flags


def _drift_and_outliers(
    arms: dict[str, np.ndarray], slots: dict[str, Sequence[float]] | None, alpha: float, delta: float
) -> tuple[dict[str, stability.Drift | None], dict[str, list[int]], bool]:
    """Each arm's drift and outlier runs (flagged, never dropped), and whether any arm drifts beyond δ/2."""
    drifts: dict[str, stability.Drift | None] = {}
    outliers: dict[str, list[int]] = {}
    drifting = False
    for name, values in arms.items():
        d = stability.drift(values, (slots or {}).get(name))
        drifts[name] = d
        if d and d.p < alpha and abs(d.change_log) > math.log1p(delta) / 2:
            drifting = True
        out = stability.outlier_runs(values)
        if out:
            outliers[name] = out
    return drifts, outliers, drifting


def _verdict(
    eff: Effect, widening: control.Widening | None, flags: list[str], delta: float, paired: bool, n_units: int
) -> tuple[str, str, str, bool, control.Widening | None]:
    """(verdict, gate, reason, significant below δ, the widening when it changed the answer): guards first,
    then the CI95/CI90 against the band, then the control rule (``WIDENED`` is added to ``flags``)."""
    if TOO_FEW_ROUNDS in flags or eff.primary95 is None or eff.primary90 is None:
        reason = f"too few {'rounds' if paired else 'runs per arm'} ({n_units} < {MIN_ROUNDS}): no verdict"
        return INCONCLUSIVE, RERUN, reason, False, None
    if UNSTABLE in flags:
        reason = "the A/A control differs from 1 beyond δ/2: the session is unstable, verdict withheld"
        return INCONCLUSIVE, RERUN, reason, False, None
    verdict, significant_below = decide(eff.primary95, eff.primary90, delta)
    gate = gate_for(eff.primary95, eff.primary90, delta)
    if widening is None:
        return verdict, gate, _REASONS[verdict], significant_below, None
    # The control rule: what the verdict reads where the control's noise is too big.
    ruled = decide(widening.ci95, widening.ci90, delta, widening.strict)
    ruled_gate = gate_for(widening.ci95, widening.ci90, delta, widening.strict)
    if (ruled[0], ruled_gate) == (verdict, gate):  # said where it changes the answer, silent where not
        return verdict, gate, _REASONS[verdict], significant_below, None
    widening = replace(widening, model_verdict=verdict, model_gate=gate)
    (verdict, significant_below), gate = ruled, ruled_gate
    flags.append(WIDENED)
    reason = f"{_REASONS[verdict]} ({widening.why}; the model alone: {widening.model_verdict})"
    return verdict, gate, reason, significant_below, widening


def _planning(eff: Effect, aa: AAResult | None, *, delta: float, alpha: float, power: float, paired: bool) -> Planning:
    """What would resolve it: from the A/A noise floor when there is one, else from B/A scatter."""
    source = aa.effect if aa is not None else eff
    sd = source.sd_unit_log
    return Planning(
        noise_source="A/A (A' vs A)" if aa is not None else "B vs A residual scatter (no A/A control)",
        sd_unit_log=sd,
        n=eff.n,
        alpha=alpha,
        power=power,
        mde_pct=pw.pct(pw.mde_log(sd, eff.n, alpha=alpha, power=power, paired=paired)),
        rounds_needed=pw.rounds_needed(sd, delta, alpha=alpha, power=power, paired=paired, minimum=MIN_ROUNDS),
        rounds_needed_equivalence=pw.rounds_needed(
            sd, delta, alpha=alpha, power=power, paired=paired, goal="equivalence", minimum=MIN_ROUNDS
        ),
        counts="rounds" if paired else "runs per arm",
    )


def _widening(
    num: np.ndarray, den: np.ndarray, eff: Effect, aa: AAResult, *, paired: bool, alpha: float
) -> control.Widening | None:
    """The control rule (``workbench.stats.control``): where the A/A control's noise floor is above
    the band, the primary CI95 and CI90 and the α/5 interval, widened by ``control.scale``."""
    if not aa.underpowered or eff.primary95 is None or eff.primary90 is None or aa.effect.n < 2:
        return None
    strict = alpha / control.STRICTER
    primary = iv.paired_fieller if paired else iv.welch_fieller
    factor = float(control.scale(aa.effect.sd_unit_log, eff.sd_unit_log))
    wide = [control.widen(i, eff.ratio, factor) for i in (eff.primary95, eff.primary90, primary(num, den, 1 - strict))]
    return control.Widening(strict, factor, wide[0], wide[1], wide[2])


_REASONS = {
    REGRESSION: "the whole CI95 lies above 1+δ: worse by more than δ",
    IMPROVEMENT: "the whole CI95 lies below 1/(1+δ): better by more than δ",
    EQUIVALENT: "the CI90 lies inside the band (TOST): no change beyond δ",
    SLOWER_UNRESOLVED: "worse (CI95 above 1), but whether by more than δ is unresolved",
    FASTER_UNRESOLVED: "better (CI95 below 1), but whether by more than δ is unresolved",
    INCONCLUSIVE: "the CI95 contains 1 and the CI90 is not inside the band: more rounds needed",
}


@dataclass(frozen=True)
class GateSummary:
    gate: str
    per_metric: list[str]
    holm_p_regression: list[float]


def gate_metrics(analyses: Sequence[Analysis], alpha: float = 0.05) -> GateSummary:
    """The CI gate over several metrics: FAIL if any metric fails on its own or its
    Holm-adjusted p("regression > δ") < α; PASS only if every metric passes
    (intersection–union: no correction needed); otherwise RERUN."""
    per = [x.gate for x in analyses]
    ps = [x.p_regression for x in analyses]
    usable = [p if math.isfinite(p) else 1.0 for p in ps]
    adjusted = holm(usable) if usable else []
    # Where the control rule applies (the A/A noise floor above the band), the model p-value at α
    # is not a verdict: such a metric fails on its own gate only.
    trusted = [
        not {TOO_FEW_ROUNDS, UNSTABLE} & set(x.flags) and not (x.aa is not None and x.aa.underpowered) for x in analyses
    ]
    if any(g == FAIL for g in per) or any(q < alpha and ok for q, ok in zip(adjusted, trusted)):
        overall = FAIL
    elif per and all(g == PASS for g in per):
        overall = PASS
    else:
        overall = RERUN
    return GateSummary(overall, per, adjusted)
