"""Random hunt for wrong-side answers of long DP-SGD runs, many composed in two stages.

For random σ ∈ [0.8, 4], p ∈ [1e-3, 2e-2], T ∈ [7e4, 1e7] (log-uniform) and δ ∈ {1e-5, 1e-8,
1e-12}, compares ``fdp.dpsgd(σ, p, T).epsilon_bracket(δ)`` with ε(δ) by inverting the moment
generating function of the T-step privacy loss (``ref_dpsgd_eps`` of bench_extremes.py, both
directions, numpy/scipy, not fdp) and prints each bracket, whether the run was composed in two
stages (``fdp.pld._staged``) and whether the reference lies inside. "WRONG SIDE" means the
conservative end lies below the reference (a guarantee that is too optimistic).

Run from the project root with the dev venv (about 10 s a case, mostly the reference)::

    python benchmarks/staged_hunt.py --seed 1 --cases 20
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_extremes import ref_dpsgd_eps  # noqa: E402

import fdp  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    wrong = 0
    for _ in range(args.cases):
        s = round(math.exp(rng.uniform(math.log(0.8), math.log(4.0))), 3)
        p = float(f"{math.exp(rng.uniform(math.log(1e-3), math.log(2e-2))):.3g}")
        t = int(float(f"{math.exp(rng.uniform(math.log(7e4), math.log(1e7))):.3g}"))
        delta = rng.choice([1e-5, 1e-8, 1e-12])
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fdp.AccuracyWarning)
            h = fdp.dpsgd(s, p, t)
            lo, hi = (float(x) for x in h.epsilon_bracket(delta))
        took = time.perf_counter() - start
        staged = bool(getattr(getattr(h, "_f", None), "info", {}).get("stages"))
        ref = ref_dpsgd_eps(s, p, t, delta)
        if hi < ref * (1 - 1e-9):
            verdict, wrong = "WRONG SIDE", wrong + 1
        elif lo > ref * (1 + 1e-9):
            verdict = "lower end above the reference"
        else:
            verdict = "ok"
        print(f"σ={s} p={p} T={t} δ={delta:g}: {'two stages' if staged else 'one stage'} "
              f"[{lo:.8g}, {hi:.8g}] ({(hi - lo) / hi:.2e}) reference {ref:.10g}: {verdict} "
              f"({took:.3f} s)", flush=True)
    print(f"{args.cases} cases, {wrong} on the wrong side")


if __name__ == "__main__":
    main()
