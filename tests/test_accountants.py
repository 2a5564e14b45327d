"""fdp.compare: every method's row, bound/approximation labels, ordering of bounds."""

from __future__ import annotations

import json

import pytest

import fdp
from fdp.accountants import compare


def test_workload_rows_and_order() -> None:
    c = compare([(fdp.Laplace(0.1), 1000)], delta=1e-6)
    methods = [r.method for r in c.rows]
    assert methods == ["exact", "gdp_clt", "edgeworth", "rdp", "advanced"]
    ex = c.row("exact")
    assert ex.eps_lower <= 18.9503 <= ex.eps  # PEERS: ≈ 18.950
    # every certified upper bound is ≥ the certified lower bound on the exact ε
    for r in c.rows:
        if r.kind == "certified upper bound":
            assert r.eps >= ex.eps_lower
    assert c.row("rdp").eps > ex.eps and c.row("advanced").eps > c.row("rdp").eps
    assert c.row("gdp_clt").kind == "approximation"
    assert "approximation" in str(c) and "certified" in str(c)
    json.dumps(c.to_dict())
    assert set(c.curves) >= {"exact", "gdp_clt", "edgeworth", "rdp"}


def test_dpsgd_rows() -> None:
    c = compare(
        noise_multiplier=1.0,
        sample_rate=0.01,
        steps=1000,
        delta=1e-5,
        methods=["exact", "gdp_clt", "rdp"],
    )
    ex = c.row("exact")
    assert c.row("gdp_clt").eps < ex.eps_lower  # the CLT underestimates here
    assert c.row("rdp").eps > ex.eps


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="workload"):
        compare(delta=1e-5)
    with pytest.raises(ValueError, match="methods"):
        compare([(fdp.Gaussian(1.0), 2)], methods=["magic"])
    with pytest.raises(ValueError, match="delta"):
        compare([(fdp.Gaussian(1.0), 2)], delta=0.0)
