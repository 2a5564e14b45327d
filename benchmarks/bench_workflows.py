"""Workflow speed (issue 17): per-epoch ε logging and sweeps over (σ, p, T), fdp and peers.

    python benchmarks/bench_workflows.py [--repeat N] [--sweep N] [--workers W] [--seed S]
                                         [--peers] [--vdi V[,V...]] [--brackets]

Workloads (δ = 1e-5 throughout):

- **one MNIST query**: σ = 1.1, p = 256/60000, T = 14,063 (60 epochs of ≈ 234.4 steps), by
  ``fdp.dpsgd(σ, p, T).epsilon(δ)`` (the certified bracket at the default 0.1 % accuracy; the
  number that issue 17's "2× one query" refers to) and by ``fdp.Accountant`` (its fast path:
  a certified upper bound, typically within 0.1 % of the exact ε; no lower end).
- **ε after each of the 60 epochs**: an :class:`fdp.Accountant` fed one epoch at a time
  (``acc.step(σ, p, steps=k)``, then ``acc.epsilon(δ)``); epoch e ends at round(e·T/60). The
  ratio column divides by the ``fdp.dpsgd`` query above.
- **sweep**: ``--sweep`` (default 100) settings drawn with a fixed seed, σ log-uniform in
  [0.6, 2], p log-uniform in [1e-3, 2e-2], T log-uniform in [1e3, 5e4] (rounded): ε(δ) of
  each by a fresh accountant, serially and with ``concurrent.futures.ProcessPoolExecutor``
  (``--workers`` processes, pool start-up included). ``--brackets`` adds the same sweep with
  ``fdp.dpsgd`` brackets (one repeat only: about a second per setting).
- ``--peers``: dp_accounting's PLD accountant (``PLDAccountant``, pessimistic estimate, add/
  remove) on the per-epoch and sweep workloads at each ``--vdi`` (value discretization
  interval; default 1e-4, the setting issue 17 compares against). Its error column is its ε
  relative to fdp's certified upper end (MNIST only). Run with an interpreter that has
  dp_accounting (``pip install -r benchmarks/requirements-peers.txt``).

Every time is the median of ``--repeat`` runs after one warm-up (imports and first-call
caches excluded), in one process. Installs nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

SIGMA, P, T, DELTA, EPOCHS = 1.1, 256 / 60000, 14063, 1e-5, 60


def epoch_ends(steps: int = T, epochs: int = EPOCHS) -> list[int]:
    """Step counts at the end of each epoch (epoch e ends at round(e·steps/epochs))."""
    return [round(steps * (e + 1) / epochs) for e in range(epochs)]


def sweep_grid(n: int, seed: int) -> list[tuple[float, float, int]]:
    """``n`` realistic (σ, p, T) settings, log-uniform, reproducible."""
    rng = np.random.default_rng(seed)
    s = np.exp(rng.uniform(math.log(0.6), math.log(2.0), n))
    p = np.exp(rng.uniform(math.log(1e-3), math.log(2e-2), n))
    t = np.round(np.exp(rng.uniform(math.log(1e3), math.log(5e4), n))).astype(int)
    return [(float(a), float(b), int(c)) for a, b, c in zip(s, p, t, strict=True)]


# ------------------------------------------------------------------------------ fdp workloads
def fdp_query() -> float:
    import fdp

    return float(fdp.dpsgd(SIGMA, P, T).epsilon(DELTA))


def fdp_acc_query() -> float:
    from fdp.accountant import Accountant

    return Accountant().step(SIGMA, P, steps=T).epsilon(DELTA)


def fdp_epochs() -> list[float]:
    from fdp.accountant import Accountant

    acc, done, out = Accountant(), 0, []
    for end in epoch_ends():
        acc.step(SIGMA, P, steps=end - done)
        done = end
        out.append(acc.epsilon(DELTA))
    return out


def fdp_point(setting: tuple[float, float, int]) -> float:
    """One sweep point (module level, so a process pool can pickle it)."""
    from fdp.accountant import Accountant

    s, p, t = setting
    return Accountant().step(s, p, steps=t).epsilon(DELTA)


def fdp_bracket_point(setting: tuple[float, float, int]) -> float:
    import fdp

    return float(fdp.dpsgd(*setting).epsilon(DELTA))


def parallel(fn: Callable[[Any], float], grid: list[Any], workers: int) -> list[float]:
    with ProcessPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(fn, grid, chunksize=max(1, len(grid) // (4 * workers))))


# ------------------------------------------------------------------------------ peers
def _pld(vdi: float) -> Any:
    from dp_accounting.pld import pld_privacy_accountant as pa

    return pa.PLDAccountant(value_discretization_interval=vdi)


def _event(s: float, p: float) -> Any:
    from dp_accounting import dp_event

    return dp_event.PoissonSampledDpEvent(p, dp_event.GaussianDpEvent(s))


def peer_query(vdi: float) -> float:
    acc = _pld(vdi)
    acc.compose(_event(SIGMA, P), T)
    return float(acc.get_epsilon(DELTA))


def peer_epochs(vdi: float) -> list[float]:
    acc, done, out = _pld(vdi), 0, []
    ev = _event(SIGMA, P)
    for end in epoch_ends():
        acc.compose(ev, end - done)
        done = end
        out.append(float(acc.get_epsilon(DELTA)))
    return out


def peer_point(args: tuple[float, tuple[float, float, int]]) -> float:
    vdi, (s, p, t) = args
    acc = _pld(vdi)
    acc.compose(_event(s, p), t)
    return float(acc.get_epsilon(DELTA))


# ------------------------------------------------------------------------------ driver
def timed(fn: Callable[[], Any], repeat: int, warm: bool = True) -> tuple[float, Any]:
    if warm:
        fn()
    times, out = [], None
    for _ in range(max(repeat, 1)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs after a warm-up (median)")
    ap.add_argument("--sweep", type=int, default=100, help="settings in the sweep")
    ap.add_argument("--workers", type=int, default=2, help="processes for the parallel sweep")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sweep grid")
    ap.add_argument("--peers", action="store_true", help="add dp_accounting (PLD)")
    ap.add_argument("--vdi", default="1e-4", help="dp_accounting discretization interval(s)")
    ap.add_argument("--brackets", action="store_true",
                    help="add the sweep with fdp.dpsgd brackets (one run, slow)")
    a = ap.parse_args()
    import fdp

    grid = sweep_grid(a.sweep, a.seed)
    rows: list[list[str]] = []

    def row(what: str, who: str, t: float, eps: str, ratio: str, note: str = "") -> None:
        rows.append([what, who, f"{t:.3f}", eps, ratio, note])
        print("| " + " | ".join(rows[-1]) + " |", flush=True)

    print(f"fdp {fdp.__version__}, Python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} cores; repeat={a.repeat}, sweep={a.sweep} "
          f"settings (seed {a.seed}), workers={a.workers}\n")
    head = ["workload", "how", "median s", "ε (MNIST: final)", "time / one fdp.dpsgd query",
            "note"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))

    t_q, e_q = timed(fdp_query, a.repeat)
    lo, hi = fdp.dpsgd(SIGMA, P, T).epsilon_bracket(DELTA)
    row("one MNIST query", "fdp.dpsgd(σ, p, T).epsilon", t_q, f"{e_q:.5f}", "1",
        f"certified bracket [{lo:.5f}, {hi:.5f}]")
    t, e = timed(fdp_acc_query, a.repeat)
    row("one MNIST query", "fdp.Accountant (fast path)", t, f"{e:.5f}", f"{t / t_q:.2f}",
        f"certified upper bound, {e / hi - 1:+.2%} vs the bracket's upper end")
    t_e, es = timed(fdp_epochs, a.repeat)
    row(f"ε after each of {EPOCHS} epochs", "fdp.Accountant, step + epsilon per epoch", t_e,
        f"{es[-1]:.5f}", f"{t_e / t_q:.2f}", f"{t_e / t:.1f}× one Accountant query")
    t_s, ev = timed(lambda: [fdp_point(g) for g in grid], a.repeat)
    row(f"sweep of {a.sweep} (σ, p, T)", "fdp.Accountant per setting, serial", t_s,
        f"mean {statistics.fmean(ev):.4g}", f"{t_s / t_q:.2f}", "")
    t_p, evp = timed(lambda: parallel(fdp_point, grid, a.workers), a.repeat)
    same = "same ε as serial" if evp == ev else "DIFFERENT from serial"
    row(f"sweep of {a.sweep} (σ, p, T)", f"same, ProcessPoolExecutor({a.workers})", t_p,
        f"mean {statistics.fmean(evp):.4g}", f"{t_p / t_q:.2f}", f"{same}; pool start included")
    if a.brackets:
        t_b, eb = timed(lambda: [fdp_bracket_point(g) for g in grid], 1, warm=False)
        worst = max(x / y - 1 for x, y in zip(ev, eb, strict=True))
        row(f"sweep of {a.sweep} (σ, p, T)", "fdp.dpsgd(...).epsilon per setting, serial", t_b,
            f"mean {statistics.fmean(eb):.4g}", f"{t_b / t_q:.2f}",
            f"one run; accountant's ε at most {worst:+.2%} above these")

    if a.peers:
        for vdi in (float(v) for v in a.vdi.split(",")):
            who = f"dp_accounting PLD, vdi={vdi:g}"
            t, e = timed(lambda vdi=vdi: peer_query(vdi), a.repeat)
            row("one MNIST query", who, t, f"{e:.5f}", f"{t / t_q:.2f}",
                f"{e / hi - 1:+.2%} vs fdp's certified upper end")
            t2, pe = timed(lambda vdi=vdi: peer_epochs(vdi), a.repeat)
            row(f"ε after each of {EPOCHS} epochs", who + ", compose + get_epsilon per epoch",
                t2, f"{pe[-1]:.5f}", f"{t2 / t_q:.2f}",
                f"{t2 / t_e:.1f}× fdp's time; max |Δε| vs fdp per epoch "
                f"{max(abs(x / y - 1) for x, y in zip(pe, es, strict=True)):.2%}")
            pts = [(vdi, g) for g in grid]
            t3, pv = timed(lambda pts=pts: [peer_point(x) for x in pts], a.repeat)
            row(f"sweep of {a.sweep} (σ, p, T)", who + ", serial", t3,
                f"mean {statistics.fmean(pv):.4g}", f"{t3 / t_q:.2f}",
                f"{t3 / t_s:.1f}× fdp's time")
            t4, _ = timed(lambda pts=pts: parallel(peer_point, pts, a.workers), a.repeat)
            row(f"sweep of {a.sweep} (σ, p, T)", who + f", ProcessPoolExecutor({a.workers})", t4,
                "", f"{t4 / t_q:.2f}", f"{t4 / t_p:.1f}× fdp's time")


if __name__ == "__main__":
    main()
