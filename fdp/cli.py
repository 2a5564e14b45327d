"""The ``fdp`` command line.

Each subcommand is one function ``cmd_NAME(args) -> dict`` plus one ``_add_NAME(subparsers)`` that
declares its arguments; :data:`SUBCOMMANDS` registers both. A command returns a plain dict: printed
as JSON with ``--json``, otherwise through its ``text`` entry.

Input hygiene (README, "Command line"):

- every flag's value is checked when it is parsed, against a stated range (the limits
  :data:`LIMITS` keep each request within what the engine computes in seconds);
- contradictory flags are errors, never silently resolved;
- bad input of any kind ends with exactly one line ``fdp: error: …`` on stderr, naming the flag
  and the value, and exit status 2; an unexpected failure (a bug) prints one line and exits 1
  (``FDP_DEBUG=1`` shows the traceback).

JSON output is strict (RFC 8259): an infinite number is the string ``"Infinity"`` (or
``"-Infinity"``) and an undefined one ``null``, with the reason in a sibling field (README, "JSON
output").

Examples
--------
>>> main(["gdp-to-dp", "--mu", "1", "--delta", "1e-5", "--json"])  # doctest: +ELLIPSIS
{"mu": 1.0, "delta": 1e-05, "eps": 4.377178...}
0
>>> main(["gdp-to-dp", "--mu", "1", "--delta", "0", "--json"])
{"mu": 1.0, "delta": 0.0, "eps": "Infinity"}
0
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, cast

import numpy as np

from . import __version__, gdp
from ._numerics import TINY, echo_input, round_decimal
from .cli_report import add_report_parser, cmd_report
from .families import EpsDelta, Gaussian, Laplace
from .numeric import Approximation

__all__ = ["main", "SUBCOMMANDS", "LIMITS", "parse_curve", "to_json"]

Handler = Callable[[argparse.Namespace], dict[str, Any]]

#: Limits of the command line (the Python API has none of these): requests beyond them would
#: run for minutes or exhaust memory in the certified engine.
LIMITS: dict[str, Any] = {
    "steps": 10**7,  # dpsgd, compare: --steps (or the T that --epochs gives)
    "calibrate_steps": 10**5,  # calibrate --mechanism dpsgd: --steps (each probe is an accounting)
    "count": 10**6,  # curve, compare: --count
    "laplace_count": 10**4,  # calibrate --mechanism laplace: --count
    "gaussian_count": 10**9,  # calibrate --mechanism gaussian: --count (closed form)
    "min_noise": 0.1,  # --noise-multiplier / sensitivity (one step at most G_10)
    "max_noise": 1e8,  # --noise-multiplier
    "calibrate_eps": 100.0,  # calibrate: --eps
    "calibrate_mu": 100.0,  # calibrate: --mu
    "alphas": 10_000,  # curve: entries of --alpha
    "records_per_user": 1000,  # report: --records-per-user (group privacy of the curve)
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        if "required: command" in message:  # (plain ``fdp``: say what there is)
            message = (f"give a subcommand, one of {', '.join(SUBCOMMANDS)} (fdp SUBCOMMAND "
                       "--help for its flags)")
        print(f"fdp: error: {_one_line(message)}", file=sys.stderr)
        raise SystemExit(2)


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


# ------------------------------------------------------------------------------------ values
def _range(low: float, high: float, low_open: bool, high_open: bool) -> str:
    lo = "(" if low_open or low == -math.inf else "["
    hi = ")" if high_open or high == math.inf else "]"
    return f"{lo}{low:g}, {high:g}{hi}"


def _number(
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Callable[[str], float]:
    """An argparse type: a finite float in the stated range (the message shows both)."""
    rng = _range(low, high, low_open, high_open)

    def number(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number in {rng}, got {text!r}") from None
        inside = (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
        if not (math.isfinite(x) and inside):
            raise argparse.ArgumentTypeError(f"must be a finite number in {rng}, got {text!r}")
        return x

    return number


def _integer(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high]."""

    def integer(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an integer in [{low}, {high}], got {text!r}"
            ) from None
        if not low <= n <= high:
            raise argparse.ArgumentTypeError(f"must be an integer in [{low}, {high}], got {text!r}")
        return n

    return integer


def _f6(x: float, side: str | None = None, places: int = 6) -> str:
    """Six decimals (``places``), or inf/n/a; ``side`` "up"/"down" rounds a guarantee toward
    less privacy (to nearest, a certified lower end 2.381199995 read 2.381200)."""
    if not math.isfinite(x):
        return _num(x)
    if x != 0.0 and not 1e-4 <= abs(x) < 1e9:
        # (fixed point printed ε = 3360146427270170130260480089597… and μ = 0.000000)
        return _num(x, side, places)
    if side is None:
        return f"{x:.{places}f}"
    return f"{round_decimal(x, places, side, fixed=True):.{places}f}"


def _in(x: float) -> str:
    """An input echoed next to a result computed at it: ``:g`` where that reads back as x,
    else exact (:func:`fdp._numerics.echo_input`; ``fdp curve gaussian:1 --alpha 0.1234567``
    printed α = 0.123457 next to β(0.1234567), 5.8e-7 above G_1(0.123457))."""
    return echo_input(x, f"{x:g}")


def _rate(args: argparse.Namespace, p: float) -> str:
    """The sample rate as given: B/N from a batch and dataset size (p = B/N exactly), else
    :func:`_in`."""
    b, n = getattr(args, "batch_size", None), getattr(args, "dataset_size", None)
    if b is not None and n is not None and getattr(args, "sample_rate", None) is None:
        return f"{b}/{n}"
    return _in(p)


