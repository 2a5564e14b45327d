"""Hypothesis strategies of the reference suite (masses are exact dyadic rationals k/2^20, so the
float vectors handed to fdp sum to exactly 1 and equal the reference's masses)."""

from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

#: sweeps run without shrinking: a failing example is reported as found (shrinking a failure of
#: an expensive reference would multiply the suite's run time)
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)


def sweep(n: int) -> settings:
    """n examples (times FDP_REF_SCALE, for a longer hunt: FDP_REF_SCALE=10 pytest tests/reference)."""
    n *= int(os.environ.get("FDP_REF_SCALE", "1"))
    return settings(max_examples=n, phases=PHASES, suppress_health_check=list(HealthCheck))

DEN = 2**20

#: largest repeat count per number of outcomes, so that the exact product stays ≲ 1300 types
NMAX = {1: 50, 2: 50, 3: 40, 4: 16, 5: 9}


@st.composite
def dyadic_pair(draw, min_k: int = 2, max_k: int = 5):  # noqa: ANN201
    """(p, q) on k outcomes with masses in {0, 1, …, 2^20}/2^20 (zeros on either side occur)."""
    k = draw(st.integers(min_k, max_k))

    def vec() -> np.ndarray:
        cuts = sorted(draw(st.lists(st.integers(0, DEN), min_size=k - 1, max_size=k - 1)))
        return np.diff(np.array([0, *cuts, DEN], dtype=float)) / DEN

    p, q = vec(), vec()
    return p, q


def types(k: int, n: int) -> int:
    """Number of multinomial types of an n-fold product of a k-outcome pair."""
    return math.comb(n + k - 1, k - 1)


@st.composite
def composition(draw, min_curves: int = 2, max_curves: int = 3, budget: int = 2500,
                max_k: int = 4, max_n: int = 30):  # noqa: ANN201
    """2–3 different discrete pairs with repeat counts, the product at most ~budget types."""
    m = draw(st.integers(min_curves, max_curves))
    items = []
    size = 1
    for _ in range(m):
        p, q = draw(dyadic_pair(max_k=max_k))
        k = len(p)
        nmax = 1
        while nmax < max_n and types(k, nmax + 1) * size <= budget:
            nmax += 1
        n = draw(st.integers(1, nmax))
        size *= types(k, n)
        items.append((p, q, n))
    return items
