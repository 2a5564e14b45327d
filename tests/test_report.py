"""fdp.report and the ``fdp report`` subcommand (fdp/cli_report.py)."""

from __future__ import annotations

import argparse
import json
import math

import pytest

import fdp
from fdp.cli_report import add_report_parser, cmd_report


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_report_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["report", *argv])


def test_report_contents_for_an_accountant() -> None:
    acc = fdp.Accountant().step(1.0, 0.01, steps=300).step(2.0, 0.01, steps=300)
    r = fdp.report(acc, deltas=(1e-5, 1e-6), records_per_user=[1, 2])
    d = r.to_dict()
    json.dumps(d)  # JSON-ready
    assert d["conventions"][0]["neighbours"] == "add-remove"
    assert any("Poisson sampling" in a for a in d["assumptions"])
    (lo5, hi5), (lo6, hi6) = d["epsilon"][0]["bracket"], d["epsilon"][1]["bracket"]
    assert 0 < lo5 <= hi5 < lo6 <= hi6
    assert d["mu"] == pytest.approx(math.sqrt(300 + 300 / 4))
    assert d["mu_tau"]["mu"] <= d["mu"] and d["mu_tau"]["tau"] < 1e-10
    tprs = [row["tpr"] for row in d["risk"]["tpr"]]
    assert [row["fpr"] for row in d["risk"]["tpr"]] == [1e-3, 1e-2, 0.1]
    assert tprs == sorted(tprs) and 0 < d["risk"]["advantage"] < 1
    k1, k2 = d["user_level"]
    assert k1["epsilon"][0]["eps"] == pytest.approx(hi5, rel=1e-9)
    assert k2["epsilon"][0]["eps"] > hi5 and k2["mu"] == pytest.approx(2 * d["mu"])
    assert set(d["references"]) >= {"fdp", "poisson", "engine", "gdp", "risk", "group"}
    md = r.markdown()
    for heading in ("## Assumptions", "## (ε, δ)", "## Gaussian DP", "## Attack risk",
                    "## User-level", "## References"):
        assert heading in md
    assert str(r) == md


def test_report_from_parameters_and_curves() -> None:
    r = fdp.report(noise_multiplier=2.0, sample_rate=0.01, steps=100, sampling="uniform",
                   deltas=(1e-5,))
    assert r.to_dict()["conventions"][0]["neighbours"] == "replace-one"
    assert "uniform" in r.references and "poisson" not in r.references
    g = fdp.report(fdp.Gaussian(1.0), deltas=(1e-5,))
    assert g.epsilon[0]["bracket"] == [pytest.approx(4.377178, abs=1e-6)] * 2
    assert g.mu == 1.0
    clt = fdp.report(fdp.dpsgd_clt(1.0, 0.01, 100), deltas=(1e-5,))
    assert any("APPROXIMATION" in a for a in clt.assumptions)
    with pytest.raises(ValueError):
        fdp.report()
    with pytest.raises(ValueError):
        fdp.report(fdp.Gaussian(1.0), noise_multiplier=1.0)
    with pytest.raises(TypeError):
        fdp.report("nope")
    with pytest.raises(ValueError):
        fdp.report(fdp.Gaussian(1.0), deltas=(2.0,))


def test_cli_report_from_parameters_plan_and_state(tmp_path: object) -> None:
    out = cmd_report(_parse(["--noise-multiplier", "1.0", "--sample-rate", "0.01",
                             "--steps", "200", "--delta", "1e-5", "--fpr", "0.01"]))
    assert out["text"].startswith("# Privacy report")
    assert len(out["epsilon"]) == 1 and out["risk"]["tpr"][0]["fpr"] == 0.01
    json.dumps({k: v for k, v in out.items() if k != "text"})
    planned = cmd_report(_parse(["--noise-multiplier", "2", "--dataset-size", "1000",
                                 "--batch-size", "300", "--epochs", "2", "--sampling", "shuffle",
                                 "--delta", "1e-5"]))
    assert planned["plan"]["steps"] == 8 and "does not divide" in planned["text"]
    path = tmp_path / "acc.json"  # type: ignore[operator]
    acc = fdp.Accountant().step(1.0, 0.01, steps=200)
    path.write_text(acc.to_json())
    saved = cmd_report(_parse(["--state", str(path), "--delta", "1e-5", "--fpr", "0.01"]))
    assert saved["epsilon"] == out["epsilon"]
    with pytest.raises(ValueError, match="--state or DP-SGD"):
        cmd_report(_parse(["--state", str(path), "--noise-multiplier", "1"]))
    with pytest.raises(ValueError, match="--sample-rate and --steps"):
        cmd_report(_parse(["--noise-multiplier", "1"]))
    # a missing file or an entry without its fields: a clear error, not an internal one
    with pytest.raises(ValueError, match="--state: cannot read"):
        cmd_report(_parse(["--state", str(path) + ".missing"]))
    path.write_text('{"fdp_accountant": 1, "history": [{"kind": "dpsgd"}]}')
    with pytest.raises(ValueError, match="lacks noise_multiplier"):
        cmd_report(_parse(["--state", str(path)]))


