"""The ``fdp`` command line.

Each subcommand is one function ``cmd_NAME(args) -> dict`` plus one ``_add_NAME(subparsers)`` that
declares its arguments; :data:`SUBCOMMANDS` registers both. A command returns a plain dict: printed
as JSON with ``--json``, otherwise through its ``text`` entry. Bad input (argparse errors and the
ValueError/TypeError that fdp raises with a message naming the parameter) ends with a one-line
``fdp: error: …`` on stderr and exit status 2.

Examples
--------
>>> main(["gdp-to-dp", "--mu", "1", "--delta", "1e-5", "--json"])  # doctest: +ELLIPSIS
{"mu": 1.0, "delta": 1e-05, "eps": 4.377178...}
0
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import gdp
from .families import EpsDelta, Gaussian, Laplace

__all__ = ["main", "SUBCOMMANDS"]

Handler = Callable[[argparse.Namespace], dict[str, Any]]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        print(f"fdp: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(type(x).__name__)


def _num(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.6g}"


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
        lines.append(f"  ε = {e:4.1f}   δ = {d:.6e}")
    lines.append("")
    curves = [Gaussian(1.0), EpsDelta(1.0, 1e-5), Laplace(1.0)]
    alphas = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5]
    lines.append("type II error β = f(α) (exact):")
    lines.append("  α        " + "".join(f"{repr(c):>30}" for c in curves))
    fam = {}
    for c in curves:
        fam[repr(c)] = [float(c(a)) for a in alphas]
    for i, a in enumerate(alphas):
        lines.append(f"  {a:<9}" + "".join(f"{fam[repr(c)][i]:>30.6f}" for c in curves))
    lines.append("")
    from .composition import compose

    h = compose(Laplace(0.1), repeat=100)
    lo, hi = h.epsilon_bracket(1e-6)
    lines.append("100 Laplace(0.1) mechanisms composed (certified FFT engine):")
    lines.append(
        f"  ε at δ = 1e-6 lies in [{lo:.5f}, {hi:.5f}]  (reported, conservative: {hi:.5f})"
    )
    g = Gaussian(0.1) ** 100
    lines.append(f"100 Gaussian(0.1) compose exactly to {g!r}: ε(1e-6) = {g.epsilon(1e-6):.5f}")
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
    p.add_argument("--mu", type=float, required=True, help="μ ≥ 0 (finite)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--delta", type=float, help="δ in [0, 1]: print the smallest ε")
    g.add_argument("--eps", type=float, help="ε ≥ 0: print δ(ε)")


def cmd_gdp_to_dp(args: argparse.Namespace) -> dict[str, Any]:
    if args.delta is not None:
        e = float(gdp.epsilon(args.mu, args.delta))
        return {
            "mu": args.mu,
            "delta": args.delta,
            "eps": e,
            "text": f"{args.mu:g}-GDP is ({_num(e)}, {args.delta:g})-DP",
        }
    d = float(gdp.delta(args.mu, args.eps))
    return {
        "mu": args.mu,
        "eps": args.eps,
        "delta": d,
        "text": f"{args.mu:g}-GDP is ({args.eps:g}, {d:.6e})-DP",
    }


def _add_dp_to_gdp(sub: Any) -> None:
    p = sub.add_parser(
        "dp-to-gdp",
        help="the μ whose GDP guarantee gives exactly (ε, δ)",
        description=(
            "Print μ with δ_μ(ε) = δ: any μ'-GDP mechanism with μ' ≤ μ is (ε, δ)-DP "
            "(Gomez, Kulynych et al. 2025). For δ = 0, also the smallest μ with f_{ε,0} ≥ G_μ."
        ),
    )
    p.add_argument("--eps", type=float, required=True, help="ε ≥ 0")
    p.add_argument("--delta", type=float, required=True, help="δ in [0, 1)")


def cmd_dp_to_gdp(args: argparse.Namespace) -> dict[str, Any]:
    m = float(gdp.mu(args.eps, args.delta))
    out: dict[str, Any] = {"eps": args.eps, "delta": args.delta, "mu": m}
    text = f"(ε, δ) = ({args.eps:g}, {args.delta:g}) is met by μ-GDP for μ ≤ {m:.6g}"
    if args.delta == 0.0:
        from scipy.special import ndtri

        star = float(-2.0 * ndtri(1.0 / (1.0 + math.exp(args.eps))))
        out["mu_dominating"] = star
        text += f"; f_{{ε,0}} ≥ G_μ for μ ≤ {star:.6g}"
    out["text"] = text
    return out


SUBCOMMANDS: dict[str, tuple[Callable[[Any], None], Handler]] = {
    "demo": (_add_demo, cmd_demo),
    "gdp-to-dp": (_add_gdp_to_dp, cmd_gdp_to_dp),
    "dp-to-gdp": (_add_dp_to_gdp, cmd_dp_to_gdp),
}


def _register_optional() -> None:
    """Subcommands of other modules register themselves through ``fdp.cli_extra`` if present."""
    try:
        from . import cli_extra  # noqa: F401
    except ImportError:
        pass


def build_parser() -> argparse.ArgumentParser:
    _register_optional()
    parser = _Parser(
        prog="fdp",
        description="f-differential privacy and Gaussian DP: trade-off curves as objects.",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add, _ in SUBCOMMANDS.values():
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``fdp`` command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # accept --json anywhere on the line
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        out = SUBCOMMANDS[args.command][1](args)
    except SystemExit as exc:
        return int(exc.code or 0)
    except (ValueError, TypeError) as exc:
        print(f"fdp: error: {exc}", file=sys.stderr)
        return 2
    if as_json:
        data = {k: v for k, v in out.items() if k != "text"}
        print(json.dumps(data, default=_json_default))
    else:
        print(out["text"])
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
