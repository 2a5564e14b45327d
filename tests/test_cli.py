"""Tests of the fdp command line: every subcommand's --json parses, bad input exits 2."""

from __future__ import annotations

import json
import subprocess
import sys

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
    target = tmp_path / "g.png"
    rc, _, _ = run(["curve", "gaussian:1", "--plot", str(target)], capsys)
    assert rc == 0 and target.stat().st_size > 1000
