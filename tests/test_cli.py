"""Tests of the fdp command line: every subcommand's --json parses, bad input exits 2."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from typing import Any

import pytest

import fdp
from fdp.cli import SUBCOMMANDS, main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def test_demo_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["demo"], capsys)
    assert rc == 0 and "1-GDP" in out and "Laplace" in out
    rc, out, _ = run(["demo", "--json"], capsys)
    data = json.loads(out)
    assert data["gdp_table"][2] == {"eps": 1.0, "delta": pytest.approx(fdp.gdp.delta(1.0, 1.0))}
    lo, hi = data["laplace_100"]["eps_lower"], data["laplace_100"]["eps_upper"]
    assert lo <= hi


def test_gdp_to_dp_matches_library(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["--json", "gdp-to-dp", "--mu", "1.5", "--delta", "1e-7"], capsys)
    assert rc == 0 and json.loads(out)["eps"] == pytest.approx(fdp.gdp.epsilon(1.5, 1e-7))
    rc, out, _ = run(["gdp-to-dp", "--mu", "1.5", "--eps", "2", "--json"], capsys)
    assert json.loads(out)["delta"] == pytest.approx(fdp.gdp.delta(1.5, 2.0))


def test_dp_to_gdp(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["dp-to-gdp", "--eps", "1", "--delta", "1e-5", "--json"], capsys)
    mu = json.loads(out)["mu"]
    assert fdp.gdp.delta(mu, 1.0) == pytest.approx(1e-5, rel=1e-9)


@pytest.mark.parametrize(
    "args,name",
    [
        (["gdp-to-dp", "--mu", "-1", "--delta", "1e-5"], "mu"),
        (["gdp-to-dp", "--mu", "1", "--delta", "2"], "delta"),
        (["gdp-to-dp", "--mu", "nan", "--eps", "1"], "mu"),
        (["dp-to-gdp", "--eps", "-1", "--delta", "0.1"], "eps"),
        (["gdp-to-dp", "--mu", "x", "--delta", "0.1"], "--mu"),
        (["gdp-to-dp", "--mu", "1"], "--delta"),
        (["no-such-command"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(args, capsys)
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("fdp: error:") and name in err


def test_every_subcommand_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for name in SUBCOMMANDS:
        rc, out, _ = run([name, "--help"], capsys)
        assert rc == 0 and "usage" in out


def test_python_dash_m() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "fdp", "gdp-to-dp", "--mu", "1", "--eps", "1", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0
    assert json.loads(res.stdout)["delta"] == pytest.approx(fdp.gdp.delta(1.0, 1.0))


def test_a_closed_pipe_ends_quietly() -> None:
    """``fdp … | head -1`` where head has left: no BrokenPipeError traceback (a hunt)."""
    r, w = os.pipe()
    os.close(r)  # the reader is gone before fdp writes
    try:
        res = subprocess.run(
            [sys.executable, "-m", "fdp", "curve", "gaussian:1"],
            stdout=w, stderr=subprocess.PIPE, text=True, check=False, timeout=120,
        )
    finally:
        os.close(w)
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr
    assert res.returncode == 1


def test_dpsgd_mnist_example(capsys: pytest.CaptureFixture[str]) -> None:
    # issue 7: the DRS/BDLS deployment example in one command
    rc, out, _ = run(
        [
            "dpsgd",
            "--noise-multiplier",
            "1.1",
            "--batch-size",
            "256",
            "--dataset-size",
            "60000",
            "--epochs",
            "60",
            "--delta",
            "1e-5",
            "--json",
        ],
        capsys,
    )
    d = json.loads(out)
    assert rc == 0 and d["steps"] == 14063
    assert d["eps_lower"] <= 2.3817 <= d["eps"]  # PEERS.md reference
    assert d["eps_clt"] < d["eps_lower"] < d["eps"] < d["eps_rdp"]
    assert d["mu_certified"] > d["mu_clt"]


def test_compare_curve_and_calibrate(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(
        ["compare", "--curve", "laplace:0.1", "--count", "100", "--delta", "1e-6", "--json"], capsys
    )
    d = json.loads(out)
    assert rc == 0 and [r["method"] for r in d["rows"]][0] == "exact"
    rc, out, _ = run(
        ["calibrate", "--mechanism", "gaussian", "--eps", "1", "--delta", "1e-5", "--json"], capsys
    )
    assert json.loads(out)["sigma"] == pytest.approx(fdp.gdp.sigma(1.0, 1e-5))
    rc, out, _ = run(["curve", "rr:1.0986122886681098", "--alpha", "0.1", "--json"], capsys)
    assert json.loads(out)["beta"][0] == pytest.approx(0.7, abs=1e-9)
    rc, _, err = run(["curve", "nope:1"], capsys)
    assert rc == 2 and "curve spec" in err
    rc, _, err = run(["dpsgd", "--noise-multiplier", "1", "--steps", "10"], capsys)
    assert rc == 2 and "--sample-rate" in err


def test_curve_plot(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    pytest.importorskip("fdp.plot")
    pytest.importorskip("matplotlib")
    target = tmp_path / "g.png"
    rc, _, _ = run(["curve", "gaussian:1", "--plot", str(target)], capsys)
    assert rc == 0 and target.stat().st_size > 1000


# ---------------------------------------------------------------- DP-SGD conventions (issue 12, 8)
DP = ["--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "1000", "--delta", "1e-5"]


def test_dpsgd_uniform_is_replace_one(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["dpsgd", *DP, "--sampling", "uniform", "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["neighbours"] == "replace-one" and d["sensitivity"] == 2.0
    assert 14.7 < d["eps_lower"] <= d["eps"] < 14.9  # was ≈ 2.20: one step is C_p(G_2)
    assert d["eps_rdp"] >= d["eps"]  # WBK Thm 9 bound, a valid (looser) bound
    assert "noise multiplier relative to the clipping norm" in d["noise"]
    rc, out, _ = run(["dpsgd", *DP, "--sampling", "uniform"], capsys)
    assert (
        "neighbours: replace-one (fixed-size batches without replacement), sensitivity 2·C, "
        "noise std σ·C on the sum" in out
    )
    assert "noise std σ·C on the sum" in out and "replace-one" in out and "certified μ" in out
    # DRS's convention: noise relative to 2C, reproduced with --sensitivity 1
    rc, out, _ = run(
        ["dpsgd", *DP, "--sampling", "uniform", "--sensitivity", "1", "--json"], capsys
    )
    d1 = json.loads(out)
    assert d1["sensitivity"] == 1.0 and 2.1 < d1["eps_lower"] < 2.3 and "claim" in d1["conventions"]


def test_dpsgd_poisson_states_add_remove(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["dpsgd", *DP], capsys)
    assert rc == 0
    assert (
        "neighbours: add-remove (Poisson sampling), sensitivity 1·C, noise std σ·C on the sum"
        in out
    )


def test_compare_uniform_differs_and_states_the_relation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, out, _ = run(["compare", *DP, "--json"], capsys)
    poisson = json.loads(out)
    rc, out, _ = run(["compare", *DP, "--sampling", "uniform", "--json"], capsys)
    uniform = json.loads(out)
    assert rc == 0 and uniform["neighbours"] == "replace-one" and uniform["sensitivity"] == 2.0
    assert poisson["neighbours"] == "add-remove" and poisson["sensitivity"] == 1.0
    ex_u = next(r for r in uniform["rows"] if r["method"] == "exact")
    ex_p = next(r for r in poisson["rows"] if r["method"] == "exact")
    assert ex_u["eps_lower"] > 5 * ex_p["eps"]  # --sampling uniform used to be ignored
    rdp_u = next(r for r in uniform["rows"] if r["method"] == "rdp")
    assert rdp_u["eps"] >= ex_u["eps"] and "Wang" in rdp_u["note"]
    assert uniform["conventions"].startswith(
        "neighbours: replace-one (fixed-size batches without replacement), sensitivity 2·C"
    )
    assert "neighbours: replace-one" in uniform["workload"] or "uniform" in uniform["workload"]


def test_calibrate_states_conventions(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["calibrate", "--sample-rate", "0.1", "--steps", "1", "--eps", "1", "--delta", "1e-5"]
    rc, out, _ = run([*args, "--sampling", "uniform", "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["neighbours"] == "replace-one" and d["sensitivity"] == 2.0
    assert d["noise_multiplier"] == pytest.approx(
        fdp.calibrate_dpsgd(0.1, 1, eps=1.0, delta=1e-5, sampling="uniform")
    )
    rc, out, _ = run(args, capsys)
    assert rc == 0 and "neighbours: add-remove (Poisson sampling), sensitivity 1·C" in out
    rc, out, _ = run(
        ["calibrate", "--mechanism", "gaussian", "--eps", "1", "--sensitivity", "2", "--json"],
        capsys,
    )
    assert json.loads(out)["sigma"] == pytest.approx(2 * fdp.gdp.sigma(1.0, 1e-5))


@pytest.mark.parametrize(
    "args,flag",
    [
        (["dpsgd", *DP, "--neighbours", "replace-one"], "--neighbours replace-one"),
        (["dpsgd", *DP, "--sampling", "uniform", "--neighbours", "add-remove"], "--neighbours"),
        (["compare", *DP, "--neighbours", "replace-one"], "--neighbours replace-one"),
        (["dpsgd", *DP, "--sensitivity", "0"], "--sensitivity|'0'"),
        (["dpsgd", *DP, "--sensitivity", "-1"], "--sensitivity|'-1'"),
        (["compare", *DP, "--sensitivity", "nan"], "--sensitivity|'nan'"),
        (["calibrate", *DP, "--eps", "1", "--sensitivity", "inf"], "--sensitivity|'inf'"),
        (["calibrate", *DP[2:], "--eps", "1", "--neighbours", "replace-one"], "--neighbours"),
        (["dpsgd", *DP, "--neighbours", "swap"], "--neighbours"),
        (["compare", "--curve", "gaussian:1", "--sampling", "uniform"], "--sampling uniform"),
        (
            ["calibrate", "--mechanism", "gaussian", "--eps", "1", "--neighbours", "add-remove"],
            "--neighbours",
        ),
    ],
)
def test_bad_conventions_exit_2(
    args: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(args, capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fdp: error:")
    assert all(part in err for part in flag.split("|"))


# ---------------------------------------------------------------- issue 14: strict JSON, --version
def _strict(text: str) -> Any:
    def no_constant(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=no_constant)


def _walk(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [v for val in x.values() for v in _walk(val)]
    if isinstance(x, list):
        return [v for val in x for v in _walk(val)]
    return [x]


STRICT = [
    ["demo"],
    ["gdp-to-dp", "--mu", "1", "--delta", "0"],  # ε = inf
    ["gdp-to-dp", "--mu", "1e308", "--delta", "1e-5"],  # ε beyond the float range
    ["gdp-to-dp", "--mu", "1", "--eps", "2000"],  # δ underflows to 0
    ["dp-to-gdp", "--eps", "0", "--delta", "0"],
    ["dp-to-gdp", "--eps", "1000", "--delta", "0"],
    ["curve", "epsdelta:1,0.1", "--alpha", "0,0.5,1"],
    ["curve", "laplace:0.5", "--count", "3", "--alpha", "1e-9,0.3"],
    ["dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10"],
    ["compare", "--curve", "identity", "--count", "5"],  # rows not applicable: null
    ["compare", "--curve", "gaussian:0.5", "--count", "2", "--curve", "l:0.5", "--count", "1"],
    ["compare", "--noise-multiplier", "2", "--sample-rate", "0.1", "--steps", "10"],
    ["calibrate", "--mechanism", "gaussian", "--eps", "1", "--count", "4"],
    ["calibrate", "--mechanism", "laplace", "--eps", "1", "--delta", "0", "--count", "10"],
    ["calibrate", "--sample-rate", "0.1", "--steps", "1", "--eps", "1", "--delta", "1e-5"],
    ["report", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "100"],
]


@pytest.mark.parametrize("args", STRICT, ids=[" ".join(a) for a in STRICT])
def test_json_is_strict(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(["--json", *args], capsys)
    assert rc == 0 and err == ""
    data = _strict(out)
    assert isinstance(data, dict) and "text" not in data
    for v in _walk(data):
        assert v is None or isinstance(v, (str, bool, int, float))
        if isinstance(v, float):
            assert math.isfinite(v)


def test_every_subcommand_has_a_strict_json_case() -> None:
    # a subcommand added later needs its own entry in STRICT
    assert {a[0] for a in STRICT} >= {
        "demo", "gdp-to-dp", "dp-to-gdp", "curve", "dpsgd", "compare", "calibrate"
    }  # fmt: skip


def test_json_encodes_infinite_and_undefined_values(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["--json", "gdp-to-dp", "--mu", "1", "--delta", "0"], capsys)
    assert _strict(out)["eps"] == "Infinity" and float(_strict(out)["eps"]) == math.inf
    _, out, _ = run(["--json", "compare", "--curve", "identity", "--count", "5"], capsys)
    rows = {r["method"]: r for r in _strict(out)["rows"]}
    assert rows["exact"]["eps"] == 0.0
    na = [r for r in rows.values() if r["kind"] == "not applicable"]
    assert na and all(r["eps"] is None and r["note"] for r in na)
    _, out, _ = run(["--json", "dp-to-gdp", "--eps", "1000", "--delta", "0"], capsys)
    d = _strict(out)
    assert d["mu"] == 0.0 and d["mu_dominating"] == pytest.approx(89.2314954639, rel=1e-9)
    _, out, _ = run(["--json", "dp-to-gdp", "--eps", "0", "--delta", "0"], capsys)
    assert "-0" not in out and _strict(out)["mu_dominating"] == 0.0


def test_text_output_never_shows_nan(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(["compare", "--curve", "identity", "--count", "5"], capsys)
    assert rc == 0 and err == ""
    eps_column = [line.split()[1] for line in out.splitlines()[2:]]
    assert "n/a" in eps_column and not any("nan" in e.lower() for e in eps_column)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(["--version"], capsys)
    assert rc == 0 and out == f"fdp {fdp.__version__}\n" and err == ""


def test_compare_pairs_counts_with_curves_by_position(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run(
        ["compare", "--curve", "gaussian:0.3", "--curve", "gaussian:0.4", "--count", "9"], capsys
    )
    assert rc == 2 and "the i-th --count belongs to the i-th --curve" in err
    rc, out, _ = run(
        ["--json", "compare", "--curve", "gaussian:0.3", "--count", "4"]
        + ["--curve", "gaussian:0.4", "--count", "9", "--delta", "1e-6"],
        capsys,
    )
    d = _strict(out)
    assert rc == 0 and d["workload"] == "Gaussian(mu=0.3)^4 ⊗ Gaussian(mu=0.4)^9"
    exact = next(r for r in d["rows"] if r["method"] == "exact")
    assert exact["eps"] == pytest.approx(fdp.gdp.epsilon(1.3416407864998738, 1e-6), rel=1e-6)


def test_no_warnings_on_valid_input(capsys: pytest.CaptureFixture[str]) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc, _, err = run(["compare", "--curve", "identity", "--count", "5"], capsys)
    assert rc == 0 and err == ""


def test_negative_exponent_values_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse alone would say "expected one argument" for "--eps -1e-3"
    rc, _, err = run(["gdp-to-dp", "--mu", "1", "--eps", "-1e-3"], capsys)
    assert rc == 2 and "--eps" in err and "'-1e-3'" in err


def test_internal_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import fdp.cli as cli

    def boom(args: Any) -> dict[str, Any]:
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(cli.SUBCOMMANDS, "demo", (cli.SUBCOMMANDS["demo"][0], boom))
    monkeypatch.delenv("FDP_DEBUG", raising=False)
    rc, out, err = run(["demo"], capsys)
    assert rc == 1 and out == "" and err.count("\n") == 1 and "ZeroDivisionError: boom" in err


def test_plot_write_failure_is_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    pytest.importorskip("matplotlib")
    target = tmp_path / "is_a_dir.png"
    target.mkdir()
    rc, out, err = run(["curve", "gaussian:1", "--plot", str(target)], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "--plot" in err


def test_text_output_rounds_guarantees_toward_less_privacy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # %.6g rounded to nearest: gdp-to-dp printed ε = 3.09943 for the exact 3.0994303 (δ there
    # is 1.000004e-10 > 1e-10), calibrate σ = 3.73063 for 3.7306316 (helper hunt); dp-to-gdp
    # --delta 0 printed "f_{ε,0} ≥ G_μ for μ ≤ 1.23203", reversed and rounded down: G_μ falls
    # as μ grows, so it holds for μ ≥ 1.2320354 (a second hunt). References in mpmath.
    import re

    import mpmath as mp

    def num(pattern: str, text: str) -> float:
        return float(re.findall(pattern, text)[-1])

    with mp.workdps(40):
        def delta(mu: object, eps: object) -> object:
            return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)

        _, out, _ = run(["gdp-to-dp", "--mu", "0.5", "--delta", "1e-10"], capsys)
        eps = num(r"is \(([0-9.e+-]+),", out)
        assert delta(mp.mpf("0.5"), mp.mpf(eps)) <= mp.mpf("1e-10")
        _, out, _ = run(["calibrate", "--mechanism", "gaussian", "--eps", "1", "--delta", "1e-5"],
                        capsys)
        sigma = num(r"σ = ([0-9.e+-]+)", out)
        assert delta(1 / mp.mpf(sigma), mp.mpf(1)) <= mp.mpf("1e-5")
        _, out, _ = run(["dp-to-gdp", "--eps", "1", "--delta", "0"], capsys)
        assert "μ ≤" not in out.split(";")[1]
        # f_{1,0} ≥ G_μ iff G_μ(α*) ≤ α* at f's kink α* = 1/(1 + e), iff Φ(−μ/2) ≤ α*
        star = num(r"μ ≥ ([0-9.e+-]+)", out)
        assert mp.ncdf(-mp.mpf(star) / 2) <= 1 / (1 + mp.e)
        for e in ("1e-10", "0.3", "1", "30", "1000"):  # (the JSON value too, and tight)
            _, out, _ = run(["--json", "dp-to-gdp", "--eps", e, "--delta", "0"], capsys)
            star = mp.mpf(_strict(out)["mu_dominating"])
            alpha = 1 / (1 + mp.exp(mp.mpf(e)))
            exact = -2 * mp.sqrt(2) * mp.erfinv(2 * alpha - 1)
            assert mp.ncdf(-star / 2) <= alpha and star <= exact * (1 + 1e-12) + 1e-12, e
        _, out, _ = run(["curve", "gaussian:1", "--alpha", "0.1,0.25"], capsys)
        for a, b in re.findall(r"^ +([0-9.]+) +([0-9.e+-]+)$", out, re.M):  # β rounded down
            a_ = mp.mpf(a)
            assert mp.mpf(b) <= mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * a_ - 1) - 1), (a, b)


def test_dpsgd_text_rounds_guarantees_toward_less_privacy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The six decimals of `fdp dpsgd` never show less than is certified: ε and its bracket's
    upper end, the RDP bound and the μ's rounded up, the lower end down (to nearest, ε
    2.3820868 would print 2.382087 and 2.3820863 would print 2.382086, below it)."""
    import re

    argv = ["dpsgd", "--noise-multiplier", "1.1", "--sample-rate", "0.0042666667", "--steps",
            "14063"]
    rc, text, _ = run(argv, capsys)
    rc_j, out, _ = run([*argv, "--json"], capsys)
    assert rc == rc_j == 0
    d = json.loads(out)
    hi, lo = (float(x) for x in re.search(
        r"exact f-DP +ε = \S+ +\(certified bracket \[([0-9.]+), ([0-9.]+)\]", text).groups()[::-1])
    assert hi >= d["eps"] and lo <= d["eps_lower"]
    rdp_s = re.search(r"RDP +ε = ([0-9.]+)", text)
    assert rdp_s is not None and float(rdp_s.group(1)) >= d["eps_rdp"]
    mu_s = re.search(r"certified μ +μ = ([0-9.]+)", text)
    assert mu_s is not None and float(mu_s.group(1)) >= d["mu_certified"]
    mt_s = re.search(r"μ-GDP w.p. +μ = ([0-9.]+)", text)
    assert mt_s is not None and float(mt_s.group(1)) >= d["mu_delta"]["mu"]