def _num(x: float, side: str | None = None, digits: int = 6) -> str:
    """``digits`` significant digits; ``side="up"``/``"down"`` rounds toward less privacy for a
    guarantee printed as text (an ε or σ up, a largest μ or a β down: `%.6g` printed
    ε = 3.09943 for the exact 3.0994303, whose δ is 1.000004e-10 > 1e-10). JSON keeps the full
    value."""
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if side is None or x == 0.0:
        return f"{x:.{digits}g}"
    return f"{round_decimal(x, digits, side):.{digits}g}"


def to_json(out: dict[str, Any]) -> str:
    """Strict JSON (no NaN/Infinity literals) of a command's result, without its ``text``.

    Infinite numbers become the strings ``"Infinity"``/``"-Infinity"`` (``float()`` in Python,
    ``Number()`` in JavaScript and ``Double.parseDouble`` in Java read them back), undefined ones
    ``null``; numpy scalars and arrays become numbers and lists.
    """
    data = {k: v for k, v in out.items() if k != "text"}
    return json.dumps(_jsonable(data), allow_nan=False)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float):
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
    if x is None or isinstance(x, (str, bool, int, float)):
        return x
    raise TypeError(f"cannot encode {type(x).__name__} as JSON")


def _nan_fields(x: Any, path: str = "") -> list[str]:
    """Paths of NaN values, except the ε of compare rows that are "not applicable" (whose note
    says why)."""
    if isinstance(x, dict):
        if x.get("kind") == "not applicable":
            x = {k: v for k, v in x.items() if k not in ("eps", "eps_lower")}
        return [p for k, v in x.items() if k != "text" for p in _nan_fields(v, f"{path}.{k}")]
    if isinstance(x, (list, tuple)):
        return [p for i, v in enumerate(x) for p in _nan_fields(v, f"{path}[{i}]")]
    if isinstance(x, (float, np.floating)) and math.isnan(float(x)):
        return [path.lstrip(".")]
    return []


# ------------------------------------------------------------------------------------ demo
def _add_demo(sub: Any) -> None:
    sub.add_parser("demo", help="a short worked example (no arguments)")


def cmd_demo(args: argparse.Namespace) -> dict[str, Any]:
    lines = ["fdp demo: f-DP and Gaussian DP with trade-off curves as objects", ""]
    lines.append("1-GDP as (ε, δ(ε))-DP (exact, DRS Cor 2.13):")
    table = []
    for e in [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0]:
        d = float(gdp.delta(1.0, e))
        table.append({"eps": e, "delta": d})
        # (guarantees printed toward less privacy: δ up, β down, ε up, a lower end down)
        lines.append(f"  ε = {e:4.1f}   δ = {float(round_decimal(d, 7, 'up')):.6e}")
    lines.append("")
    curves = [Gaussian(1.0), EpsDelta(1.0, 1e-5), Laplace(1.0)]
    alphas = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5]
    lines.append("type II error β = f(α) (exact):")
    lines.append("  α        " + "".join(f"{repr(c):>30}" for c in curves))
    fam = {}
    for c in curves:
        fam[repr(c)] = [float(c(a)) for a in alphas]
    for i, a in enumerate(alphas):
        lines.append(f"  {a:<9}" + "".join(f"{_f6(fam[repr(c)][i], 'down'):>30}" for c in curves))
    lines.append("")
    from .composition import compose

    h = compose(Laplace(0.1), repeat=100)
    lo, hi = h.epsilon_bracket(1e-6)
    lines.append("100 Laplace(0.1) mechanisms composed (certified FFT engine):")
    lines.append(
        f"  ε at δ = 1e-6 lies in [{_f6(lo, 'down', 5)}, {_f6(hi, 'up', 5)}]  (reported, "
        f"conservative: {_f6(hi, 'up', 5)})"
    )
    g = Gaussian(0.1) ** 100
    lines.append(f"100 Gaussian(0.1) compose exactly to {g!r}: ε(1e-6) = "
                 f"{_f6(float(g.epsilon(1e-6)), 'up', 5)}")
    return {
        "gdp_table": table,
        "families": {"alpha": alphas, **fam},
        "laplace_100": {"delta": 1e-6, "eps_lower": float(lo), "eps_upper": float(hi)},
        "text": "\n".join(lines),
    }


# ------------------------------------------------------------------------------------ conversions
def _add_gdp_to_dp(sub: Any) -> None:
    p = sub.add_parser(
        "gdp-to-dp",
        help="convert μ-GDP to (ε, δ)-DP, exactly",
        description="Given μ-GDP, print δ(ε) for --eps, or the smallest ε with δ(ε) ≤ --delta.",
    )
    p.add_argument("--mu", type=_number(0.0), required=True, help="μ ≥ 0 (finite)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--delta", type=_number(0.0, 1.0), help="δ in [0, 1]: print the smallest ε")
    g.add_argument("--eps", type=_number(0.0), help="ε ≥ 0 (finite): print δ(ε)")


def cmd_gdp_to_dp(args: argparse.Namespace) -> dict[str, Any]:
    if args.delta is not None:
        e = float(gdp.epsilon(args.mu, args.delta))
        text = f"{_in(args.mu)}-GDP is ({_num(e, 'up')}, {_in(args.delta)})-DP"
        if math.isinf(e):
            text += (
                " only: no finite ε has δ(ε) = 0 when μ > 0"
                if args.delta == 0.0
                else " only: the exact ε exceeds the largest float"
            )
        return {"mu": args.mu, "delta": args.delta, "eps": e, "text": text}
    d = float(gdp.delta(args.mu, args.eps))
    text = f"{_in(args.mu)}-GDP is ({_in(args.eps)}, {_num(d, 'up')})-DP"
    if 0.0 < d <= TINY and args.mu > 0:
        # (a δ below the float range is reported as the least subnormal, which bounds it)
        ld = float(gdp.log_delta(args.mu, args.eps))
        if ld < math.log(TINY):
            text += (f" (δ = exp({ld:.6g}), below the float range; {d:g} is an upper bound)"
                     if math.isfinite(ld) else " (δ is below the float range; "
                     f"{d:g} is an upper bound)")
    return {"mu": args.mu, "eps": args.eps, "delta": d, "text": text}


