"""Side-by-side benchmark of fdp against dp_accounting and prv_accountant (one process).

    python benchmarks/bench_composition.py [--quick] [--repeat N]

Installs nothing. Peers are used when importable (see benchmarks/README.md for the separate venv;
they are never runtime dependencies of fdp). Each workload reports ε at δ, the time (median of
``--repeat`` runs after a warm-up), fdp's certified bracket, each result's error against the
reference, and the time ratio peer/fdp.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import fdp

try:  # peers, optional
    from dp_accounting.pld import privacy_loss_distribution as pld
except ImportError:  # pragma: no cover
    pld = None
try:
    from prv_accountant import PRVAccountant
    from prv_accountant import privacy_random_variables as prvs
except ImportError:  # pragma: no cover
    PRVAccountant = None


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    fn()  # warm-up
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


ROWS: list[dict[str, Any]] = []


def record(
    work: str,
    method: str,
    setting: str,
    t: float,
    eps: float,
    ref: float | None,
    bracket: tuple[float, float] | None = None,
) -> None:
    ROWS.append(
        {
            "workload": work,
            "method": method,
            "setting": setting,
            "time": t,
            "eps": eps,
            "ref": ref,
            "bracket": bracket,
        }
    )


def fdp_row(
    work: str,
    build: Callable[[], Any],
    delta: float,
    ref: float | None,
    repeat: int,
    setting: str = "tol=1e-3 (default)",
) -> None:
    def run() -> tuple[float, float]:
        return build().epsilon_bracket(delta)

    t, (lo, hi) = timed(run, repeat)
    record(work, "fdp", setting, t, float(hi), ref, (float(lo), float(hi)))


def laplace_workloads(n: int, repeat: int, quick: bool) -> None:
    work = f"Laplace(0.1)^{n}, δ=1e-6"
    delta = 1e-6
    # reference: the midpoint of fdp's certified bracket at tol=1e-5 (width ~1e-7 relative)
    r_lo, r_hi = fdp.compose(fdp.Laplace(0.1), repeat=n, numeric=True, tol=1e-5).epsilon_bracket(
        delta
    )
    ref = 0.5 * (float(r_lo) + float(r_hi))
    fdp_row(work, lambda: fdp.Laplace(0.1) ** n, delta, ref, repeat)
    fdp_row(
        work, lambda: fdp.compose(fdp.Laplace(0.1), repeat=n, tol=1e-2), delta, ref, repeat,
        setting="tol=1e-2",
    )
    if pld is not None:
        for vdi in [1e-2, 1e-3] if quick else [1e-2, 1e-3, 1e-4]:

            def run(vdi: float = vdi) -> float:
                p = pld.from_laplace_mechanism(
                    10.0, sensitivity=1.0, value_discretization_interval=vdi
                )
                return p.self_compose(n).get_epsilon_for_delta(delta)

            t, e = timed(run, repeat)
            record(work, "dp_accounting", f"vdi={vdi:g}", t, e, ref)
    if PRVAccountant is not None and n <= 1000:
        for err in [0.1] if quick else [0.1, 0.01]:

            def run(err: float = err) -> tuple[float, float, float]:
                acc = PRVAccountant(
                    prvs=prvs.LaplaceMechanism(mu=0.1),
                    max_self_compositions=n,
                    eps_error=err,
                    delta_error=delta / 1000,
                )
                return acc.compute_epsilon(delta=delta, num_self_compositions=[n])

            t, (lo, est, up) = timed(run, max(1, repeat // 2))
            record(work, "prv_accountant", f"eps_error={err:g}", t, up, ref, (lo, up))


def gaussian_workload(repeat: int, quick: bool) -> None:
    work = "Gaussian(0.1)^1000 numeric, δ=1e-5"
    delta = 1e-5
    ref = float(fdp.gdp.epsilon(math.sqrt(10.0), delta))
    fdp_row(
        work, lambda: fdp.compose(fdp.Gaussian(0.1), repeat=1000, numeric=True), delta, ref, repeat
    )
    fdp_row(
        work,
        lambda: fdp.compose(fdp.Gaussian(0.1), repeat=1000, numeric=True, tol=1e-2),
        delta, ref, repeat, setting="tol=1e-2",
    )
    record(
        work,
        "fdp closed form",
        "G_√10",
        timed(lambda: fdp.Gaussian(0.1) ** 1000, repeat)[0],
        float((fdp.Gaussian(0.1) ** 1000).epsilon(delta)),
        ref,
    )
    if pld is not None:
        for vdi in [1e-2, 1e-3] if quick else [1e-2, 1e-3, 1e-4]:

            def run(vdi: float = vdi) -> float:
                p = pld.from_gaussian_mechanism(
                    10.0, sensitivity=1.0, value_discretization_interval=vdi
                )
                return p.self_compose(1000).get_epsilon_for_delta(delta)

            t, e = timed(run, repeat)
            record(work, "dp_accounting", f"vdi={vdi:g}", t, e, ref)
    if PRVAccountant is not None:
        for err in [0.1] if quick else [0.1, 0.01]:

            def run(err: float = err) -> tuple[float, float, float]:
                acc = PRVAccountant(
                    prvs=prvs.GaussianMechanism(noise_multiplier=10.0),
                    max_self_compositions=1000,
                    eps_error=err,
                    delta_error=delta / 1000,
                )
                return acc.compute_epsilon(delta=delta, num_self_compositions=[1000])

            t, (lo, est, up) = timed(run, max(1, repeat // 2))
            record(work, "prv_accountant", f"eps_error={err:g}", t, up, ref, (lo, up))


def mix_workload(repeat: int) -> None:
    work = "100 Laplace(0.1) + 100 Gaussian(0.1), δ=1e-6"
    delta = 1e-6
    ref_c = fdp.compose(fdp.Laplace(0.1), fdp.Gaussian(0.1), repeat=100, tol=1e-5)
    ref = 0.5 * sum(float(x) for x in ref_c.epsilon_bracket(delta))
    fdp_row(
        work,
        lambda: fdp.compose(fdp.Laplace(0.1), fdp.Gaussian(0.1), repeat=100),
        delta,
        ref,
        repeat,
    )
    if pld is not None:

        def run() -> float:
            a = pld.from_laplace_mechanism(10.0, value_discretization_interval=1e-3).self_compose(
                100
            )
            b = pld.from_gaussian_mechanism(10.0, value_discretization_interval=1e-3).self_compose(
                100
            )
            return a.compose(b).get_epsilon_for_delta(delta)

        t, e = timed(run, repeat)
        record(work, "dp_accounting", "vdi=1e-3", t, e, ref)


def curve_workload(repeat: int) -> None:
    work = "Laplace(0.1)^10000: curve at 1000 α + ε(1e-6)"
    a = np.linspace(0, 1, 1000)

    def run() -> float:
        h = fdp.Laplace(0.1) ** 10000
        h(a)
        return float(h.epsilon(1e-6))

    t, e = timed(run, repeat)
    record(work, "fdp", "tol=1e-3 (default)", t, e, None)


def dpsgd_workloads(repeat: int, quick: bool) -> None:
    cases = [(1.1, 256 / 60000, 14063, 2.3817), (0.8, 0.01, 10000, 10.0536)]
    delta = 1e-5
    for s, q, T, peer_ref in cases:
        work = f"DP-SGD σ={s}, q={q:.4g}, T={T}, δ=1e-5"
        # (fdp's row at the full repeat: a median of 2 moved by ±2 ms between runs)
        fdp_row(work, lambda s=s, q=q, T=T: fdp.dpsgd(s, q, T), delta, peer_ref, repeat)
        t, e = timed(lambda s=s, q=q, T=T: fdp.dpsgd_clt(s, q, T).epsilon(delta), repeat)
        record(work, "fdp GDP CLT", "approximation", t, float(e), peer_ref)
        t, e = timed(
            lambda s=s, q=q, T=T: fdp.rdp.to_epsilon(
                T * fdp.rdp.subsampled_gaussian(s, q), fdp.rdp.DEFAULT_ORDERS, delta
            ),
            repeat,
        )
        record(work, "fdp RDP", "BBGHS", t, float(e), peer_ref)
        if pld is not None:
            for vdi in [1e-3] if quick else [1e-3, 1e-4]:

                def run(vdi: float = vdi, s: float = s, q: float = q, T: int = T) -> float:
                    p = pld.from_gaussian_mechanism(
                        s, sampling_prob=q, value_discretization_interval=vdi
                    )
                    return p.self_compose(T).get_epsilon_for_delta(delta)

                t, e = timed(run, max(1, repeat // 2))
                record(work, "dp_accounting", f"vdi={vdi:g}", t, e, peer_ref)
        if pld is not None:
            try:
                from dp_accounting import dp_event
                from dp_accounting.rdp import rdp_privacy_accountant as rpa
            except ImportError:  # pragma: no cover
                rpa = None
            if rpa is not None:

                def run_rdp(s: float = s, q: float = q, T: int = T, rpa: Any = rpa) -> float:
                    acc = rpa.RdpAccountant()
                    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(s)), T)
                    return acc.get_epsilon(delta)

                t, e = timed(run_rdp, repeat)
                record(work, "dp_accounting RDP", "default orders", t, e, peer_ref)
        if PRVAccountant is not None and not quick:

            def run_prv(s: float = s, q: float = q, T: int = T) -> tuple[float, float, float]:
                acc = PRVAccountant(
                    prvs=prvs.PoissonSubsampledGaussianMechanism(
                        noise_multiplier=s, sampling_probability=q
                    ),
                    max_self_compositions=T,
                    eps_error=0.01,
                    delta_error=1e-9,
                )
                return acc.compute_epsilon(delta=delta, num_self_compositions=[T])

            t, (lo, est, up) = timed(run_prv, 1)
            record(work, "prv_accountant", "eps_error=0.01", t, up, peer_ref, (lo, up))


def report() -> str:
    lines = [
        "| workload | method | setting | time (s) | ε | certified bracket (width) | error vs ref |"
        " time / fdp default |",
        "|---|---|---|---|---|---|---|---|",
    ]
    # ratios are to fdp at its default accuracy
    fdp_time = {
        r["workload"]: r["time"]
        for r in ROWS
        if r["method"] == "fdp" and "default" in r["setting"]
    }
    for r in ROWS:
        br = ""
        if r["bracket"]:
            lo, hi = r["bracket"]
            br = f"[{lo:.5f}, {hi:.5f}] ({(hi - lo) / hi:.3%})"
        err = "" if r["ref"] is None else f"{(r['eps'] - r['ref']) / r['ref']:+.2e}"
        ratio = r["time"] / fdp_time[r["workload"]] if r["workload"] in fdp_time else math.nan
        lines.append(
            f"| {r['workload']} | {r['method']} | {r['setting']} | {r['time']:.4f} | "
            f"{r['eps']:.5f} | {br} | {err} | {ratio:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer settings, for a fast check")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per setting (median)")
    ap.add_argument(
        "--only",
        choices=["laplace", "gaussian", "mix", "curve", "dpsgd"],
        help="run one group of workloads",
    )
    args = ap.parse_args()

    def run(group: str) -> bool:
        return args.only in (None, group)

    if run("laplace"):
        for n in (100, 1000, 10_000):
            laplace_workloads(n, args.repeat, args.quick)
    if run("gaussian"):
        gaussian_workload(args.repeat, args.quick)
    if run("mix"):
        mix_workload(args.repeat)
    if run("curve"):
        curve_workload(args.repeat)
    if run("dpsgd"):
        dpsgd_workloads(args.repeat, args.quick)
    peers = []
    if pld is not None:
        import importlib.metadata as md

        peers.append(f"dp-accounting {md.version('dp-accounting')}")
    if PRVAccountant is not None:
        import importlib.metadata as md

        peers.append(f"prv-accountant {md.version('prv-accountant')}")
    print(f"fdp {fdp.__version__}; peers: {', '.join(peers) or 'none importable'}")
    print(report())


if __name__ == "__main__":
    main()