def test_printed_inputs_read_back_as_the_inputs_a_guarantee_is_computed_at(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # An input echoed next to a result must be the input the result was computed at, or the
    # printed pair can claim more privacy than is true: `fdp curve gaussian:1 --alpha 0.1234567`
    # printed α = 0.123457 next to β(0.1234567) = 0.56272394, 5.8e-7 above the true
    # G_1(0.123457) (mpmath below)
    import mpmath as mp

    rc, out, _ = run(["curve", "gaussian:1", "--alpha", "0.1234567"], capsys)
    assert rc == 0
    a_txt, b_txt = out.splitlines()[-1].split()
    with mp.workdps(40):
        a = mp.mpf(a_txt)
        truth = mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * a) - 1)  # G_1(α) = Φ(Φ⁻¹(1 − α) − 1)
        assert mp.mpf(b_txt) <= truth
    # the δ of a GDP conversion, and DP-SGD's sample rate from a batch and dataset size
    rc, out, _ = run(["gdp-to-dp", "--mu", "1.23456789", "--delta", "1.2345678e-5"], capsys)
    assert rc == 0 and "1.23456789-GDP" in out and "1.2345678e-05)-DP" in out
    rc, out, _ = run(["dpsgd", "--noise-multiplier", "1.1", "--batch-size", "256",
                      "--dataset-size", "60000", "--steps", "10", "--delta", "1e-5"], capsys)
    assert rc == 0 and "p = 256/60000," in out and "δ = 1e-05" in out
    rc, out, _ = run(["dpsgd", "--noise-multiplier", "1.1", "--sample-rate", "0.00426666667",
                      "--steps", "10"], capsys)
    assert rc == 0 and "p = 0.00426666667," in out


