"""fdp: f-differential privacy and Gaussian differential privacy with trade-off curves as objects.

>>> import fdp
>>> f = fdp.Gaussian(1.0)
>>> round(f.epsilon(1e-5), 4)
4.3772

Modules: :mod:`fdp.tradeoff` (the base class and piecewise-linear curves), :mod:`fdp.families`,
:mod:`fdp.constructors`, :mod:`fdp.gdp` (GDP ⇄ (ε, δ)), :mod:`fdp.composition` (⊗: closed
forms and the front end), :mod:`fdp.pld` (the certified FFT engine on privacy-loss grids),
:mod:`fdp.numeric` (bracketed curves and approximations),
:mod:`fdp.operations` (group privacy, symmetrization, subsampling), :mod:`fdp.sgd`
(DP-SGD accounting; the function is ``fdp.dpsgd``),
:mod:`fdp.clt` (CLT, Edgeworth, GDP fit), :mod:`fdp.rdp`, :mod:`fdp.classical`,
:mod:`fdp.accountants` (compare), :mod:`fdp.calibration`, :mod:`fdp.mechanisms`, :mod:`fdp.plot`,
:mod:`fdp.figures`, :mod:`fdp.cli`.
"""

from __future__ import annotations

from . import accountants, calibration, classical, clt, gdp, mechanisms, operations, plot, rdp, sgd
from .accountant import Accountant, plan_sampling
from .accountants import compare
from .allocator import tune_allocator
from .calibration import (
    calibrate_dpsgd,
    calibrate_gaussian,
    calibrate_laplace,
    calibrate_sample_rate,
    calibrate_steps,
)
from .clt import edgeworth, gdp_mu, gdp_mu_delta
from .composition import compose, kov
from .constructors import from_distributions, from_eps_delta, from_points
from .families import EpsDelta, Gaussian, Identity, Laplace
from .numeric import Approximation, Bracketed
from .operations import group, poisson_subsample, subsample, symmetrize
from .pld import AccuracyWarning
from .report import PrivacyReport  # also binds fdp.report, a callable module
from .risk import calibrate_dpsgd_risk
from .sgd import dpsgd, dpsgd_clt
from .tradeoff import PiecewiseLinear, TradeOff

__version__ = "0.1.0"

__all__ = [
    "TradeOff",
    "AccuracyWarning",
    "PiecewiseLinear",
    "Bracketed",
    "Approximation",
    "Gaussian",
    "EpsDelta",
    "Laplace",
    "Identity",
    "from_distributions",
    "from_eps_delta",
    "from_points",
    "compose",
    "kov",
    "group",
    "symmetrize",
    "subsample",
    "poisson_subsample",
    "dpsgd",
    "dpsgd_clt",
    "edgeworth",
    "gdp_mu",
    "gdp_mu_delta",
    "compare",
    "calibrate_dpsgd",
    "calibrate_gaussian",
    "calibrate_laplace",
    "calibrate_steps",
    "calibrate_sample_rate",
    "gdp",
    "clt",
    "rdp",
    "sgd",
    "classical",
    "operations",
    "mechanisms",
    "accountants",
    "calibration",
    "plot",
    "__version__",
    "Accountant",
    "plan_sampling",
    "calibrate_dpsgd_risk",
    "accountant",
    "risk",
    "report",
    "PrivacyReport",
    "tune_allocator",
]
