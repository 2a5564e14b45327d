"""Build the tutorial notebooks from this script and execute them (outputs stored in the files).

    python notebooks/build.py          # rewrite and execute all notebooks

The test suite executes every notebook top to bottom (tests/test_notebooks.py), so they never rot.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).parent


def md(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text.strip())


def code(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(text.strip())


NOTEBOOKS: dict[str, list[nbformat.NotebookNode]] = {
    "01_tradeoff_curves_and_conversions.ipynb": [
        md("""
# 1. Trade-off curves and conversions

A mechanism is *f-DP* if no test can tell two neighbouring datasets apart with type I error α and
type II error below f(α) (Dong, Roth & Su 2022). In `fdp` the curve f is an object. This notebook
evaluates the three classical families, converts between μ-GDP and (ε, δ)-DP exactly, and builds
curves from distributions and privacy profiles.
"""),
        code("""
import numpy as np
import matplotlib
matplotlib.use("Agg")
import fdp

g, f, lap = fdp.Gaussian(1.0), fdp.EpsDelta(1.0, 1e-5), fdp.Laplace(1.0)
for c in (g, f, lap):
    print(f"{c!r:32} f(0.05) = {c(0.05):.6f}   δ(ε=1) = {c.delta(1.0):.3e}")
"""),
        md("""
## μ-GDP ⇄ (ε, δ)

μ-GDP holds iff (ε, δ(ε))-DP holds for all ε with δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
`fdp.gdp` evaluates it in log space, so tiny δ and large μ work where naive formulas cancel.
"""),
        code("""
print("ε at δ = 1e-5 for μ = 0.5, 1, 2:", fdp.gdp.epsilon([0.5, 1.0, 2.0], 1e-5))
print("ε for μ = 30 at δ = 1e-5 (Opacus fails here):", fdp.gdp.epsilon(30.0, 1e-5))
print("ε for μ = 1 at δ = 1e-300:", fdp.gdp.epsilon(1.0, 1e-300))
print("μ whose GDP guarantee gives exactly (1, 1e-5):", fdp.gdp.mu(1.0, 1e-5))
print("exact Gaussian noise for (1, 1e-5)-DP:", fdp.gdp.sigma(1.0, 1e-5),
      "vs classical", np.sqrt(2 * np.log(1.25 / 1e-5)))
"""),
        md("""
## Curves from distributions and profiles

`from_distributions` gives the exact curve of two discrete output distributions, atoms included.
Randomized response with ε = ln 3 has β(0.1) = 0.7 exactly (grid-based tools return 0.25 or 1.0).
`from_eps_delta` turns a list of (ε_i, δ_i) guarantees into the curve they imply.
"""),
        code("""
rr = fdp.from_distributions([0.75, 0.25], [0.25, 0.75])
print("β(0.1) =", rr(0.1), "  ε(δ=0) =", rr.epsilon(0.0))
eps = np.linspace(0, 6, 200)
implied = fdp.from_eps_delta(eps, g.delta(eps))
print("max gap between G_1 and the curve implied by its own profile:",
      float(np.max(g(np.linspace(0, 1, 1001)) - implied(np.linspace(0, 1, 1001)))))
"""),
        code("""
ax = fdp.plot.tradeoff(g, f, lap, rr)
ax.figure.savefig("/tmp/fdp_nb1.png")
"""),
    ],
    "02_composition_clt_edgeworth.ipynb": [
        md("""
# 2. Composition, the central limit theorem and Edgeworth

Composing mechanisms composes their curves (tensor product ⊗). Gaussians stay Gaussian; everything
else goes through a certified FFT engine whose `lower` and `upper` curves bracket the exact result.
Many compositions look Gaussian (DRS Thm 3.5); the Edgeworth expansion corrects the CLT.
"""),
        code("""
import math
import numpy as np
import matplotlib
matplotlib.use("Agg")
import fdp