# ------------------------------------------------------------- report, warnings, formatting
def test_report_repeatable_flags_and_settings(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(["report", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps",
                        "100", "--delta", "1e-5", "--delta", "1e-7", "--fpr", "0.01", "--fpr",
                        "0.1", "--json"], capsys)
    assert rc == 0, err
    data = json.loads(out)
    assert [row["delta"] for row in data["epsilon"]] == [1e-5, 1e-7]
    assert [row["fpr"] for row in data["risk"]["tpr"]] == [0.01, 0.1]
    # the statement names σ and p (a privacy claim without them says nothing)
    assert "σ = 1, p = 0.01" in data["summary"]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--noise-multiplier", "-1", "--sample-rate", "0.01", "--steps", "10"],
         "argument --noise-multiplier"),
        (["--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10", "--delta", "abc"],
         "argument --delta"),
        (["--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10", "--fpr", "2"],
         "argument --fpr"),
        (["--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "100000000"],
         "argument --steps"),
        (["--noise-multiplier", "0.01", "--sample-rate", "0.01", "--steps", "10"],
         "argument --noise-multiplier: σ/sensitivity"),
        (["--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "100",
          "--dataset-size", "1000", "--batch-size", "100", "--epochs", "5"],
         "--dataset-size 1000 conflicts"),
        (["--noise-multiplier", "1", "--sample-rate", "0.01"], "give --steps too"),
        (["--noise-multiplier", "1", "--dataset-size", "60000", "--batch-size", "1",
          "--epochs", "1000"], "argument --epochs"),
        (["--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10", "--tol", "0"],
         "argument --tol"),
        (["--state", "x.json", "--sensitivity", "1"], "either --state or DP-SGD"),
    ],
)
def test_report_bad_input_names_the_flag(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(["report", *args], capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fdp: error: ") and needle in err, err


def test_warnings_are_one_line_on_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    from fdp import cli

    def noisy(args: Any) -> dict[str, Any]:
        for _ in range(2):  # (the same caveat twice is said once)
            warnings.warn("a caveat\nover two lines", fdp.AccuracyWarning, stacklevel=1)
        warnings.warn("overflow inside the engine", RuntimeWarning, stacklevel=1)
        return {"x": 1.0, "text": "result"}

    add, _ = cli.SUBCOMMANDS["demo"]
    monkeypatch.setitem(cli.SUBCOMMANDS, "demo", (add, noisy))
    rc, out, err = run(["demo"], capsys)
    assert rc == 0 and out == "result\n"
    assert err == "fdp: warning: a caveat over two lines\n"
    rc, out, err = run(["demo", "--json"], capsys)
    assert json.loads(out) == {"x": 1.0} and err.count("fdp: warning:") == 1


def test_edgeworth_caveat_is_a_warning_line(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(["compare", "--curve", "laplace:10", "--count", "100"], capsys)
    assert rc == 0 and "no distribution" in out
    assert all(line.startswith("fdp: warning: ") for line in err.splitlines())
    assert ".py:" not in err  # (no source paths)


def test_fixed_point_only_for_moderate_numbers() -> None:
    from fdp.cli import _f6

    assert _f6(3.3601464272701701e49, "up") == "3.36015e+49"
    assert float(_f6(1.2345e-7, "down")) == 1.2345e-7 and "e-" in _f6(1.2345e-7, "down")
    assert _f6(2.5, "up") == "2.500000" and _f6(0.0) == "0.000000"


def test_gdp_to_dp_below_the_float_range_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    import mpmath as mp

    rc, out, _ = run(["gdp-to-dp", "--mu", "1", "--eps", "40"], capsys)
    assert rc == 0 and "below the float range" in out and "exp(-788.423)" in out
    # the exponent against mpmath: log δ_1(40) = log(Φ(−39.5) − e^40 Φ(−40.5))
    mp.mp.dps = 60
    exact = mp.log(mp.ncdf(-39.5) - mp.exp(40) * mp.ncdf(-40.5))
    assert f"{float(exact):.6g}" == "-788.423"
    rc, out, _ = run(["gdp-to-dp", "--mu", "1", "--eps", "40", "--json"], capsys)
    assert json.loads(out)["delta"] == 5e-324  # (the least float bounds it from above)
    rc, out, _ = run(["gdp-to-dp", "--mu", "1", "--eps", "38.5"], capsys)
    assert "below the float range" not in out  # (7.4e-318 is a float, if subnormal)


def test_curve_bracket_prints_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["curve", "laplace:0.5", "--count", "10", "--alpha", "0.1,0.5", "--json"],
                     capsys)
    data = json.loads(out)
    assert data["kind"] == "bracket"
    assert all(b <= u for b, u in zip(data["beta"], data["beta_upper"], strict=True))
    h = fdp.compose(fdp.Laplace(0.5), repeat=10)
    assert data["beta_upper"] == [float(h.upper(0.1)), float(h.upper(0.5))]
    rc, out, _ = run(["curve", "laplace:0.5", "--count", "10"], capsys)
    assert "lower: the guarantee" in out and "upper" in out
    rc, out, _ = run(["curve", "identity", "--alpha", "0.25,0.5", "--json"], capsys)
    assert json.loads(out)["beta"] == [0.75, 0.5]  # (exact where 1 − α is a float)


def test_plain_fdp_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run([], capsys)
    assert rc == 2 and all(name in err for name in SUBCOMMANDS) and err.count("\n") == 1


def test_calibrate_takes_no_noise_multiplier(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run(["calibrate", "--sample-rate", "0.01", "--steps", "10", "--eps", "1",
                      "--noise-multiplier", "2"], capsys)
    assert rc == 2 and "is what calibrate computes" in err
    rc, out, _ = run(["calibrate", "--help"], capsys)
    assert "--noise-multiplier NOISE" not in out  # (not offered: it is the answer)
    rc, out, _ = run(["dpsgd", "--help"], capsys)
    assert "--mechanism" not in out and "laplace" not in out  # (calibrate's options only)
    rc, _, err = run(["dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps",
                      "10", "--delta", "0"], capsys)
    assert rc == 2 and "argument --delta" in err and "(0, 1)" in err


def test_calibrate_mu_says_subsampling_does_not_lower_it(
    capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = run(["calibrate", "--sample-rate", "0.01", "--steps", "1000", "--mu", "1"],
                     capsys)
    assert rc == 0 and "subsampling does not lower it" in out
    rc, out, _ = run(["calibrate", "--sample-rate", "0.01", "--steps", "1000", "--mu", "1",
                      "--json"], capsys)
    # the strict μ of T steps of G_{1/σ} is √T/σ (DRS Cor 2.15 and the sampled-every-step
    # tail): σ = √1000 for μ = 1, rounded up (less privacy)
    s = json.loads(out)["noise_multiplier"]
    assert math.sqrt(1000) <= s <= math.sqrt(1000) * (1 + 1e-9)
