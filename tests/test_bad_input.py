"""Issue 14: every bad input is a one-line error naming the flag or parameter and its value.

Two tables: bad command lines (exit 2, exactly one line on stderr naming the flag and the value,
nothing on stdout, never a traceback) and bad Python calls (ValueError/TypeError naming the
parameter). Every entry fails during validation, before any accounting, so the file runs in
seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import fdp
from fdp import calibration as cal
from fdp import classical as C
from fdp import gdp, rdp
from fdp import mechanisms as M
from fdp.cli import LIMITS, main

G = fdp.Gaussian(1.0)
NAN, INF = math.nan, math.inf

SGD = ["--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "100"]
CAL = ["calibrate", "--sample-rate", "0.01", "--steps", "100"]

# (command line, substrings the single stderr line must contain: the flag and the value)
BAD_CLI: list[tuple[list[str], list[str]]] = [
    # gdp-to-dp
    (["gdp-to-dp", "--mu", "-1", "--delta", "1e-5"], ["--mu", "'-1'", "[0, inf)"]),
    (["gdp-to-dp", "--mu", "nan", "--eps", "1"], ["--mu", "'nan'"]),
    (["gdp-to-dp", "--mu", "inf", "--eps", "1"], ["--mu", "'inf'"]),
    (["gdp-to-dp", "--mu", "x", "--delta", "0.1"], ["--mu", "'x'"]),
    (["gdp-to-dp", "--mu", "1", "--delta", "2"], ["--delta", "'2'", "[0, 1]"]),
    (["gdp-to-dp", "--mu", "1", "--delta", "-1e-3"], ["--delta", "'-1e-3'"]),
    (["gdp-to-dp", "--mu", "1", "--eps", "-1"], ["--eps", "'-1'", "[0, inf)"]),
    (["gdp-to-dp", "--mu", "1", "--eps", "-inf"], ["--eps", "'-inf'"]),
    (["gdp-to-dp", "--mu", "1", "--eps", "1e309"], ["--eps", "'1e309'"]),
    (["gdp-to-dp", "--mu", "1", "--eps", "1", "--delta", "0.1"], ["--delta", "--eps"]),
    (["gdp-to-dp", "--mu", "1"], ["--delta", "--eps"]),
    (["gdp-to-dp", "--eps", "1"], ["--mu"]),
    (["gdp-to-dp", "--mu", "1", "--mu", "2", "--eps", "1"], ["--mu", "'1'", "'2'"]),
    (["gdp-to-dp", "--mu=1", "--eps", "1", "--eps=2"], ["--eps", "'1'", "'2'"]),
    (["gdp-to-dp", "--mu", "1", "--eps", "1", "--bogus", "3"], ["--bogus"]),
    # dp-to-gdp
    (["dp-to-gdp", "--eps", "-1", "--delta", "0.1"], ["--eps", "'-1'"]),
    (["dp-to-gdp", "--eps", "1", "--delta", "1"], ["--delta", "'1'", "[0, 1)"]),
    (["dp-to-gdp", "--eps", "1", "--delta", "nan"], ["--delta", "'nan'"]),
    (["dp-to-gdp", "--eps", "inf", "--delta", "0.1"], ["--eps", "'inf'"]),
    (["dp-to-gdp", "--eps", "1"], ["--delta"]),
    # curve
    (["curve", "nope:1"], ["SPEC", "'nope:1'"]),
    (["curve", "gaussian:-1"], ["SPEC", "'gaussian:-1'", "mu"]),
    (["curve", "gaussian:x"], ["SPEC", "'gaussian:x'"]),
    (["curve", "gaussian"], ["SPEC", "'gaussian'", "1 parameter"]),
    (["curve", "gaussian:1,2"], ["SPEC", "'gaussian:1,2'"]),
    (["curve", "laplace:nan"], ["SPEC", "'laplace:nan'", "mu"]),
    (["curve", "epsdelta:1,2"], ["SPEC", "'epsdelta:1,2'", "delta"]),
    (["curve", "rr:-1"], ["SPEC", "'rr:-1'", "eps"]),
    (["curve", "identity:3"], ["SPEC", "'identity:3'"]),
    (["curve", "gaussian:1", "--count", "0"], ["--count", "'0'", "[1, 1000000]"]),
    (["curve", "laplace:0.1", "--count", "100000000"], ["--count", "'100000000'"]),
    (["curve", "gaussian:1", "--count", "1.5"], ["--count", "'1.5'"]),
    (["curve", "gaussian:1", "--alpha", "2"], ["--alpha", "'2'", "[0, 1]"]),
    (["curve", "gaussian:1", "--alpha", "0.1,,0.2"], ["--alpha", "'0.1,,0.2'"]),
    (["curve", "gaussian:1", "--alpha", "0.1,x"], ["--alpha", "'x'"]),
    (["curve", "gaussian:1", "--alpha", "nan"], ["--alpha", "'nan'"]),
    (["curve", "gaussian:1", "--plot", "/nonexistent/x.png"], ["--plot", "/nonexistent"]),
    (["curve", "gaussian:1", "--plot", "x.foo"], ["--plot", "'x.foo'"]),
    # dpsgd
    (["dpsgd", "--sample-rate", "0.01", "--steps", "100"], ["--noise-multiplier"]),
    (["dpsgd", *SGD[:2], "--steps", "100"], ["--sample-rate", "--batch-size"]),
    (["dpsgd", *SGD[:4]], ["--steps", "--epochs"]),
    (["dpsgd", *SGD[:4], "--steps", "1000000000"], ["--steps", "'1000000000'", "10000000]"]),
    (["dpsgd", *SGD[:4], "--steps", "0"], ["--steps", "'0'"]),
    (["dpsgd", "--noise-multiplier", "0", *SGD[2:]], ["--noise-multiplier", "'0'"]),
    (["dpsgd", "--noise-multiplier", "-1", *SGD[2:]], ["--noise-multiplier", "'-1'"]),
    (["dpsgd", "--noise-multiplier", "1e-3", *SGD[2:]], ["--noise-multiplier", "0.001", "0.1"]),
    (["dpsgd", "--noise-multiplier", "1e9", *SGD[2:]], ["--noise-multiplier", "'1e9'"]),
    (["dpsgd", *SGD[:2], "--sample-rate", "0", "--steps", "10"], ["--sample-rate", "'0'"]),
    (["dpsgd", *SGD[:2], "--sample-rate", "1.5", "--steps", "10"], ["--sample-rate", "'1.5'"]),
    (["dpsgd", *SGD, "--epochs", "3"], ["--epochs 3", "--steps 100"]),
    (["dpsgd", *SGD, "--batch-size", "10", "--dataset-size", "100"], ["--batch-size 10"]),
    (["dpsgd", *SGD[:2], "--batch-size", "10", "--steps", "10"], ["--batch-size 10"]),
    (
        ["dpsgd", *SGD[:2], "--batch-size", "1000", "--dataset-size", "100", "--steps", "10"],
        ["--batch-size", "'1000'", "[1, 100]"],
    ),
    (
        ["dpsgd", *SGD[:2], "--batch-size", "1", "--dataset-size", "10000000", "--epochs", "1e3"],
        ["--epochs", "1000", "1000000"],
    ),
    (["dpsgd", *SGD[:4], "--epochs", "2"], ["--epochs 2", "--batch-size"]),
    (["dpsgd", *SGD[:2], "--batch-size", "0", "--dataset-size", "9"], ["--batch-size", "'0'"]),
    (["dpsgd", *SGD, "--epochs", "-1"], ["--epochs", "'-1'"]),
    (["dpsgd", *SGD, "--delta", "0"], ["--delta", "'0'", "(0, 1)"]),
    (["dpsgd", *SGD, "--delta", "1"], ["--delta", "'1'"]),
    (["dpsgd", *SGD, "--sensitivity", "0"], ["--sensitivity", "'0'"]),
    (["dpsgd", *SGD, "--sampling", "bernoulli"], ["--sampling", "'bernoulli'"]),
    (["dpsgd", *SGD, "--neighbours", "replace-one"], ["--neighbours replace-one"]),
    (["dpsgd", *SGD, "--sensitivity", "100"], ["--noise-multiplier", "sensitivity 100"]),
    (["dpsgd", *SGD, "--noise-multiplier", "2"], ["--noise-multiplier", "'1'", "'2'"]),
    # compare
    (["compare", "--curve", "gaussian:1", "--count", "0"], ["--count", "'0'"]),
    (
        ["compare", "--curve", "gaussian:0.1", "--curve", "laplace:0.1", "--count", "100"],
        ["--count", "1 time(s)", "2 --curve(s)"],
    ),
    (
        ["compare", "--curve", "gaussian:1", "--count", "2", "--count", "3"],
        ["--count", "2 time(s)", "1 --curve(s)"],
    ),
    (["compare", "--curve", "gaussian:1", "--noise-multiplier", "1"], ["--noise-multiplier 1"]),
    (["compare", "--curve", "gaussian:1", "--steps", "10"], ["--steps 10", "--curve"]),
    (["compare", "--curve", "gaussian:1", "--sampling", "uniform"], ["--sampling uniform"]),
    (["compare", "--count", "3", *SGD], ["--count 3", "--curve"]),
    (["compare", "--curve", "gaussian:1", "--delta", "0"], ["--delta", "'0'"]),
    (["compare", "--curve", "bogus"], ["--curve", "'bogus'"]),
    (
        ["compare", "--curve", "g:1", "--count", "600000", "--curve", "l:1", "--count", "600000"],
        ["--count", "1200000", "1000000"],
    ),
    (["compare", *SGD[:4]], ["--steps", "--epochs"]),
    # calibrate
    ([*CAL, "--eps", "1", "--mu", "1"], ["--eps 1", "--mu 1"]),
    ([*CAL, "--mu", "1", "--delta", "1e-5"], ["--delta 1e-05", "--mu 1"]),
    ([*CAL], ["--eps", "--mu"]),
    ([*CAL, "--eps", "1", "--noise-multiplier", "1"], ["--noise-multiplier 1"]),
    ([*CAL, "--eps", "1", "--count", "3"], ["--count 3", "--mechanism"]),
    ([*CAL, "--eps", "0"], ["--eps", "'0'"]),
    ([*CAL, "--eps", "1000"], ["--eps", "'1000'", "100]"]),
    ([*CAL, "--mu", "-1"], ["--mu", "'-1'"]),
    ([*CAL, "--eps", "1", "--delta", "0"], ["--delta", "'0'"]),
    (
        ["calibrate", "--sample-rate", "0.01", "--steps", "1000000", "--eps", "1"],
        ["--steps", "'1000000'", "100000]"],
    ),
    (["calibrate", "--mechanism", "gaussian", "--mu", "1"], ["--mu 1", "--mechanism gaussian"]),
    (["calibrate", "--mechanism", "gaussian", "--eps", "1", "--steps", "10"], ["--steps 10"]),
    (["calibrate", "--mechanism", "gaussian", "--count", "0", "--eps", "1"], ["--count", "'0'"]),
    (["calibrate", "--mechanism", "gaussian"], ["--eps", "--mechanism gaussian"]),
    (
        ["calibrate", "--mechanism", "gaussian", "--eps", "1", "--delta", "0"],
        ["--delta", "'0'"],
    ),
    (
        ["calibrate", "--mechanism", "laplace", "--eps", "1", "--count", "100000"],
        ["--count", "'100000'", "10000]"],
    ),
    (
        ["calibrate", "--mechanism", "laplace", "--eps", "1", "--sampling", "uniform"],
        ["--sampling uniform"],
    ),
    (["calibrate", "--mechanism", "rdp", "--eps", "1"], ["--mechanism", "'rdp'"]),
    # the program itself
    ([], ["command"]),
    (["no-such-command"], ["'no-such-command'"]),
    (["--bogus", "demo"], ["--bogus"]),
    (["demo", "--extra"], ["--extra"]),
]


@pytest.mark.parametrize("args,parts", BAD_CLI, ids=[" ".join(a) or "(empty)" for a, _ in BAD_CLI])
def test_bad_command_line(
    args: list[str], parts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(args)
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert out == ""
    assert err.startswith("fdp: error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for part in parts:
        assert part in err, (part, err)


def test_bad_command_line_table_is_large() -> None:
    assert len(BAD_CLI) >= 60


def test_json_flag_does_not_change_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "gdp-to-dp", "--mu", "1", "--eps", "-1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--eps" in err


def test_limits_are_what_the_help_says() -> None:
    assert LIMITS["steps"] == 10**7 and LIMITS["count"] == 10**6 and LIMITS["min_noise"] == 0.1


# --------------------------------------------------------------------------- Python API
Call = Callable[[], Any]

# (id, call, substrings of the message: the parameter and usually the value)
BAD_PY: list[tuple[str, Call, list[str]]] = [
    # fdp.gdp
    ("gdp.delta mu str", lambda: gdp.delta("x", 1), ["mu", "'x'"]),
    ("gdp.delta mu<0", lambda: gdp.delta(-1, 1), ["mu", "-1"]),
    ("gdp.delta eps nan", lambda: gdp.delta(1, NAN), ["eps", "NaN"]),
    ("gdp.delta mu None", lambda: gdp.delta(None, 1), ["mu", "None"]),
    ("gdp.epsilon delta>1", lambda: gdp.epsilon(1, 2), ["delta", "2"]),
    ("gdp.epsilon delta<0", lambda: gdp.epsilon(1, -1e-3), ["delta", "-0.001"]),
    ("gdp.epsilon mu inf", lambda: gdp.epsilon(INF, 1e-5), ["mu", "inf"]),
    ("gdp.mu eps<0", lambda: gdp.mu(-1, 0.1), ["eps", "-1"]),
    ("gdp.mu delta>1", lambda: gdp.mu(1, 1.5), ["delta", "1.5"]),
    ("gdp.mu delta str", lambda: gdp.mu(1, "a"), ["delta", "'a'"]),
    ("gdp.sigma sensitivity 0", lambda: gdp.sigma(1, 1e-5, 0), ["sensitivity", "0"]),
    ("gdp.log_delta mu<0", lambda: gdp.log_delta(-1, 0), ["mu", "-1"]),
    # families and curve methods
    ("Gaussian mu<0", lambda: fdp.Gaussian(-1), ["mu", "-1"]),
    ("Gaussian nan", lambda: fdp.Gaussian(NAN), ["mu", "NaN"]),
    ("Gaussian str", lambda: fdp.Gaussian("1"), ["mu", "'1'"]),
    ("Laplace mu<0", lambda: fdp.Laplace(-0.1), ["mu", "-0.1"]),
    ("EpsDelta delta>1", lambda: fdp.EpsDelta(1, 2), ["delta", "2"]),
    ("EpsDelta eps<0", lambda: fdp.EpsDelta(-1, 0), ["eps", "-1"]),
    ("f(alpha>1)", lambda: G(1.5), ["alpha", "1.5"]),
    ("f(nan)", lambda: G(NAN), ["alpha", "NaN"]),
    ("f(str)", lambda: G("a"), ["alpha", "'a'"]),
    ("f.epsilon delta<0", lambda: G.epsilon(-1), ["delta", "-1"]),
    ("f.delta eps nan", lambda: G.delta(NAN), ["eps", "NaN"]),
    ("f.group 0", lambda: G.group(0), ["k", "0"]),
    ("f.group float", lambda: G.group(1.5), ["k", "1.5"]),
    ("f.subsample p>1", lambda: G.subsample(1.5), ["p", "1.5"]),
    ("f ** -1", lambda: G**-1, ["n", "-1"]),
    ("f ** 1.5", lambda: G**1.5, ["n", "1.5"]),
    # constructors, composition, operations
    ("compose(1)", lambda: fdp.compose(1), ["curves[0]", "int"]),
    ("compose repeat str", lambda: fdp.compose(G, repeat="a"), ["repeat", "'a'"]),
    ("compose tol 0", lambda: fdp.compose(G, fdp.Laplace(1), tol=0), ["tol", "0"]),
    ("kov eps<0", lambda: fdp.kov(-1, 0, 2), ["eps", "-1"]),
    ("from_distributions sum", lambda: fdp.from_distributions([0.5, 0.6], [0.5, 0.5]), ["p"]),
    ("from_distributions len", lambda: fdp.from_distributions([1], [0.5, 0.5]), ["p and q"]),
    ("from_distributions str", lambda: fdp.from_distributions("ab", "cd"), ["p", "'ab'"]),
    ("from_points empty", lambda: fdp.from_points([], []), ["alpha and beta"]),
    ("from_eps_delta delta", lambda: fdp.from_eps_delta([1], [2]), ["delta", "2"]),
    ("symmetrize(1)", lambda: fdp.symmetrize(1), ["f", "int"]),
    ("group k 0", lambda: fdp.group(G, 0), ["k", "0"]),
    ("subsample p 2", lambda: fdp.subsample(G, 2), ["p", "2"]),
    ("poisson_subsample p<0", lambda: fdp.poisson_subsample(G, -1), ["p", "-1"]),
    # DP-SGD
    ("dpsgd sigma 0", lambda: fdp.dpsgd(0, 0.1, 10), ["noise_multiplier", "0"]),
    ("dpsgd p 0", lambda: fdp.dpsgd(1, 0, 10), ["sample_rate", "0"]),
    ("dpsgd steps 0", lambda: fdp.dpsgd(1, 0.1, 0), ["steps", "0"]),
    ("dpsgd steps float", lambda: fdp.dpsgd(1, 0.1, 10.5), ["steps", "10.5"]),
    ("dpsgd sampling", lambda: fdp.dpsgd(1, 0.1, 10, "bad"), ["sampling", "'bad'"]),
    ("dpsgd sensitivity", lambda: fdp.dpsgd(1, 0.1, 10, sensitivity=-1), ["sensitivity", "-1"]),
    ("dpsgd neighbours", lambda: fdp.dpsgd(1, 0.1, 10, neighbours="x"), ["neighbours", "'x'"]),
    ("dpsgd_clt sigma<0", lambda: fdp.dpsgd_clt(-1, 0.1, 10), ["noise_multiplier", "-1"]),
    # CLT
    ("gdp_mu str", lambda: fdp.gdp_mu("x"), ["f", "str"]),
    ("gdp_mu_delta int", lambda: fdp.gdp_mu_delta(3), ["f", "int"]),
    ("edgeworth n 0", lambda: fdp.edgeworth(G, n=0), ["n", "0"]),
    ("clt str", lambda: fdp.clt.clt("x"), ["curves[0]", "str"]),
    ("clt n<0", lambda: fdp.clt.clt(G, n=-1), ["n", "-1"]),
    # compare
    ("compare nothing", lambda: fdp.compare(), ["workload", "noise_multiplier"]),
    ("compare delta 0", lambda: fdp.compare([(G, 1)], delta=0), ["delta", "0"]),
    ("compare count<0", lambda: fdp.compare([(G, -1)]), ["count", "-1"]),
    ("compare curve int", lambda: fdp.compare([(1, 1)]), ["workload[0]", "int"]),
    ("compare bare curve", lambda: fdp.compare([G]), ["workload[0]", "Gaussian"]),
    ("compare str", lambda: fdp.compare("abc"), ["workload", "str"]),
    ("compare curve", lambda: fdp.compare(G), ["workload", "Gaussian"]),
    ("compare empty", lambda: fdp.compare([]), ["workload", "none"]),
    ("compare methods", lambda: fdp.compare([(G, 1)], methods=["x"]), ["methods", "'x'"]),
    ("compare methods str", lambda: fdp.compare([(G, 1)], methods="exact"), ["methods", "'exact'"]),
    (
        "compare p>1",
        lambda: fdp.compare(noise_multiplier=1, sample_rate=2, steps=1),
        ["sample_rate", "2"],
    ),
    (
        "compare sampling",
        lambda: fdp.compare(noise_multiplier=1, sample_rate=0.1, steps=10, sampling="x"),
        ["sampling", "'x'"],
    ),
    # calibration
    (
        "calibrate_dpsgd rtol",
        lambda: cal.calibrate_dpsgd(0.1, 10, eps=1, delta=1e-5, rtol=0),
        ["rtol", "0"],
    ),
    ("calibrate_dpsgd delta 0", lambda: cal.calibrate_dpsgd(0.1, 10, eps=1, delta=0), ["delta"]),
    ("calibrate_dpsgd eps<0", lambda: cal.calibrate_dpsgd(0.1, 10, eps=-1, delta=1e-5), ["eps"]),
    ("calibrate_dpsgd mu 0", lambda: cal.calibrate_dpsgd(0.1, 10, mu=0), ["mu", "0"]),
    ("calibrate_dpsgd no delta", lambda: cal.calibrate_dpsgd(0.1, 10, eps=1), ["delta=None"]),
    ("calibrate_dpsgd both", lambda: cal.calibrate_dpsgd(0.1, 10, delta=1e-5, mu=1), ["mu=1"]),
    (
        "calibrate_dpsgd floor",
        lambda: cal.calibrate_dpsgd(0.1, 10, mu=1, min_noise_multiplier=-1),
        ["min_noise_multiplier", "-1"],
    ),
    ("calibrate_gaussian steps", lambda: cal.calibrate_gaussian(1, 1e-5, steps=0), ["steps", "0"]),
    (
        "calibrate_gaussian sensitivity",
        lambda: cal.calibrate_gaussian(1, 1e-5, sensitivity=0),
        ["sensitivity", "0"],
    ),
    ("calibrate_laplace eps 0", lambda: cal.calibrate_laplace(0, 1e-5), ["eps", "0"]),
    ("calibrate_laplace delta 1", lambda: cal.calibrate_laplace(1, 1), ["delta", "1"]),
    ("calibrate_laplace rtol", lambda: cal.calibrate_laplace(1, 0.1, steps=3, rtol=0), ["rtol"]),
    ("calibrate_steps sigma", lambda: cal.calibrate_steps(0, 0.1, eps=1, delta=1e-5), ["noise"]),
    (
        "calibrate_sample_rate rtol",
        lambda: cal.calibrate_sample_rate(1, 10, eps=1, delta=1e-5, rtol=2),
        ["rtol", "2"],
    ),
    # rdp
    ("rdp.gaussian mu<0", lambda: rdp.gaussian(-1), ["mu", "-1"]),
    ("rdp.gaussian orders", lambda: rdp.gaussian(1, [0.5]), ["orders", "0.5"]),
    ("rdp.laplace nan", lambda: rdp.laplace(NAN), ["mu", "NaN"]),
    ("rdp.subsampled sigma", lambda: rdp.subsampled_gaussian(0, 0.1), ["noise_multiplier"]),
    ("rdp.subsampled p", lambda: rdp.subsampled_gaussian(1, 1.5), ["sample_rate", "1.5"]),
    ("rdp.wor p<0", lambda: rdp.subsampled_gaussian_wor(1, -0.1), ["sample_rate", "-0.1"]),
    ("rdp.to_epsilon delta", lambda: rdp.to_epsilon([1], [2], 0), ["delta", "0"]),
    ("rdp.to_epsilon lengths", lambda: rdp.to_epsilon([1, 2], [2], 1e-5), ["rho and orders"]),
    ("rdp.to_epsilon rho<0", lambda: rdp.to_epsilon([-1], [2], 1e-5), ["rho", "-1"]),
    ("rdp.to_epsilon method", lambda: rdp.to_epsilon([1], [2], 1e-5, method="x"), ["method"]),
    ("rdp.to_tradeoff n_alpha", lambda: rdp.to_tradeoff([1], [2], n_alpha=0), ["n_alpha", "0"]),
    ("rdp.of_curve str", lambda: rdp.of_curve("x"), ["f", "str"]),
    # classical
    ("basic lengths", lambda: C.basic([1], [0.1, 0.2]), ["eps and delta"]),
    ("basic eps<0", lambda: C.basic([-1], [0]), ["eps", "-1"]),
    ("advanced k 0", lambda: C.advanced(1, 0, 0, 1e-5), ["k", "0"]),
    # (a step this fine asked for 15 GiB and raised MemoryError)
    ("compose grid_step too fine",
     lambda: fdp.compose(fdp.Laplace(1.0), fdp.Laplace(0.5), grid_step=1e-9),
     ["grid_step", "1e-09", "at least"]),
    ("advanced delta_prime 0", lambda: C.advanced(1, 0, 10, 0), ["delta_prime", "0"]),
    ("advanced_for_curve str", lambda: C.advanced_for_curve("x", 10, 1e-5), ["f", "str"]),
    ("advanced_for_curve k", lambda: C.advanced_for_curve(G, 0, 1e-5), ["k", "0"]),
    ("kov_epsilon delta", lambda: C.kov_epsilon(1, 0, 2, 2), ["delta", "2"]),
    # mechanisms
    ("M.laplace sensitivity", lambda: M.laplace(-1, 1), ["sensitivity", "-1"]),
    ("M.laplace scale", lambda: M.laplace(1, 0), ["scale", "0"]),
    ("M.gaussian sigma", lambda: M.gaussian(1, -1), ["sigma", "-1"]),
    ("M.gaussian_calibration", lambda: M.gaussian_calibration(0, 1e-5), ["eps", "0"]),
    ("M.randomized_response k", lambda: M.randomized_response(1, k=1), ["k", "1"]),
    ("M.grr d", lambda: M.grr(1, 1), ["d", "1"]),
    ("M.sue eps", lambda: M.sue(-1), ["eps", "-1"]),
    ("M.oue nan", lambda: M.oue(NAN), ["eps", "NaN"]),
    ("M.olh eps", lambda: M.olh(31), ["eps", "31"]),
    ("M.catastrophe delta", lambda: M.catastrophe(1, 1, 2), ["delta", "2"]),
    ("M.exponential shapes", lambda: M.exponential([1, 2], [1], 1), ["utility vectors"]),
    ("M.exponential sensitivity", lambda: M.exponential([1, 2], [1, 5], 1), ["sensitivity"]),
    ("M.subsampled_eps p", lambda: M.subsampled_eps(1, 2), ["p", "2"]),
    ("M.vector_laplace scale", lambda: M.vector_laplace([1], 0), ["scale", "0"]),
    ("M.variance n", lambda: M.oue(1).variance(0), ["n", "0"]),
    ("plot.tradeoff str", lambda: fdp.plot.tradeoff("x"), ["curves[0]", "str"]),
]


@pytest.mark.parametrize(
    "call,parts", [(c, p) for _, c, p in BAD_PY], ids=[i for i, _, _ in BAD_PY]
)
def test_bad_python_call(call: Call, parts: list[str]) -> None:
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    msg = str(info.value)
    for part in parts:
        assert part in msg, (part, msg)


def test_bad_python_table_is_large() -> None:
    assert len(BAD_PY) >= 60


# --------------------------------------------------------------------------- extremes that work
def test_extreme_but_valid_python_inputs() -> None:
    assert gdp.epsilon(1e308, 1e-5) == math.inf  # was a brentq failure
    assert gdp.delta(1.0, 1e308) == 5e-324  # was "math domain error" (δ > 0: the least subnormal)
    o = M.grr(1.0, 10**9)  # used to allocate 10^9 outcomes
    assert float(o.epsilon(0.0)) == pytest.approx(1.0, abs=1e-9)
    assert M.oue(800.0).q == 0.0 and M.blh(800.0).p == 1.0  # no exp overflow
    r = rdp.subsampled_gaussian(1e8, 0.5)  # tiny negative ρ from rounding broke to_epsilon
    assert np.all(r >= 0) and rdp.to_epsilon(100 * r, rdp.DEFAULT_ORDERS, 1e-5) >= 0


def test_empty_and_huge_inputs_name_their_parameter() -> None:
    # A hunt: these raised "zero-size array to reduction operation", OverflowError or
    # "math range error", naming no parameter; ρ = ∞ (no privacy) is a valid RDP input.
    import math

    from fdp import mechanisms as M
    from fdp import rdp

    with pytest.raises(ValueError, match="utility vectors"):
        M.exponential([], [], 1.0)
    with pytest.raises(ValueError, match="rho and orders"):
        rdp.to_epsilon([], [], 1e-5)
    with pytest.raises(ValueError, match="d must be an integer in"):
        M.grr(1.0, 10**400)
    assert M.subsampled_eps(800.0, 0.5).eps == pytest.approx(800.0 + math.log(0.5), rel=1e-15)
    none = rdp.to_tradeoff([math.inf], [2.0])
    assert float(none(0.3)) == 0.0 and float(none(0.0)) == 0.0


def test_booleans_and_strings_are_not_numbers() -> None:
    # A hunt: check_scalar took True as 1.0 (σ = True calibrated and accounted as σ = 1) while
    # check_int rejects it; Accountant.delta('1') read δ(1) and delta(None) raised float()'s
    # own TypeError.
    with pytest.raises(TypeError, match="noise_multiplier"):
        fdp.Accountant().step(True, 0.01)
    with pytest.raises(TypeError, match="eps"):
        fdp.calibrate_gaussian(True, 1e-5)
    acc = fdp.Accountant().step(1.0, 0.01, steps=10)
    for bad in ("1", None):
        with pytest.raises(TypeError, match="eps"):
            acc.delta(bad)
    with pytest.raises(ValueError, match="eps"):
        acc.delta(float("nan"))


def test_losses_beyond_the_float_range_read_inf_or_a_safe_value_never_an_error() -> None:
    # A hunt: Laplace(1e300)^2 raised TypeError (its grid offset, o − h⌊o/h⌋, kept no digit
    # and the grid's indices left int64); DP-SGD with σ = 1e-160 raised "zero-size array" (G_μ's
    # masses read NaN where μ² overflows) and σ = 1e-8 at δ = 1e-300 "math domain error" (a
    # term's mass underflowed to 0 and was logged); the CLT functionals raised OverflowError or
    # read NaN; RDP raised OverflowError or read 0 for a positive ρ.
    from fdp import rdp

    lo, hi = (fdp.Laplace(1e300) ** 2).epsilon_bracket(0.1)
    # ε₂(δ) = 2μ − O(1) for μ ≫ 1 (the two +μ atoms carry Q-mass 1/4 > δ), 2e300 in floats
    assert lo <= hi and hi >= 2e300
    # DP-SGD, p = 1/2, T = 10: all ten steps sample with Q-probability 2^-10 ≫ δ, and then the
    # loss is 10 μ²/2 + O(μ), so ε(δ) ≥ 0.9999 · 5μ² (μ = 1/σ); ∞ where that overflows
    assert fdp.dpsgd(1e-8, 0.5, 10).epsilon(1e-300) >= 0.9999 * 5e16
    assert fdp.dpsgd(1e-160, 0.5, 10).epsilon(1e-5) == math.inf
    # E[L] = μ²/2 and κ₃ ≥ |E L|³ overflow: ∞, not an error or NaN
    assert fdp.Gaussian(1e200).kl() == math.inf and fdp.Gaussian(1e200).kappa2() == math.inf
    assert fdp.Gaussian(1e100).kappa3() == math.inf
    # ρ(λ) of a subsampled Gaussian at σ = 1e200 is ≈ λq²/(2σ²) > 0: tiny, positive, finite
    r = rdp.subsampled_gaussian(1e200, 0.5)
    assert np.all((r > 0) & (r < 1e-300))
    assert np.all(rdp.gaussian(1e-200) > 0)  # (λμ²/2 underflowed to 0)


def test_poisson_subsample_names_a_curve_that_is_not_one() -> None:
    # raised AttributeError ('str' object has no attribute 'kind'), as subsample does not
    for bad in ("x", None, 1.0, np.zeros(3)):
        with pytest.raises(TypeError, match="f must be a TradeOff"):
            fdp.poisson_subsample(bad, 0.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("approx", [
    lambda: fdp.edgeworth(fdp.Laplace(0.1)),
    lambda: fdp.clt.clt(fdp.Laplace(0.1), n=100).approx,
])
@pytest.mark.parametrize("kw", [{}, {"sample_rate": 0.1}])
def test_accountant_refuses_an_approximation(approx: Callable[[], fdp.TradeOff],
                                            kw: dict[str, Any]) -> None:
    """An Accountant reports guarantees: an approximation (CLT, Edgeworth) composed in made
    epsilon() return the approximation's value as a guarantee, and epsilon_bracket() raise
    AttributeError."""
    acc = fdp.Accountant()
    with pytest.raises(TypeError, match="curve must carry a guarantee.*approximation"):
        acc.compose(approx(), 3, **kw)
    assert acc.steps == 0