def _add_dp_to_gdp(sub: Any) -> None:
    p = sub.add_parser(
        "dp-to-gdp",
        help="the μ whose GDP guarantee gives exactly (ε, δ)",
        description=(
            "Print μ with δ_μ(ε) = δ: any μ'-GDP mechanism with μ' ≤ μ is (ε, δ)-DP "
            "(Gomez, Kulynych et al. 2025). For δ = 0, also the smallest μ with f_{ε,0} ≥ G_μ: "
            "every ε-DP mechanism is μ'-GDP for μ' ≥ μ."
        ),
    )
    p.add_argument("--eps", type=_number(0.0), required=True, help="ε ≥ 0 (finite)")
    p.add_argument(
        "--delta", type=_number(0.0, 1.0, high_open=True), required=True, help="δ in [0, 1)"
    )


def cmd_dp_to_gdp(args: argparse.Namespace) -> dict[str, Any]:
    from .clt import _epsdelta_mu

    m = float(gdp.mu(args.eps, args.delta)) + 0.0
    out: dict[str, Any] = {"eps": args.eps, "delta": args.delta, "mu": m}
    text = (f"(ε, δ) = ({_in(args.eps)}, {_in(args.delta)}) is met by μ-GDP for "
            f"μ ≤ {_num(m, 'down')}")
    if args.delta == 0.0:
        # the least μ with Φ(−μ/2) ≤ 1/(1 + e^ε) (rounded up): G_μ ≤ f_{ε,0} exactly for the μ
        # at or above it (G_μ falls as μ grows), so an ε-DP mechanism is μ-GDP for those
        star = _epsdelta_mu(args.eps) + 0.0
        out["mu_dominating"] = star
        text += f"; ε-DP implies μ-GDP (f_{{ε,0}} ≥ G_μ) for μ ≥ {_num(star, 'up')}"
    out["text"] = text
    return out


# ------------------------------------------------------------------------------------ curves
_SPEC_HELP = (
    "a curve: gaussian:MU, laplace:MU, epsdelta:EPS[,DELTA], rr:EPS (randomized response), identity"
)


def parse_curve(spec: str) -> Any:
    """A curve from a short spec: ``gaussian:1``, ``laplace:0.1``, ``epsdelta:1,1e-5``, ``rr:1``.

    Raises ValueError naming the spec (and the parameter) for anything else.
    """
    name, _, rest = str(spec).partition(":")
    name = name.strip().lower()
    try:
        args = [float(x) for x in rest.split(",")] if rest.strip() else []
    except ValueError:
        raise ValueError(
            f"curve spec {spec!r}: parameters must be comma-separated numbers ({_SPEC_HELP})"
        ) from None
    arity = {
        "gaussian": (1,), "gdp": (1,), "g": (1,), "laplace": (1,), "l": (1,),
        "epsdelta": (1, 2), "dp": (1, 2), "f": (1, 2), "rr": (1,), "randomized-response": (1,),
        "identity": (0,), "id": (0,),
    }  # fmt: skip
    if name not in arity:
        raise ValueError(f"curve spec {spec!r} not understood; use {_SPEC_HELP}")
    if len(args) not in arity[name]:
        want = " or ".join(str(n) for n in arity[name])
        raise ValueError(
            f"curve spec {spec!r}: {name} takes {want} parameter(s), got {len(args)} ({_SPEC_HELP})"
        )
    try:
        if name in ("gaussian", "gdp", "g"):
            return Gaussian(args[0])
        if name in ("laplace", "l"):
            return Laplace(args[0])
        if name in ("epsdelta", "dp", "f"):
            return EpsDelta(*args)
        if name in ("rr", "randomized-response"):
            return EpsDelta(args[0], 0.0)
        from .families import Identity

        return Identity()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"curve spec {spec!r}: {exc}") from None


def _curve_arg(text: str) -> Any:
    try:
        return parse_curve(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _alphas(text: str) -> list[float]:
    """An argparse type: comma-separated type I errors in [0, 1]."""
    parts = [x.strip() for x in text.split(",")]
    if not text.strip() or any(not x for x in parts):
        raise argparse.ArgumentTypeError(
            f"must be comma-separated numbers in [0, 1], got {text!r} (an empty entry)"
        )
    if len(parts) > LIMITS["alphas"]:
        raise argparse.ArgumentTypeError(
            f"at most {LIMITS['alphas']} values, got {len(parts)}"
        )
    check = _number(0.0, 1.0)
    try:
        return [check(x) for x in parts]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"each value {exc} (in {text!r})") from None


def _plot_file(text: str) -> str:
    """An argparse type: a writable file name with an extension matplotlib can write."""
    ext = os.path.splitext(text)[1].lower().lstrip(".")
    allowed = ("png", "pdf", "svg", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")
    if ext not in allowed:
        raise argparse.ArgumentTypeError(
            f"the file name must end in one of .{', .'.join(allowed)}, got {text!r}"
        )
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"no such directory {folder!r} (for {text!r})")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"directory {folder!r} is not writable (for {text!r})")
    return text


def _add_curve(sub: Any) -> None:
    p = sub.add_parser(
        "curve",
        help="β = f(α) of a named curve, or a plot of it",
        description="Tabulate β = f(α) at --alpha, or draw the curve with --plot.",
    )
    p.add_argument("spec", type=_curve_arg, metavar="SPEC", help=_SPEC_HELP)
    p.add_argument(
        "--count",
        type=_integer(1, LIMITS["count"]),
        default=1,
        help=f"compose the curve with itself, 1 ≤ count ≤ {LIMITS['count']:.0e} (default 1)",
    )
    p.add_argument(
        "--alpha",
        type=_alphas,
        default=[0.001, 0.01, 0.05, 0.1, 0.25, 0.5],
        help="comma-separated type I errors in [0, 1]",
    )
    p.add_argument(
        "--plot", metavar="FILE", type=_plot_file, help="write a PNG/PDF/SVG plot of the curve"
    )