def test_report_rejects_bad_tol_and_fractional_records() -> None:
    # tol = NaN was accepted, and records_per_user = 1.5 silently became 1
    g = fdp.Gaussian(1.0)
    with pytest.raises(ValueError, match="tol"):
        fdp.report(g, tol=float("nan"))
    with pytest.raises(TypeError, match="records_per_user"):
        fdp.report(g, records_per_user=1.5)
    with pytest.raises(TypeError, match="records_per_user"):
        fdp.report(g, records_per_user=[2, 2.5])
    with pytest.raises(ValueError, match="records_per_user"):
        fdp.report(g, records_per_user=[2, 0])


def test_cli_report_wired_into_main(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fdp import cli

    if "report" not in cli.SUBCOMMANDS:  # wired by fdp/cli.py's owner; simulate it until then
        monkeypatch.setitem(cli.SUBCOMMANDS, "report", (add_report_parser, cmd_report))
    rc = cli.main(["report", "--noise-multiplier", "1.0", "--sample-rate", "0.01",
                   "--steps", "100", "--delta", "1e-5", "--json"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["epsilon"][0]["delta"] == 1e-5


def test_markdown_rounds_guarantees_toward_less_privacy() -> None:
    """The Markdown's four digits never show less than is certified: the ε upper end, μ, τ and
    the risk bounds are rounded up, the ε lower end down (to nearest, a certified ε of 1.23449
    printed as 1.234)."""
    import re

    r = fdp.report(fdp.Gaussian(1.3), deltas=(1e-5, 1e-7, 1e-9))
    d, md = r.to_dict(), r.markdown()
    rows = re.findall(r"^\| ([0-9.e+-]+) \| ([0-9.e+-]+) \| ([0-9.e+-]+) \|$", md, re.M)
    assert len(rows) == 3
    for (_, lo_s, hi_s), e in zip(rows, d["epsilon"], strict=True):
        lo, hi = e["bracket"]
        assert float(lo_s) <= lo and float(hi_s) >= hi
    mu_s = re.search(r"Certified μ = ([0-9.e+-]+)", md)
    assert mu_s is not None and float(mu_s.group(1)) >= d["mu"]
    tprs = re.findall(r"^\| [0-9.e+-]+ \| ([0-9.e+-]+) \|$", md, re.M)
    assert len(tprs) == len(d["risk"]["tpr"])
    assert all(float(t) >= row["tpr"] for t, row in zip(tprs, d["risk"]["tpr"], strict=True))
    adv = re.search(r"Largest advantage TPR − FPR: ([0-9.e+-]+)", md)
    assert adv is not None and float(adv.group(1)) >= d["risk"]["advantage"]


def test_markdown_prints_inputs_that_read_back_exactly() -> None:
    # δ and FPR were printed to 4 digits, to nearest, next to the ε and TPR computed at the
    # unrounded input: δ = 2.817440941094162e-06 printed 2.817e-06 beside ε ≤ 4.664, while the
    # true ε(2.817e-06) of G_1 is 4.66401948 (mpmath below); defaults keep their 4 digits
    import mpmath as mp

    d, a = 2.817440941094162e-06, 0.0026478026810932594
    md = fdp.report(fdp.Gaussian(1.0), deltas=(d, 1e-5), fprs=(a, 0.01)).markdown()
    rows = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 3 and cells[0][:1].isdigit():
            rows[float(cells[0])] = cells
        if len(cells) == 2 and cells[0][:1].isdigit():
            rows[float(cells[0])] = cells
    assert d in rows and a in rows and "| 1.000e-05 |" in md and "| 0.01 |" in md
    with mp.workdps(40):
        def delta_g1(e: mp.mpf) -> mp.mpf:
            return mp.ncdf(-e + mp.mpf(1) / 2) - mp.e**e * mp.ncdf(-e - mp.mpf(1) / 2)

        # the printed ε upper end at the printed δ: δ_1(ε_printed) ≤ δ_printed
        assert delta_g1(mp.mpf(rows[d][2])) <= mp.mpf(rows[d][0])
        # the printed TPR bound at the printed FPR: TPR ≤ 1 − G_1(FPR)
        x = mp.mpf(rows[a][0])
        assert mp.mpf(rows[a][1]) >= 1 - mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * x) - 1)


def test_report_json_writes_infinity_as_every_command_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # (the README's JSON section: an infinite number is the string "Infinity"; the report wrote
    # "inf", which JavaScript's Number() reads as NaN)
    from fdp.cli import main

    rc = main(["--json", "report", "--noise-multiplier", "1", "--sample-rate", "1",
               "--steps", "1000000"])
    out = capsys.readouterr().out
    assert rc == 0 and '"Infinity"' in out and '"inf"' not in out
    json.loads(out)
