"""Input validation shared by every public function.

Each checker names the parameter, shows the offending value and states the allowed range, so that a
user never receives a NaN or a silently wrong answer for bad input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "as_array",
    "check_scalar",
    "check_prob_vector",
    "check_int",
]


def _show(value: Any) -> str:
    arr = np.asarray(value)
    if arr.ndim == 0:
        return repr(arr.item()) if arr.dtype.kind in "biuf" else repr(value)
    bad = arr.ravel()[:5]
    more = ", ..." if arr.size > 5 else ""
    return "[" + ", ".join(repr(float(x)) for x in bad) + more + "]"


def as_array(
    name: str,
    value: Any,
    *,
    low: float = -np.inf,
    high: float = np.inf,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> np.ndarray:
    """Convert ``value`` to a float array and check every entry lies in the stated range.

    Raises
    ------
    TypeError
        If ``value`` is not numeric.
    ValueError
        If an entry is NaN, infinite (unless ``allow_inf``) or out of range; the message names the
        parameter, the value and the allowed range.
    """
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}") from exc
    lo_b = "(" if (low_open or np.isinf(low)) else "["
    hi_b = ")" if (high_open or (np.isinf(high) and not allow_inf)) else "]"
    rng = f"{lo_b}{low:g}, {high:g}{hi_b}"
    if np.isnan(arr).any():
        raise ValueError(f"{name} must be a number in {rng}, got NaN ({_show(value)})")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be a finite number in {rng}, got {_show(value)}")
    too_low = (arr <= low) if low_open else (arr < low)
    too_high = (arr >= high) if high_open else (arr > high)
    if too_low.any() or too_high.any():
        raise ValueError(f"{name} must lie in {rng}, got {_show(value)}")
    return arr


def check_scalar(name: str, value: Any, **kw: Any) -> float:
    """Check a scalar parameter (see :func:`as_array` for the range keywords) and return it.
    A bool is not a number here (``True`` read as σ = 1; :func:`check_int` rejects it too)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    arr = as_array(name, value, **kw)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a single number, got an array of shape {arr.shape}")
    return float(arr)


def check_int(name: str, value: Any, *, low: int = 0, high: int | None = None) -> int:
    """Check an integer parameter lies in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    hi = "inf" if high is None else str(high)
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer in [{low}, {hi}], got {value}")
    return value


def check_prob_vector(name: str, value: Any) -> np.ndarray:
    """Check a probability vector: 1-D, entries in [0, 1], summing to 1 within 1e-9."""
    arr = as_array(name, value, low=0.0, high=1.0)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D probability vector, got shape {arr.shape}"
        )
    total = float(arr.sum())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (within 1e-9), got sum {total!r}")
    return arr