def cmd_curve(args: argparse.Namespace) -> dict[str, Any]:
    from .composition import compose

    f = compose(args.spec, repeat=args.count)
    alphas = list(args.alpha)
    betas = [float(v) for v in np.atleast_1d(f(np.array(alphas)))]
    out: dict[str, Any] = {"curve": repr(f), "kind": f.kind, "alpha": alphas, "beta": betas}
    # (β is a guarantee: printed rounded down, toward less privacy; to nearest, β(0.1) of G_1
    # printed 0.61085631 for 0.610856308354639)
    if f.kind == "bracket":
        # the exact β lies between the two certified curves; β, the guarantee, is the lower
        uppers = [float(v) for v in np.atleast_1d(f.upper(np.array(alphas)))]
        out["beta_upper"] = uppers
        lines = [f"{f!r} (certified bracket: lower ≤ exact β ≤ upper)",
                 f"  {'α':<12} {'β (lower: the guarantee)':<26} upper"]
        lines += [f"  {_in(a):<12} {_num(b, 'down', 8):<26} {_num(u, 'up', 8)}"
                  for a, b, u in zip(alphas, betas, uppers, strict=True)]
    else:
        lines = [f"{f!r} ({f.kind})", "  α            β"]
        lines += [f"  {_in(a):<12} {_num(b, 'down', 8)}"
                  for a, b in zip(alphas, betas, strict=True)]
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        from . import plot

        ax = plot.tradeoff(f)
        try:
            ax.figure.savefig(args.plot, bbox_inches="tight")
        except OSError as exc:
            raise ValueError(
                f"argument --plot: cannot write {args.plot!r}: {exc.strerror or exc}"
            ) from None
        out["plot"] = args.plot
        lines.append(f"plot written to {args.plot}")
    out["text"] = "\n".join(lines)
    return out


# ------------------------------------------------------------------------------------ DP-SGD
_CONV_EPILOG = (
    "Conventions: --noise-multiplier σ is the std of the noise added to the SUM of per-example "
    "gradients clipped to norm C, divided by C (Opacus, TF Privacy). --sampling poisson is "
    "accounted under add-remove neighbours (sensitivity 1·C, one step G_{1/σ}); --sampling "
    "uniform (fixed-size batches without replacement) under replace-one neighbours (sensitivity "
    "2·C, one step C_p(G_{2/σ})). Dong-Roth-Su state NoisySGD with noise 2σC on the sum: to "
    "reproduce their numbers pass --noise-multiplier 2σ (or --sensitivity 1 with their σ). "
    "The sample rate comes from --sample-rate or from --batch-size/--dataset-size (not both); "
    "the number of steps from --steps or from --epochs with --batch-size/--dataset-size (not "
    "both)."
)

#: the flags of a DP-SGD workload, with their argparse dest names
_DPSGD_FLAGS = {
    "--noise-multiplier": "noise_multiplier",
    "--sample-rate": "sample_rate",
    "--steps": "steps",
    "--batch-size": "batch_size",
    "--dataset-size": "dataset_size",
    "--epochs": "epochs",
    "--sampling": "sampling",
    "--neighbours": "neighbours",
    "--sensitivity": "sensitivity",
}


def _add_dpsgd_args(p: Any, max_steps: int, calibrate: bool = False) -> None:
    """The DP-SGD flags; ``calibrate``: calibrate's (no --noise-multiplier, which it computes;
    --sensitivity and --delta also serve --mechanism gaussian|laplace)."""
    p.add_argument(
        "--noise-multiplier",
        type=_number(0.0, LIMITS["max_noise"], low_open=True),
        # (calibrate: taken only to say it is what calibrate computes)
        help=argparse.SUPPRESS if calibrate else "σ > 0: noise std on the sum of clipped "
        f"gradients / clipping norm C (σ/sensitivity ≥ {LIMITS['min_noise']:g}, σ ≤ "
        f"{LIMITS['max_noise']:.0e})",
    )
    p.add_argument(
        "--sample-rate",
        type=_number(0.0, 1.0, low_open=True),
        help="p in (0, 1]; or give --batch-size and --dataset-size",
    )
    p.add_argument(
        "--steps", type=_integer(1, max_steps), help=f"T in [1, {max_steps:.0e}]; or give --epochs"
    )
    p.add_argument("--batch-size", type=_integer(1, 10**12), help="batch size B (p = B / N)")
    p.add_argument("--dataset-size", type=_integer(1, 10**12), help="dataset size N ≥ B")
    p.add_argument(
        "--epochs",
        type=_number(0.0, low_open=True),
        help="epochs E > 0 (T = ⌈E N / B⌉), with --batch-size and --dataset-size",
    )
    p.add_argument(
        "--sampling",
        choices=["poisson", "uniform"],
        default=None,
        help="poisson (default; add-remove neighbours) or uniform: fixed-size batches without "
        "replacement (replace-one neighbours)",
    )
    p.add_argument(
        "--neighbours",
        choices=["add-remove", "replace-one"],
        default=None,
        help="neighbouring relation (default: add-remove for poisson, replace-one for uniform; "
        "other pairs are not supported)",
    )
    p.add_argument(
        "--sensitivity",
        type=_number(0.0, low_open=True),
        default=None,
        help="L2 sensitivity of the clipped-gradient sum in units of C (default 1 for "
        "add-remove, 2 for replace-one; a smaller value is your own claim)"
        + (". With --mechanism gaussian|laplace: the mechanism's sensitivity (default 1)"
           if calibrate else ""),
    )
    p.add_argument(
        "--delta",
        type=_number(0.0, 1.0, low_open=not calibrate, high_open=True),
        default=None,
        help="δ in (0, 1) (default 1e-5)"
        + ("; --mechanism laplace also takes δ = 0" if calibrate else ""),
    )


