"""Student-t and normal quantiles and tail probabilities through scipy.special's ufuncs.

scipy.special's compiled ufuncs load in a fraction of the time ``scipy.stats`` (or even
the ``scipy.special`` package) takes, and the analysis needs nothing more than these few
functions. They load on first use (``_special.special``), so importing
``workbench.stats`` never loads scipy.
"""

from __future__ import annotations

import math

from workbench.stats._special import special


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with ``df`` (possibly fractional) degrees of freedom."""
    return float(special().stdtrit(df, p))


def t_cdf(x: float, df: float) -> float:
    return float(special().stdtr(df, x))


def t_sf(x: float, df: float) -> float:
    """P(T > x)."""
    return float(special().stdtr(df, -x))


def t_two_sided_p(t: float, df: float) -> float:
    if math.isnan(t):
        return math.nan
    return min(1.0, 2.0 * t_sf(abs(t), df))


def norm_cdf(x: float) -> float:
    return float(special().ndtr(x))


def nct_cdf(x: float, df: float, nc: float) -> float:
    """CDF of the noncentral t distribution (for exact power)."""
    return float(special().nctdtr(df, nc, x))


def chi2_quantile(p: float, df: float) -> float:
    # chdtri gives the upper-tail inverse: P(X > x) = q.
    return float(special().chdtri(df, 1.0 - p))