print(fdp.Gaussian(0.3) @ fdp.Gaussian(0.4))                     # exact: G_0.5
h = fdp.Laplace(0.1) ** 1000                                      # numeric, certified
lo, hi = h.epsilon_bracket(1e-6)
print(f"Laplace(0.1)^1000: ε(1e-6) ∈ [{lo:.5f}, {hi:.5f}]  ({h.info['grid_points']} grid points)")
kov = fdp.EpsDelta(0.1, 1e-6) ** 1000
print("exact KOV for f_(0.1, 1e-6)^1000: ε(1e-3) =", kov.epsilon(1e-3))
"""),
        md("""
## CLT with its Berry–Esseen error, and Edgeworth

`fdp.clt(f, n=...)` returns μ, the Berry–Esseen γ, the approximation G_μ and certified bounds.
The approximation is **not** a bound: compare it with the certified ε of the exact composition.
"""),
        code("""
for n in (3, 10, 100):
    t = 1 / math.sqrt(n)
    r = fdp.clt(fdp.Laplace(t), n=n)
    e = fdp.edgeworth(fdp.Laplace(t), n=n)
    ex = fdp.Laplace(t) ** n
    a = np.linspace(0, 1, 1001)
    mid = 0.5 * (ex.lower(a) + ex.upper(a))
    clt_err = np.max(abs(r.approx(a) - mid))
    ew_err = np.max(abs(e(a) - mid))
    print(f"n={n:4d}  μ={r.mu:.4f}  γ={r.gamma:.3f}  sup|CLT−exact|={clt_err:.2e}"
          f"  sup|Edgeworth−exact|={ew_err:.2e}")
"""),
        code("""
from fdp.figures import fig_clt_laplace

fig_clt_laplace().savefig("/tmp/fdp_nb2.png")
"""),
    ],
    "03_dpsgd_and_deployment.ipynb": [
        md("""
# 3. DP-SGD accounting and deployment

DP-SGD with Poisson sampling at rate p, noise multiplier σ and T steps is min{f, f⁻¹}**-DP with
f = (p G_{1/σ} + (1 − p) Id)^{⊗T}. `fdp.dpsgd` computes it with a certified bracket; `fdp.compare`
puts every accountant side by side; `fdp.calibrate_dpsgd` finds the noise for a target.
"""),
        code("""
import fdp

h = fdp.dpsgd(1.1, 256 / 60000, 14063)              # MNIST: batch 256, 60 epochs
lo, hi = h.epsilon_bracket(1e-5)
print(f"exact ε(1e-5) ∈ [{lo:.4f}, {hi:.4f}]; certified μ-GDP: μ = {h.gdp_mu():.4f}")
print("CLT μ =", fdp.dpsgd_clt(1.1, 256 / 60000, 14063).mu, "(an approximation, below it)")
"""),
        code("""
print(fdp.compare(noise_multiplier=1.0, sample_rate=0.01, steps=1000, delta=1e-5,
                  methods=["exact", "gdp_clt", "rdp"]))
"""),
        md("""
## Calibration and conversion for deployment

The calibrated σ is certified: accounting with it meets the target, and a slightly smaller σ
does not. The same conversions are on the command line: `fdp dpsgd ...`, `fdp calibrate ...`.
"""),
        code("""
s = fdp.calibrate_dpsgd(0.01, 200, eps=1.5, delta=1e-5, rtol=1e-2)
print(f"σ = {s:.4f}: ε = {fdp.dpsgd(s, 0.01, 200).epsilon(1e-5):.4f} ≤ 1.5")
print("Gaussian mechanism, 100 releases, (1, 1e-5)-DP overall: σ =",
      fdp.calibrate_gaussian(1.0, 1e-5, steps=100))
"""),
    ],
}


def build(execute: bool = True) -> list[Path]:
    out = []
    for name, cells in NOTEBOOKS.items():
        nb = nbformat.v4.new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        if execute:
            NotebookClient(nb, timeout=300, kernel_name="python3",
                           resources={"metadata": {"path": str(HERE)}}).execute()
        path = HERE / name
        nbformat.write(nb, path)
        out.append(path)
    return out


if __name__ == "__main__":
    for p in build():
        print(p)
