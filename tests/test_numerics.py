"""The directed-rounding primitives of fdp._numerics against exact rational arithmetic.

Every guarantee fdp reports leans on these: a sum, product or quotient rounded toward the side
of less privacy. Each is checked with :class:`fractions.Fraction` (exact for floats) on its
side, and within one ulp of the exact value (so the direction is not bought with a loose
result)."""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fdp._numerics import (
    add_down,
    add_up,
    add_up_array,
    div_down_array,
    div_up,
    mul_up,
    product_up,
    quotient_up,
    round_decimal,
    sum_up,
)

FINITE = st.floats(allow_nan=False, allow_infinity=False)
NONNEG = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False)
POS = st.floats(min_value=5e-324, allow_nan=False, allow_infinity=False)


def _ulp_up(x: float) -> Fraction:
    return Fraction(math.nextafter(x, math.inf)) - Fraction(x)


def _up_side(got: float, exact: Fraction) -> None:
    """got ≥ exact, and the float below got is below exact (the least float at or above)."""
    if math.isinf(got):
        assert got > 0 and exact > Fraction(1.7976931348623157e308), (got, exact)
        return
    assert Fraction(got) >= exact, (got, exact)
    below = math.nextafter(got, -math.inf)
    assert math.isinf(below) or Fraction(below) < exact or Fraction(got) == exact, (got,)


@settings(max_examples=500, deadline=None)
@given(a=FINITE, b=FINITE)
def test_add_up_and_add_down_round_toward_their_side(a: float, b: float) -> None:
    exact = Fraction(a) + Fraction(b)
    _up_side(add_up(a, b), exact)
    _up_side(float(add_up_array(a, np.array([b]))[0]), exact)
    down = add_down(a, b)
    if math.isfinite(down):
        assert Fraction(down) <= exact
        above = math.nextafter(down, math.inf)
        assert math.isinf(above) or Fraction(above) > exact or Fraction(down) == exact


@settings(max_examples=300, deadline=None)
@given(values=st.lists(FINITE, min_size=0, max_size=12))
def test_sum_up_is_never_below_the_exact_sum(values: list[float]) -> None:
    got = sum_up(values)
    if math.isfinite(got):
        _up_side(got, sum((Fraction(v) for v in values), Fraction(0)))


@settings(max_examples=500, deadline=None)
@given(a=NONNEG, b=POS, k=st.integers(0, 10**6))
def test_products_and_quotients_round_up(a: float, b: float, k: int) -> None:
    for got, exact in ((mul_up(a, b), Fraction(a) * Fraction(b)),
                       (div_up(a, b), Fraction(a) / Fraction(b))):
        if math.isfinite(got):
            assert Fraction(got) >= exact, (a, b, got)
            assert Fraction(got) - exact <= 2 * _ulp_up(got), (a, b, got)  # (one ulp up)
    _up_side(product_up(k, a), k * Fraction(a))
    _up_side(quotient_up(a, b), Fraction(a) / Fraction(b))


@settings(max_examples=500, deadline=None)
@given(a=st.lists(NONNEG, min_size=1, max_size=8),
       b=st.floats(min_value=5e-324, max_value=1.0, allow_nan=False))
def test_div_down_array_is_never_above_the_quotient(a: list[float], b: float) -> None:
    got = div_down_array(np.array(a), b)
    for x, g in zip(a, got.tolist(), strict=True):
        if math.isfinite(g):
            exact = Fraction(x) / Fraction(b)
            assert Fraction(g) <= exact, (x, b, g)
            above = math.nextafter(g, math.inf)
            assert math.isinf(above) or Fraction(above) - exact <= 2 * _ulp_up(g) or g == 0


@settings(max_examples=300, deadline=None)
@given(x=FINITE, digits=st.integers(1, 17), fixed=st.booleans())
def test_round_decimal_rounds_toward_its_side(x: float, digits: int, fixed: bool) -> None:
    exact = decimal.Decimal(x)  # (exact: a float is a dyadic rational)
    assert round_decimal(x, digits, "up", fixed=fixed) >= exact
    assert round_decimal(x, digits, "down", fixed=fixed) <= exact