def _given(args: argparse.Namespace, flags: Sequence[str]) -> list[str]:
    """The flags among ``flags`` that were given, as ``--flag VALUE``."""
    out = []
    for flag in flags:
        val = getattr(args, _DPSGD_FLAGS.get(flag, flag.lstrip("-").replace("-", "_")), None)
        if val is not None and val != []:
            out.append(f"{flag} {_show(val)}")
    return out


def _show(val: Any) -> str:
    if isinstance(val, list):
        return " ".join(_show(v) for v in val)
    if isinstance(val, float):
        return f"{val:g}"
    return str(val)


def _forbid(args: argparse.Namespace, flags: Sequence[str], why: str) -> None:
    bad = _given(args, flags)
    if bad:
        raise ValueError(f"{bad[0]} {why}")


def _delta(args: argparse.Namespace, *, allow_zero: bool = False) -> float:
    if args.delta is None:
        return 1e-5
    if args.delta == 0.0 and not allow_zero:
        raise ValueError(
            "argument --delta: must be in (0, 1) here (Gaussian noise has δ(ε) > 0 at every ε; "
            "only --mechanism laplace takes δ = 0), got '0'"
        )
    return float(args.delta)


def _conventions(args: argparse.Namespace) -> Any:
    """DP-SGD conventions from --sampling/--neighbours/--sensitivity; errors name the flags."""
    from .sgd import conventions

    sampling = args.sampling or "poisson"
    nat = {"poisson": "add-remove", "uniform": "replace-one"}[sampling]
    if args.neighbours is not None and args.neighbours != nat:
        raise ValueError(
            f"--neighbours {args.neighbours} is not supported with --sampling {sampling}: "
            "poisson is accounted under add-remove, uniform (fixed-size batches) under replace-one"
        )
    return conventions(sampling, args.neighbours, args.sensitivity)


def _dpsgd_params(
    args: argparse.Namespace, max_steps: int, need_sigma: bool = True
) -> tuple[Any, float, int, Any]:
    """(σ, p, T, conventions) from the DP-SGD flags; every conflict or gap is an error."""
    conv = _conventions(args)
    b, n = args.batch_size, args.dataset_size
    if args.sample_rate is not None:
        _forbid(
            args,
            ["--batch-size", "--dataset-size"],
            f"conflicts with --sample-rate {args.sample_rate:g}: give the sample rate one way",
        )
        p = float(args.sample_rate)
    else:
        if b is None or n is None:
            have = _given(args, ["--batch-size", "--dataset-size"])
            raise ValueError(
                "give --sample-rate, or --batch-size and --dataset-size"
                + (f" (got only {have[0]})" if have else "")
            )
        check_batch(b, n)
        p = b / n
    if args.steps is not None:
        _forbid(args, ["--epochs"], f"conflicts with --steps {args.steps}: give T one way")
        t = int(args.steps)
    else:
        if args.epochs is None:
            raise ValueError("give --steps, or --epochs with --batch-size and --dataset-size")
        if b is None or n is None:
            raise ValueError(
                f"--epochs {args.epochs:g} needs --batch-size and --dataset-size (T = ⌈E N / B⌉)"
            )
        t_exact = args.epochs * n / b
        check_plan_steps(args.epochs, n, b, t_exact, max_steps)
        t = math.ceil(t_exact)
    sigma = args.noise_multiplier
    if need_sigma:
        if sigma is None:
            raise ValueError("give --noise-multiplier")
        check_noise(sigma, conv.sensitivity, "fdp.dpsgd")
    return sigma, p, t, conv


def check_batch(b: int, n: int) -> None:
    """--batch-size B ≤ --dataset-size N (also for ``fdp report``)."""
    if b > n:
        raise ValueError(
            f"argument --batch-size: must be in [1, --dataset-size] = [1, {n}], got '{b}'"
        )


def check_plan_steps(epochs: float, n: int, b: int, steps: float, max_steps: int) -> None:
    """The T that --epochs gives is within the command line's limit (also for ``fdp report``)."""
    if not steps <= max_steps:
        raise ValueError(
            f"argument --epochs: {epochs:g} epochs of {n}/{b} give {math.ceil(steps):.6g} "
            f"steps; at most {max_steps} are supported here"
        )


def check_noise(sigma: float, sensitivity: float, api: str) -> None:
    """σ/sensitivity ≥ LIMITS["min_noise"] (one step at most G_10); ``api`` is the Python
    function to use beyond it."""
    if sigma / sensitivity < LIMITS["min_noise"]:
        raise ValueError(
            f"argument --noise-multiplier: σ/sensitivity must be ≥ {LIMITS['min_noise']:g} "
            f"(one step at most G_{1 / LIMITS['min_noise']:g}), got σ = {sigma:g} with "
            f"sensitivity {sensitivity:g}; use the Python API ({api}) beyond"
        )


def _conv_out(conv: Any) -> dict[str, Any]:
    return {**conv.to_dict(), "conventions": conv.describe()}


def _add_dpsgd(sub: Any) -> None:
    p = sub.add_parser(
        "dpsgd",
        help="account DP-SGD: exact ε (certified bracket), CLT ε, RDP ε, certified μ",
        description="DP-SGD accounting by every method, e.g. the MNIST example: fdp dpsgd "
        "--noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 --epochs 60 --delta 1e-5",
        epilog=_CONV_EPILOG,
    )
    _add_dpsgd_args(p, LIMITS["steps"])


