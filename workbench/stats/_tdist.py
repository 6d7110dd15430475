"""Student-t and normal quantiles and tail probabilities through ``scipy.special``.

``scipy.special`` imports in a fraction of the time ``scipy.stats`` takes, and the
analysis needs nothing more than these few functions. Imports stay inside the
functions so that importing ``workbench.stats`` never loads scipy.
"""

from __future__ import annotations

import math


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with ``df`` (possibly fractional) degrees of freedom."""
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


def t_cdf(x: float, df: float) -> float:
    from scipy.special import stdtr

    return float(stdtr(df, x))


def t_sf(x: float, df: float) -> float:
    """P(T > x)."""
    from scipy.special import stdtr

    return float(stdtr(df, -x))


def t_two_sided_p(t: float, df: float) -> float:
    if math.isnan(t):
        return math.nan
    return min(1.0, 2.0 * t_sf(abs(t), df))


def norm_cdf(x: float) -> float:
    from scipy.special import ndtr

    return float(ndtr(x))


def nct_cdf(x: float, df: float, nc: float) -> float:
    """CDF of the noncentral t distribution (for exact power)."""
    from scipy.special import nctdtr

    return float(nctdtr(df, nc, x))


def chi2_quantile(p: float, df: float) -> float:
    from scipy.special import chdtri

    # chdtri gives the upper-tail inverse: P(X > x) = q.
    return float(chdtri(df, 1.0 - p))
