"""fdp.plot draws what it claims (Agg backend); the gallery writes every file."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import fdp  # noqa: E402
from fdp import figures, plot  # noqa: E402


def test_tradeoff_line_data_matches_curves() -> None:
    g, f = fdp.Gaussian(1.0), fdp.EpsDelta(1.0, 0.1)
    ax = plot.tradeoff(g, f)
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert [ln.get_label() for ln in lines] == [g._label(), f._label()]
    x, y = lines[0].get_data()
    np.testing.assert_allclose(y, g(np.asarray(x)), atol=1e-12)
    x, y = lines[1].get_data()  # PL: exactly its breakpoints
    np.testing.assert_allclose(x, f.breakpoints[0])
    np.testing.assert_allclose(y, f.breakpoints[1])
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim() == (0.0, 1.0)
    assert ax.get_xlabel() == "type I error α" and ax.get_ylabel() == "type II error β"
    assert ax.get_aspect() == 1.0
    plt.close("all")


def test_bracket_band_and_approximation_style() -> None:
    h = fdp.Laplace(0.3) ** 20
    g = fdp.clt.clt(fdp.Laplace(0.3), n=20).approx
    ax = plot.tradeoff(h, g)
    band = ax.collections[0]
    verts = band.get_paths()[0].vertices
    xs, ys = verts[:, 0], verts[:, 1]
    inside = (xs > 0.01) & (xs < 0.99)
    lo, hi = h.lower(xs[inside]), h.upper(xs[inside])
    assert np.all(ys[inside] >= lo - 1e-9) and np.all(ys[inside] <= hi + 1e-9)
    styles = [ln.get_linestyle() for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert styles == ["-", "--"]
    plt.close("all")


def test_privacy_profile_log_scale() -> None:
    ax = plot.privacy_profile(fdp.Gaussian(1.0), eps=np.linspace(0, 5, 50))
    assert ax.get_yscale() == "log"
    x, y = ax.get_lines()[0].get_data()
    np.testing.assert_allclose(y, fdp.Gaussian(1.0).delta(x), rtol=1e-12)
    plt.close("all")


def test_style_does_not_leak() -> None:
    before = matplotlib.rcParams["font.size"]
    with plot.style():
        assert matplotlib.rcParams["font.size"] == 9
    assert matplotlib.rcParams["font.size"] == before


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="curves"):
        plot.tradeoff(1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="labels"):
        plot.tradeoff(fdp.Gaussian(1.0), labels=["a", "b"])


def test_gallery_writes_every_file(tmp_path) -> None:  # noqa: ANN001
    for name in ["gaussian_family", "epsdelta_vs_gdp", "group_privacy", "subsampling"]:
        paths = figures.render(name, tmp_path)
        assert all(p.exists() and p.stat().st_size > 1000 for p in paths)
    assert figures.main(["--out", str(tmp_path), "nope"]) == 2


def test_gallery_is_deterministic(tmp_path) -> None:  # noqa: ANN001
    a = figures.render("gaussian_family", tmp_path / "a")
    b = figures.render("gaussian_family", tmp_path / "b")
    assert a[0].read_bytes() == b[0].read_bytes()
    assert a[1].read_bytes() == b[1].read_bytes()


def test_default_labels_are_readable() -> None:
    # issue 16: default legend labels were internal reprs such as
    # "PiecewiseLinear(3 breakpoints, kind='exact')"
    curves = [
        fdp.Gaussian(1.0), fdp.EpsDelta(1.0, 1e-3), fdp.Laplace(0.5), fdp.Identity(),
        fdp.from_distributions([0.75, 0.25], [0.25, 0.75]), fdp.EpsDelta(0.5).group(2),
        fdp.Gaussian(1.0).subsample(0.1), fdp.Laplace(0.1) ** 10, fdp.EpsDelta(0.1, 1e-6) ** 20,
        fdp.dpsgd(1.0, 0.01, 10), fdp.dpsgd_clt(1.0, 0.01, 10),
        fdp.kov(1.0, 1e-3, 3), fdp.from_points([0.1, 0.3], [0.5, 0.2]),
        fdp.from_points([0.1, 0.3], [0.5, 0.2]).symmetrize(), fdp.from_eps_delta([1.0], [1e-3]),
        fdp.group(fdp.Laplace(0.3) ** 3, 2), fdp.subsample(fdp.Laplace(0.3) ** 3, 0.2),
        fdp.mechanisms.oue(1.0), fdp.mechanisms.exponential([0.0, 1.0], [1.0, 1.0], 1.0),
    ]
    ax = plot.tradeoff(*curves)
    labels = [ln.get_label() for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert len(labels) == len(curves)
    for text in labels:
        assert "PiecewiseLinear(" not in text and "Bracketed(" not in text and "mu=" not in text
        assert "numeric" not in text and "eps=" not in text, text
        assert len(text) <= 60, text
    assert len(set(labels)) == len(labels), labels  # every curve can be told apart
    assert labels[4] == "T(P, Q) on 2 outcomes"
    # anonymous today (plot.describe); named once fdp.operations names its results
    assert labels[5] in ("curve 6 (exact, 4 breakpoints)", "group($f_{0.5,0}$, 2)")
    assert labels[7] == "$L_{0.1}^{\\otimes 10}$"
    assert labels[9] == "DP-SGD(σ=1, p=0.01, T=10)"
    assert labels[11] == "$f_{1,0.001}^{\\otimes 3}$"
    assert labels[12] == "interpolation of 2 points"
    assert labels[14] == "implied by 1 (ε, δ) pair"
    assert labels[15] == "group($L_{0.3}^{\\otimes 3}$, 2)"
    assert labels[16] == "$C_{0.2}$($L_{0.3}^{\\otimes 3}$)"
    assert labels[17] == "OUE (ε=1)"
    assert labels[18] == "exponential (ε=1, sensitivity=1)"
    plt.close("all")


def test_describe_names_anonymous_curves_by_kind() -> None:
    pl = fdp.EpsDelta(1.0) @ fdp.EpsDelta(0.5)  # an exact product, no name
    n = pl.breakpoints[0].size
    assert plot.describe(pl) == f"curve (exact, {n} breakpoints)"
    assert plot.describe(pl, index=0) == f"curve 1 (exact, {n} breakpoints)"
    assert plot.describe(fdp.Laplace(0.1) ** 10, index=2) == "curve 3 (certified bracket)"
    approx = fdp.dpsgd_clt(1.0, 0.01, 10)
    assert plot.describe(approx) == "curve (approximation)"
    # an unnamed bracket and a user's own subclass get the same treatment
    bare = fdp.Bracketed(fdp.EpsDelta(1.0), fdp.EpsDelta(0.9))
    assert plot.label(bare, index=1) == "curve 2 (certified bracket)"

    class Mine(fdp.TradeOff):
        def _eval(self, alpha: np.ndarray) -> np.ndarray:
            return 1.0 - alpha

        def __repr__(self) -> str:
            return "Mine(a=1)"

    assert plot.label(Mine()) == "curve (exact)"
    # a name built from reprs is rendered, not mistaken for an anonymous repr
    named = fdp.PiecewiseLinear.from_points(
        [0.0, 1.0], [1.0, 0.0], name="EpsDelta(eps=1, delta=0) ⊗ OUE(eps=1)"
    )
    assert plot.label(named) == "$f_{1,0}$ ⊗ OUE(ε=1)"


def test_constructors_name_their_curves() -> None:
    f = fdp.from_distributions([0.5, 0.3, 0.2], [0.1, 0.3, 0.6])
    assert repr(f) == "T(P, Q) on 3 outcomes"
    assert repr(fdp.from_points([0.0, 0.5], [0.8, 0.1], exact=True)) == (
        "piecewise linear through 2 points"
    )
    assert repr(fdp.from_eps_delta([1.0, 2.0], [1e-2, 1e-3])) == "implied by 2 (ε, δ) pairs"
    # the name describes the curve it was given to, not curves derived from it
    assert "T(P, Q)" not in repr(f.inverse())
    assert repr(fdp.group(f, 2)) != repr(f)


def test_epsdelta_vs_gdp_touches_at_the_two_marked_points() -> None:
    # issue 16: the caption said one point of contact; G_1 and f_{1,δ(1)} touch at two
    fig = figures.fig_epsdelta_vs_gdp()
    ax = fig.axes[0]
    (marks,) = [ln for ln in ax.get_lines() if ln.get_label() == "the two points of contact"]
    xs, ys = (np.asarray(v, dtype=float) for v in marks.get_data())
    assert xs.size == 2 and "two points" in ax.get_title()
    g = fdp.Gaussian(1.0)
    f = fdp.EpsDelta(1.0, float(g.delta(1.0)))
    np.testing.assert_allclose(ys, g(xs), atol=1e-12)
    np.testing.assert_allclose(f(xs), g(xs), atol=1e-12)  # on both curves
    a = np.linspace(0.0, 1.0, 20001)
    gap = np.asarray(g(a)) - np.asarray(f(a))
    assert np.all(gap >= -1e-12)  # G_1 lies above
    near = np.min(np.abs(a[:, None] - xs[None, :]), axis=1) < 0.01
    # and touches nowhere else inside (every curve ends at (1, 0), where both are 0)
    assert np.all(gap[~near & (a < 0.95)] > 1e-6)
    plt.close(fig)


def test_group_privacy_curves_are_distinguishable() -> None:
    # issue 16: the curves lay on top of each other; the right panel shows each one's gap to L_2
    fig = figures.fig_group_privacy()
    left, right = fig.axes
    gaps = [ln for ln in right.get_lines() if not ln.get_label().startswith("_")]
    assert [ln.get_label() for ln in gaps] == ["k = 1", "k = 2", "k = 4", "k = 16"]
    peaks = [float(np.max(ln.get_ydata())) for ln in gaps]
    assert peaks == sorted(peaks, reverse=True) and peaks[-1] > 0
    # the numbers of the caption (figures/README.md and the docstring)
    assert [round(x, 2) for x in peaks[:2]] == [0.16, 0.07]
    assert round(peaks[2], 3) == 0.024 and round(peaks[3], 3) == 0.002
    # neighbouring curves differ visibly somewhere in the left panel
    curves = [ln for ln in left.get_lines() if ln.get_label().startswith("k = ")]
    a = np.linspace(0.0, 1.0, 2001)
    ys = [np.interp(a, *ln.get_data()) for ln in curves]
    assert all(np.max(np.abs(u - v)) > 1e-3 for u, v in zip(ys, ys[1:], strict=False))
    plt.close(fig)