def cmd_dpsgd(args: argparse.Namespace) -> dict[str, Any]:
    from . import rdp
    from .clt import gdp_mu_delta
    from .sgd import dpsgd, dpsgd_clt

    s, p, t, conv = _dpsgd_params(args, LIMITS["steps"])
    delta = _delta(args)
    kw = {"neighbours": conv.neighbours, "sensitivity": conv.sensitivity}
    h = dpsgd(s, p, t, sampling=conv.sampling, **kw)
    lo, hi = h.epsilon_bracket(delta)
    clt = dpsgd_clt(s, p, t, sampling=conv.sampling, **kw)
    mu_clt = float(cast(Approximation, clt).mu)  # dpsgd_clt returns an Approximation of G_μ
    e_clt = float(clt.epsilon(delta))
    out: dict[str, Any] = {
        "noise_multiplier": s,
        "sample_rate": p,
        "steps": t,
        **_conv_out(conv),
        "delta": delta,
        "eps": float(hi),
        "eps_lower": float(lo),
        "eps_clt": e_clt,
        "mu_clt": mu_clt,
    }
    lines = [
        f"DP-SGD: σ = {_in(s)}, p = {_rate(args, p)}, T = {t}, {conv.sampling} "
        f"sampling, δ = {_in(delta)}",
        f"  {conv.describe()}",
        f"  exact f-DP    ε = {_f6(hi, 'up')}   (certified bracket [{_f6(lo, 'down')}, "
        f"{_f6(hi, 'up')}])",
        f"  GDP CLT       ε = {_f6(e_clt)}   (μ = {_f6(mu_clt)}; an approximation, not a bound)",
    ]
    se = s / conv.sensitivity  # one step is G_{1/se}
    if conv.sampling == "poisson":
        rho = t * rdp.subsampled_gaussian(se, p)
        src = "Mironov et al. 2019"
    else:
        rho = t * rdp.subsampled_gaussian_wor(se, p)
        src = "Wang, Balle & Kasiviswanathan 2019"
    r = float(rdp.to_epsilon(rho, rdp.DEFAULT_ORDERS, delta))
    out["eps_rdp"] = r
    lines.append(f"  RDP           ε = {_f6(r, 'up')}   (a bound; {src} + BBGHS)")
    mu = float(h.gdp_mu())
    out["mu_certified"] = mu
    lines.append(
        f"  certified μ   μ = {_f6(mu, 'up')}   (G_μ ≤ f at every α, tails included; subsampling "
        "does not lower it)"
    )
    mu_t, tau = gdp_mu_delta(h)
    out["mu_delta"] = {"mu": float(mu_t), "tau": float(tau)}
    if tau < 1.0:
        lines.append(
            f"  μ-GDP w.p.    μ = {_f6(mu_t, 'up')}   (f ≥ G_μ ⊗ f_(0,τ): μ-GDP except with "
            f"probability τ = {_num(float(tau), 'up')})"
        )
    else:
        lines.append("  μ-GDP w.p.    none certified (τ = 1: the grid's lower curve is trivial "
                     "here)")
    out["text"] = "\n".join(lines)
    return out


def _add_compare(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="ε by every accountant for a workload (curve × count, or DP-SGD)",
        description="Compare exact f-DP, GDP CLT, Edgeworth, RDP and advanced composition. "
        "A workload of curves: --curve SPEC [--count N] ..., where the i-th --count belongs to "
        "the i-th --curve: give no --count (each curve runs once) or exactly one per --curve. "
        "Or DP-SGD: the DP-SGD flags below.",
        epilog=_CONV_EPILOG,
    )
    p.add_argument(
        "--curve", action="append", type=_curve_arg, default=[], help=_SPEC_HELP + " (repeatable)"
    )
    p.add_argument(
        "--count",
        action="append",
        type=_integer(1, LIMITS["count"]),
        default=[],
        help="how often the --curve in the same position runs (default 1; one per --curve)",
    )
    _add_dpsgd_args(p, LIMITS["steps"])


def cmd_compare(args: argparse.Namespace) -> dict[str, Any]:
    from .accountants import compare

    delta = _delta(args)
    if args.curve:
        _forbid(args, list(_DPSGD_FLAGS), "applies to DP-SGD, not to --curve workloads")
        if args.count and len(args.count) != len(args.curve):
            raise ValueError(
                f"--count given {len(args.count)} time(s) for {len(args.curve)} --curve(s): the "
                "i-th --count belongs to the i-th --curve, so give one --count per --curve, in "
                "the same order (or none: each curve runs once)"
            )
        counts = args.count or [1] * len(args.curve)
        total = sum(counts)
        if total > LIMITS["count"]:
            raise ValueError(
                f"--count: the workload runs {total} mechanisms in all; at most "
                f"{LIMITS['count']} are supported here"
            )
        work = list(zip(args.curve, counts, strict=True))
        res = compare(work, delta=delta)
    else:
        if args.count:
            raise ValueError(
                f"--count {args.count[0]} needs a --curve (DP-SGD workloads take --steps)"
            )
        s, p, t, conv = _dpsgd_params(args, LIMITS["steps"])
        res = compare(
            noise_multiplier=s,
            sample_rate=p,
            steps=t,
            sampling=conv.sampling,
            neighbours=conv.neighbours,
            sensitivity=conv.sensitivity,
            delta=delta,
        )
    out = res.to_dict()
    if res.conventions is not None:
        conv_d = dict(res.conventions)
        out.update({k: v for k, v in conv_d.items() if k != "text"})
        out["conventions"] = conv_d["text"]
    out["text"] = _compare_text(res)
    return out


