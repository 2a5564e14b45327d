"""Pickling (issue 17): curves and accountants survive a round trip with the same numbers, so
sweeps parallelize with concurrent.futures or joblib."""

from __future__ import annotations

import math
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest

import fdp
from fdp.accountant import Accountant
from fdp.numeric import Bracketed

DELTA = 1e-5
#: a small sweep: (noise multiplier, sample rate, steps)
SETTINGS = [(1.0, 0.02, 100), (1.5, 0.01, 300), (0.8, 0.05, 50)]


def _roundtrip(obj: object) -> object:
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _sweep_point(setting: tuple[float, float, int]) -> tuple[float, float, float]:
    """A sweep worker (module level, so it pickles): the certified ε bracket of one DP-SGD
    setting (coarse engine accuracy, to keep the test fast) and the accountant's fast ε."""
    s, p, t = setting
    lo, hi = fdp.dpsgd(s, p, t, tol=1e-2).epsilon_bracket(DELTA)
    fast = Accountant().step(s, p, steps=t).epsilon(DELTA)
    return float(lo), float(hi), fast


@pytest.mark.parametrize("curve", [fdp.Gaussian(0.7), fdp.Laplace(0.4), fdp.EpsDelta(1.0, 1e-6)])
def test_closed_forms_roundtrip(curve: fdp.TradeOff) -> None:
    back = _roundtrip(curve)
    assert type(back) is type(curve)
    assert back.epsilon(DELTA) == curve.epsilon(DELTA)
    assert back(0.1) == curve(0.1)


def test_dpsgd_roundtrip_same_bracket_and_directions() -> None:
    h = fdp.dpsgd(1.0, 0.02, 100, tol=1e-2)
    back = _roundtrip(h)
    assert isinstance(back, Bracketed) and type(back) is type(h)
    assert back.epsilon_bracket(DELTA) == h.epsilon_bracket(DELTA)
    assert back.epsilon(DELTA) == h.epsilon(DELTA)
    assert back.delta(1.0) == h.delta(1.0)
    assert back(0.05) == h(0.05)
    assert back.certificate(DELTA) == h.certificate(DELTA)
    assert back.info["steps"] == 100 and repr(back) == repr(h)
    # the conservative end is still above the optimistic one (a real bracket, not a copy of one)
    lo, hi = back.epsilon_bracket(DELTA)
    assert 0.0 < lo <= hi


def test_numeric_composition_roundtrip_keeps_its_inverse() -> None:
    h = fdp.compose(fdp.Laplace(0.1), fdp.Gaussian(0.3), repeat=20, numeric=True)
    assert isinstance(h, Bracketed)
    back = _roundtrip(h)
    assert back.epsilon_bracket(1e-6) == h.epsilon_bracket(1e-6)
    # the inverse is recomposed from the inverted items (not the inverted bracket): same numbers
    assert back.inverse().epsilon_bracket(1e-6) == h.inverse().epsilon_bracket(1e-6)
    # a second round trip, after the inverse was built, is still picklable
    assert _roundtrip(back).inverse().epsilon(1e-6) == h.inverse().epsilon(1e-6)


def test_accountant_roundtrip_fast_path_and_engine() -> None:
    acc = Accountant(tol=0.1)  # a coarse engine bracket: the test is about equality
    acc.step(1.0, 0.01, steps=500).step(1.5, 0.02, steps=200)
    acc.compose(fdp.Gaussian(0.1))
    eps = acc.epsilon(DELTA)  # fast path: fixes the grid step, which the copy must keep
    back = _roundtrip(acc)
    assert isinstance(back, Accountant)
    assert back.history == acc.history and back.neighbours == acc.neighbours
    assert back.epsilon(DELTA) == eps
    assert back.epsilon_bracket(DELTA) == acc.epsilon_bracket(DELTA)
    # the unpickled accountant keeps accounting
    back.step(1.0, 0.01, steps=10)
    assert back.steps == acc.steps + 10 and back.epsilon(DELTA) > eps
    # the caches are not pickled: a queried accountant is as small as a fresh one
    assert len(pickle.dumps(acc)) < 10_000


def test_accountant_result_curve_roundtrip() -> None:
    acc = Accountant(tol=1e-2).step(1.0, 0.02, steps=100)
    curve = acc.curve
    back = _roundtrip(curve)
    assert back.epsilon_bracket(DELTA) == curve.epsilon_bracket(DELTA)


def test_process_pool_sweep_matches_serial() -> None:
    # fork where there is one (no re-import in the workers); arguments and results are
    # pickled either way
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as ex:
        jobs = ex.map(_sweep_point, SETTINGS)
        # a worker can also return the curve itself
        job = ex.submit(fdp.dpsgd, *SETTINGS[0], tol=1e-2)
        serial = [_sweep_point(s) for s in SETTINGS]  # meanwhile, in this process
        parallel, curve = list(jobs), job.result()
    assert parallel == serial
    # each is a certified bracket with the fast path's upper bound above its lower end
    assert all(0.0 < lo <= hi and lo <= fast and math.isfinite(hi) for lo, hi, fast in parallel)
    assert len({hi for _, hi, _ in parallel}) == len(SETTINGS)  # three different settings
    assert curve.epsilon_bracket(DELTA) == serial[0][:2]
