"""Calibration speed and memory (issue 17): fdp.calibrate_dpsgd from ε = 1e-3 to 50, and μ.

    python benchmarks/bench_calibration.py [--repeat N] [--timeout S] [--baseline REV]
                                           [--peers] [--extra] [--only NAME]

For each target it prints one Markdown row: the calibrated σ, the bound that certified it
(``info["certified_by"]`` and the engine tolerance it used), the wall time of the first call in
a fresh process ("cold": imports excluded, the engine's per-curve caches empty) and the median of
``--repeat`` further calls ("warm"), the peak of Python-heap allocations during one call
(tracemalloc, numpy arrays included) and the process's peak RSS above its size after the imports
(``resource.getrusage``). Each target runs in its own subprocess, so one call's arrays cannot
inflate the next one's peak, and a time limit (``--timeout``) ends a call that hangs.

``--baseline REV`` also runs ``fdp/calibration.py`` as of git revision REV (loaded in place of
the current one; the rest of fdp is the working tree), cold only, for the before/after columns.
``--peers`` adds Opacus's ``get_noise_multiplier`` (its default RDP accountant, which bounds ε
from above, with ``epsilon_tolerance`` = 1e-3·ε so that its search is as fine as fdp's
rtol = 1e-3 in σ) when Opacus is importable; its σ and time are given as ratios to fdp's.
``--extra`` adds harder regimes outside issue 17's list (p = 1e-3, T = 1e3; long runs at
p = 1e-4) and the steps and sample-rate calibrations.

Installs nothing. The targets are those of issue 17: δ = 1e-5, p = 0.01 and T = 1000 except the
MNIST schedule (p = 256/60000, T = 14063, ε = 2), and a μ-GDP target μ = 0.5.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from typing import Any

RESULT = "@@RESULT@@ "
MNIST_P = 256 / 60000

#: name -> (function, positional args, keyword args)
CASES: dict[str, tuple[str, tuple[Any, ...], dict[str, Any]]] = {
    "eps=1e-3": ("calibrate_dpsgd", (0.01, 1000), {"eps": 1e-3, "delta": 1e-5}),
    "eps=0.1": ("calibrate_dpsgd", (0.01, 1000), {"eps": 0.1, "delta": 1e-5}),
    "eps=1": ("calibrate_dpsgd", (0.01, 1000), {"eps": 1.0, "delta": 1e-5}),
    "eps=2 (MNIST)": ("calibrate_dpsgd", (MNIST_P, 14063), {"eps": 2.0, "delta": 1e-5}),
    "eps=8": ("calibrate_dpsgd", (0.01, 1000), {"eps": 8.0, "delta": 1e-5}),
    "eps=50": ("calibrate_dpsgd", (0.01, 1000), {"eps": 50.0, "delta": 1e-5}),
    "mu=0.5": ("calibrate_dpsgd", (0.01, 1000), {"mu": 0.5}),
}
EXTRA: dict[str, tuple[str, tuple[Any, ...], dict[str, Any]]] = {
    "eps=1, p=1e-3": ("calibrate_dpsgd", (1e-3, 1000), {"eps": 1.0, "delta": 1e-5}),
    "eps=4, p=1e-4, T=1e4": ("calibrate_dpsgd", (1e-4, 10_000), {"eps": 4.0, "delta": 1e-5}),
    "advantage=0.1": ("calibrate_dpsgd", (0.01, 1000), {"advantage": 0.1}),
    "steps, eps=2 (MNIST, σ=1.2)": ("calibrate_steps", (1.2, MNIST_P), {"eps": 2.0, "delta": 1e-5}),
    "sample rate, eps=2 (σ=1, T=1000)": (
        "calibrate_sample_rate", (1.0, 1000), {"eps": 2.0, "delta": 1e-5},
    ),
    # sparse runs (p·T ≤ 4), deep δ: minutes before the fixed-grid first try (_sparse_try)
    "sparse: sample rate, eps=1, δ=1e-12 (σ=0.3, T=1000)": (
        "calibrate_sample_rate", (0.3, 1000), {"eps": 1.0, "delta": 1e-12},
    ),
    "sparse: eps=1, δ=1e-12, p=1e-8, T=1e6": (
        "calibrate_dpsgd", (1e-8, 10**6), {"eps": 1.0, "delta": 1e-12},
    ),
    "sparse: steps, eps=1, δ=1e-10 (σ=0.5, p=1e-6)": (
        "calibrate_steps", (0.5, 1e-6), {"eps": 1.0, "delta": 1e-10},
    ),
}


# --------------------------------------------------------------------------------------------
# Worker side (one subprocess per measurement)
# --------------------------------------------------------------------------------------------
def _load_baseline(rev: str) -> Any:
    """fdp/calibration.py as of git revision ``rev``, as module fdp.calibration_baseline."""
    import importlib.util
    import tempfile

    import fdp  # noqa: F401  (the package the old module's relative imports resolve in)

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = subprocess.run(
        ["git", "show", f"{rev}:fdp/calibration.py"], cwd=root, check=True,
        capture_output=True, text=True,
    ).stdout
    path = os.path.join(tempfile.mkdtemp(), "calibration_baseline.py")
    with open(path, "w") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location("fdp.calibration_baseline", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fdp.calibration_baseline"] = mod
    spec.loader.exec_module(mod)
    return mod


def _opacus_call(fn: str, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    from opacus.accountants.utils import get_noise_multiplier

    if fn != "calibrate_dpsgd" or "eps" not in kw:
        raise NotImplementedError("Opacus calibrates σ to (ε, δ) only")
    p, t = args
    return get_noise_multiplier(
        target_epsilon=kw["eps"], target_delta=kw["delta"], sample_rate=p, steps=t,
        accountant="rdp", epsilon_tolerance=1e-3 * kw["eps"],
    )


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    import resource
    import time
    import tracemalloc
    import warnings

    warnings.simplefilter("ignore")
    fn, args, kw = spec["fn"], tuple(spec["args"]), spec["kw"]
    if spec["who"] == "fdp":
        import fdp.calibration as mod

        call = lambda: getattr(mod, fn)(*args, **kw)  # noqa: E731
    elif spec["who"] == "baseline":
        mod = _load_baseline(spec["rev"])
        call = lambda: getattr(mod, fn)(*args, **kw)  # noqa: E731
    else:
        import opacus  # noqa: F401

        call = lambda: _opacus_call(fn, args, kw)  # noqa: E731
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    value = call()
    cold = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    warm = []
    for _ in range(spec["repeat"]):
        t0 = time.perf_counter()
        call()
        warm.append(time.perf_counter() - t0)
    peak = None
    if spec["repeat"] > 0:
        tracemalloc.start()
        call()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    info = getattr(value, "info", {})
    return {
        "value": float(value), "cold": cold, "warm": statistics.median(warm) if warm else None,
        "peak_mb": peak, "rss_mb": rss1 - rss0,
        "certified_by": info.get("certified_by"), "tol": info.get("tol"),
        "tight": (info.get("tight") or {}).get("how"),
    }


# --------------------------------------------------------------------------------------------
# Driver side
# --------------------------------------------------------------------------------------------
def run(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--worker", json.dumps(spec)],
            capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"status": f"timeout >{timeout:g}s"}
    for line in out.stdout.splitlines():
        if line.startswith(RESULT):
            return {"status": "ok", **json.loads(line[len(RESULT):])}
    err = (out.stderr.strip().splitlines() or ["no output"])[-1]
    return {"status": f"error: {err[:120]}"}


def _fmt(x: Any, spec: str = ".3g") -> str:
    return "–" if x is None else format(x, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="warm calls after the first (median)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per subprocess")
    ap.add_argument("--baseline", metavar="REV", help="also run fdp/calibration.py at REV")
    ap.add_argument("--peers", action="store_true", help="add Opacus get_noise_multiplier")
    ap.add_argument("--extra", action="store_true", help="add regimes outside issue 17's list")
    ap.add_argument("--only", help="run the targets whose name contains this")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(RESULT + json.dumps(worker(json.loads(a.worker))), flush=True)
        return
    cases = dict(CASES, **(EXTRA if a.extra else {}))
    if a.only:
        cases = {k: v for k, v in cases.items() if a.only in k}
    peers = False
    if a.peers:
        import importlib.util

        peers = importlib.util.find_spec("opacus") is not None
    head = ["target", "p", "T", "σ (fdp)", "certified by", "tol", "cold s", "warm s",
            "peak MB", "ΔRSS MB"]
    if a.baseline:
        head += [f"σ ({a.baseline})", f"cold s ({a.baseline})", f"ΔRSS MB ({a.baseline})",
                 "speed-up"]
    if peers:
        head += ["σ Opacus-RDP / fdp", "time Opacus / fdp"]
    print(f"Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cores; repeat={a.repeat}\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, (fn, args, kw) in cases.items():
        base = {"fn": fn, "args": list(args), "kw": kw}
        r = run({**base, "who": "fdp", "repeat": a.repeat}, a.timeout)
        p_, t_ = (args[1], "–") if fn == "calibrate_steps" else (args[0], args[1])
        if fn == "calibrate_sample_rate":
            p_, t_ = "–", args[1]
        if r["status"] != "ok":
            row = [name, str(p_), str(t_), r["status"]] + ["–"] * (len(head) - 4)
            print("| " + " | ".join(row) + " |", flush=True)
            continue
        row = [
            name, _fmt(p_, ".4g") if p_ != "–" else p_, str(t_), _fmt(r["value"], ".6g"),
            str(r["certified_by"]), _fmt(r["tol"], ".2g"), _fmt(r["cold"], ".2f"),
            _fmt(r["warm"], ".2f"), _fmt(r["peak_mb"], ".0f"), _fmt(r["rss_mb"], ".0f"),
        ]
        if a.baseline:
            b = run({**base, "who": "baseline", "rev": a.baseline, "repeat": 0}, a.timeout)
            if b["status"] == "ok":
                row += [_fmt(b["value"], ".6g"), _fmt(b["cold"], ".2f"), _fmt(b["rss_mb"], ".0f"),
                        f"{b['cold'] / r['cold']:.0f}×"]
            else:
                row += [b["status"], "–", "–", "–"]
        if peers:
            o = run({**base, "who": "opacus", "repeat": a.repeat}, a.timeout)
            if o["status"] == "ok":
                t_o = o["warm"] if o["warm"] is not None else o["cold"]
                t_f = r["warm"] if r["warm"] is not None else r["cold"]
                row += [f"{o['value'] / r['value']:.4f}", f"{t_o / t_f:.2f}"]
            else:
                row += [o["status"].replace("|", "/"), "–"]
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