def _compare_text(res: Any) -> str:
    lines = [f"{res.workload}, ε at δ = {_in(res.delta)}"]
    if res.conventions is not None:
        lines.append(str(res.conventions["text"]))
    lines.append(f"{'method':<11} {'ε':>12} {'certified lower ε':>18}  what it is")
    for r in res.rows:
        lo = "" if r.eps_lower is None else _num(r.eps_lower, "down")
        note = f" ({r.note})" if r.note else ""
        up = "up" if r.kind.startswith("certified") or r.kind.startswith("exact") else None
        lines.append(f"{r.method:<11} {_num(r.eps, up):>12} {lo:>18}  {r.kind}{note}")
    return "\n".join(lines)


def _add_calibrate(sub: Any) -> None:
    p = sub.add_parser(
        "calibrate",
        help="the least DP-SGD noise multiplier meeting a target (certified)",
        description="Smallest σ such that DP-SGD meets ε ≤ --eps at --delta, or μ-GDP with "
        "μ ≤ --mu; with --mechanism gaussian|laplace, the noise of --count composed mechanisms "
        "for ε ≤ --eps at --delta.",
        epilog=_CONV_EPILOG,
    )
    _add_dpsgd_args(p, LIMITS["calibrate_steps"], calibrate=True)
    p.add_argument(
        "--eps",
        type=_number(0.0, LIMITS["calibrate_eps"], low_open=True),
        help=f"target ε in (0, {LIMITS['calibrate_eps']:g}]",
    )
    p.add_argument(
        "--mu",
        type=_number(0.0, LIMITS["calibrate_mu"], low_open=True),
        help=f"target μ in (0, {LIMITS['calibrate_mu']:g}] (instead of --eps/--delta; dpsgd only)",
    )
    p.add_argument(
        "--mechanism",
        choices=["dpsgd", "gaussian", "laplace"],
        default="dpsgd",
        help="what to calibrate (default dpsgd)",
    )
    p.add_argument(
        "--count",
        type=_integer(1, LIMITS["gaussian_count"]),
        default=None,
        help=f"mechanisms composed (gaussian ≤ {LIMITS['gaussian_count']:.0e}, laplace ≤ "
        f"{LIMITS['laplace_count']:.0e}; default 1)",
    )


def cmd_calibrate(args: argparse.Namespace) -> dict[str, Any]:
    from . import calibration as cal

    if args.mu is not None and args.eps is not None:
        raise ValueError(
            f"--eps {args.eps:g} conflicts with --mu {args.mu:g}: give one target, ε (with "
            "--delta) or μ"
        )
    if args.mu is not None and args.delta is not None:
        raise ValueError(
            f"--delta {args.delta:g} conflicts with --mu {args.mu:g}: δ belongs to an --eps target"
        )
    if args.mechanism in ("gaussian", "laplace"):
        mech = f"--mechanism {args.mechanism}"
        dp_only = [f for f in _DPSGD_FLAGS if f != "--sensitivity"]
        _forbid(args, dp_only, f"applies to --mechanism dpsgd only, not to {mech}")
        if args.mu is not None:
            raise ValueError(
                f"--mu {args.mu:g} applies to --mechanism dpsgd only; {mech} takes --eps and "
                "--delta"
            )
        if args.eps is None:
            raise ValueError(f"give --eps (and --delta) for {mech}")
        count = 1 if args.count is None else args.count
        sens = 1.0 if args.sensitivity is None else args.sensitivity
    if args.mechanism == "gaussian":
        delta = _delta(args)
        s = cal.calibrate_gaussian(args.eps, delta, steps=count, sensitivity=sens)
        return {
            "mechanism": "gaussian",
            "sigma": s,
            "sensitivity": sens,
            "count": count,
            "eps": args.eps,
            "delta": delta,
            "text": f"Gaussian noise σ = {_num(s, 'up')} (exact; sensitivity {sens:g}) "
            f"for {count} mechanism(s) to be ({args.eps:g}, {delta:g})-DP",
        }
    if args.mechanism == "laplace":
        delta = _delta(args, allow_zero=True)
        if count > LIMITS["laplace_count"]:
            raise ValueError(
                f"argument --count: must be an integer in [1, {LIMITS['laplace_count']}] for "
                f"--mechanism laplace (each probe composes numerically), got '{count}'"
            )
        b = cal.calibrate_laplace(args.eps, delta, steps=count, sensitivity=sens)
        return {
            "mechanism": "laplace",
            "scale": b,
            "sensitivity": sens,
            "count": count,
            "eps": args.eps,
            "delta": delta,
            "text": f"Laplace scale b = {_num(b, 'up')} (certified; sensitivity {sens:g}) "
            f"for {count} mechanism(s) to be ({args.eps:g}, {delta:g})-DP",
        }
    if args.count is not None:
        raise ValueError(
            f"--count {args.count} applies to --mechanism gaussian|laplace; DP-SGD takes --steps"
        )
    if args.noise_multiplier is not None:
        raise ValueError(
            f"--noise-multiplier {args.noise_multiplier:g} is what calibrate computes; leave it out"
        )
    _, p, t, conv = _dpsgd_params(args, LIMITS["calibrate_steps"], need_sigma=False)
    kw = {"sampling": conv.sampling, "neighbours": conv.neighbours, "sensitivity": conv.sensitivity}
    out: dict[str, Any] = {"mechanism": "dpsgd"}
    if args.mu is not None:
        target = f"μ-GDP with μ ≤ {args.mu:g}"
        out["mu"] = args.mu
        kind, a, b = "mu", args.mu, 0.0
    else:
        if args.eps is None:
            raise ValueError("give --eps (with --delta) or --mu")
        delta = _delta(args)
        target = f"ε ≤ {args.eps:g} at δ = {delta:g}"
        out.update({"eps": args.eps, "delta": delta})
        kind, a, b = "eps", args.eps, delta
    lowest = LIMITS["min_noise"] * conv.sensitivity
    target_kw = {"mu": a} if kind == "mu" else {"eps": a, "delta": b}
    try:
        s = cal.calibrate_dpsgd(p, t, **target_kw, **kw, min_noise_multiplier=lowest)
    except ValueError as exc:
        if "smallest noise multiplier searched" not in str(exc):
            raise
        what = f"--mu {a:g}" if kind == "mu" else f"--eps {a:g} at --delta {b:g}"
        raise ValueError(
            f"{what}: already met by the smallest noise multiplier the command line accounts, "
            f"σ = {lowest:g} (σ/sensitivity = {LIMITS['min_noise']:g}); the least σ is below it "
            "— use the Python API (fdp.calibrate_dpsgd) for it"
        ) from None
    out.update(
        {
            "noise_multiplier": s,
            "sample_rate": p,
            "steps": t,
            **_conv_out(conv),
            "text": f"noise multiplier σ = {_num(s, 'up')} meets {target} (p = {p:.6g}, T = {t}, "
            f"{conv.sampling} sampling; certified, relative tolerance 1e-3)\n  "
            f"{conv.describe()}" + (
                "\n  (DP-SGD's strict μ-GDP is √T·Δ/σ at every sample rate: subsampling does not "
                "lower it. The GDP CLT's μ, which fdp dpsgd prints, is smaller but an "
                "approximation, not a guarantee.)" if args.mu is not None else ""),
        }
    )
    return out


