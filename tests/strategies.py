"""Hypothesis strategies shared by the test modules."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


@st.composite
def discrete_pair(draw, max_k: int = 4, low: float = 0.05):  # noqa: ANN001, ANN201
    """A pair (p, q) of distributions on 2..max_k outcomes, every mass at least ~low/max_k."""
    k = draw(st.integers(2, max_k))
    p = np.array(draw(st.lists(st.floats(low, 1.0), min_size=k, max_size=k)))
    q = np.array(draw(st.lists(st.floats(low, 1.0), min_size=k, max_size=k)))
    return p / p.sum(), q / q.sum()
