"""fdp: f-differential privacy and Gaussian differential privacy with trade-off curves as objects.

>>> import fdp
>>> f = fdp.Gaussian(1.0)
>>> round(f.epsilon(1e-5), 4)
4.3772
"""

from __future__ import annotations

from . import gdp
from .composition import compose, kov
from .constructors import from_distributions, from_eps_delta, from_points
from .families import EpsDelta, Gaussian, Identity, Laplace
from .numeric import Bracketed
from .tradeoff import PiecewiseLinear, TradeOff

__version__ = "0.1.0"

__all__ = [
    "TradeOff",
    "Bracketed",
    "compose",
    "kov",
    "PiecewiseLinear",
    "Gaussian",
    "EpsDelta",
    "Laplace",
    "Identity",
    "from_distributions",
    "from_eps_delta",
    "from_points",
    "gdp",
    "__version__",
]