SUBCOMMANDS: dict[str, tuple[Callable[[Any], object], Handler]] = {
    "demo": (_add_demo, cmd_demo),
    "gdp-to-dp": (_add_gdp_to_dp, cmd_gdp_to_dp),
    "dp-to-gdp": (_add_dp_to_gdp, cmd_dp_to_gdp),
    "curve": (_add_curve, cmd_curve),
    "dpsgd": (_add_dpsgd, cmd_dpsgd),
    "compare": (_add_compare, cmd_compare),
    "calibrate": (_add_calibrate, cmd_calibrate),
    "report": (add_report_parser, cmd_report),
}

#: options that may be given more than once (per subcommand)
_REPEATABLE = {"compare": {"--curve", "--count"},
               "report": {"--delta", "--fpr", "--records-per-user"}}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fdp",
        description="f-differential privacy and Gaussian DP: trade-off curves as objects.",
        allow_abbrev=False,
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.add_argument("--version", action="version", version=f"fdp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add, _ in SUBCOMMANDS.values():
        add(sub)
    for p in sub.choices.values():
        p.allow_abbrev = False
    return parser


def _normalize(argv: list[str]) -> list[str]:
    """``--flag -1e-3`` → ``--flag=-1e-3`` (argparse would take a negative number in exponent
    form for an option and report 'expected one argument', hiding the value)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if tok.startswith("--") and "=" not in tok and nxt is not None and nxt.startswith("-"):
            try:
                float(nxt)
            except ValueError:
                pass
            else:
                out.append(f"{tok}={nxt}")
                i += 2
                continue
        out.append(tok)
        i += 1
    return out


def _check_repeats(argv: list[str]) -> None:
    """A single-valued option given twice is a conflict, not 'the last one wins'."""
    command = next((a for a in argv if a in SUBCOMMANDS), None)
    allowed = _REPEATABLE.get(command or "", set())
    seen: dict[str, list[str]] = {}
    for i, tok in enumerate(argv):
        if not tok.startswith("--") or tok in ("--json", "--help", "--version"):
            continue
        flag, eq, val = tok.partition("=")
        if not eq:
            nxt = argv[i + 1] if i + 1 < len(argv) else ""
            val = "" if nxt.startswith("--") else nxt
        seen.setdefault(flag, []).append(val)
    for flag, vals in seen.items():
        if len(vals) > 1 and flag not in allowed:
            shown = ", ".join(repr(v) for v in vals)
            raise ValueError(f"argument {flag}: given {len(vals)} times ({shown}); give it once")


def _print_warnings(caught: list[warnings.WarningMessage]) -> None:
    """Each distinct warning once, as one line ``fdp: warning: …`` on stderr (the result on
    stdout stays clean for ``--json`` readers; no source paths)."""
    seen: set[str] = set()
    for w in caught:
        if not issubclass(w.category, UserWarning):
            continue
        line = _one_line(str(w.message))
        if line not in seen:
            seen.add(line)
            print(f"fdp: warning: {line}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``fdp`` command line; returns the exit status."""
    if argv is None:  # (the command, its own process: see fdp.allocator)
        from .allocator import tune_allocator

        tune_allocator()
    argv = list(sys.argv[1:] if argv is None else argv)
    # accept --json anywhere on the line
    as_json = "--json" in argv
    argv = _normalize([a for a in argv if a != "--json"])
    parser = build_parser()
    try:
        _check_repeats(argv)
        args = parser.parse_args(argv)
        with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
            # numerical warnings inside the engine are not the user's concern: every result
            # is checked below, and a NaN where a number belongs is an internal error; the
            # others (an accuracy or approximation caveat) are one line each on stderr
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("always", UserWarning)
            out = SUBCOMMANDS[args.command][1](args)
        _print_warnings(caught)
        bad = _nan_fields(out)
        if bad:
            raise RuntimeError(f"the result has NaN in {', '.join(bad)}")
        text = to_json(out) if as_json else out["text"]
    except SystemExit as exc:
        return int(exc.code or 0)
    except (ValueError, TypeError) as exc:
        print(f"fdp: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as exc:  # a bug: one line, no traceback (unless FDP_DEBUG is set)
        if os.environ.get("FDP_DEBUG"):
            raise
        print(
            f"fdp: internal error: {type(exc).__name__}: {_one_line(str(exc))} (please report "
            "the command line; FDP_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 1
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader left (``fdp dpsgd … | head -1``): no traceback; stdout goes to devnull so
        # that the interpreter's flush at exit does not raise again (Python's signal docs)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
