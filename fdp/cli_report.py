"""The ``fdp report`` subcommand: a privacy statement for a DP-SGD run or a saved accountant.

Registered in :mod:`fdp.cli` with ``SUBCOMMANDS["report"] = (add_report_parser, cmd_report)``.
``cmd_report`` returns a dict whose ``text`` entry is the Markdown report (printed by default)
and whose other entries are :meth:`fdp.PrivacyReport.to_dict` (printed with ``--json``).

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> _ = add_report_parser(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["report", "--noise-multiplier", "2", "--sample-rate", "0.01",
...                           "--steps", "400", "--sampling", "shuffle", "--delta", "1e-5"])
>>> out = cmd_report(args)
>>> out["mu"], out["text"].splitlines()[0]
(2.0, '# Privacy report')
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_report_parser", "cmd_report"]

_EPILOG = (
    "Conventions: the noise multiplier σ is the noise std on the SUM of clipped per-example "
    "gradients divided by the clipping norm C (Opacus, TF Privacy). poisson: add/remove "
    "neighbours, sensitivity 1·C; uniform (fixed-size batches without replacement) and shuffle "
    "(each example once per epoch, no amplification): replace-one neighbours, sensitivity 2·C."
)


def add_report_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``fdp report`` and its arguments on an argparse sub-parser collection.

    Parameters
    ----------
    subparsers :
        The object returned by ``ArgumentParser.add_subparsers``.

    Returns
    -------
    argparse.ArgumentParser
        The ``report`` parser.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> sub = add_report_parser(p.add_subparsers(dest="command"))
    >>> sub.prog.endswith("report")
    True
    """
    p = subparsers.add_parser(
        "report",
        help="a privacy statement: assumptions, certified ε bracket, μ, attack risk, user level",
        description="Privacy report of a DP-SGD run (from its parameters, or from --dataset-size/"
        "--batch-size/--epochs via the sampling planner) or of a saved accountant (--state, the "
        "JSON of fdp.Accountant.to_json). Markdown by default, JSON with --json.",
        epilog=_EPILOG,
    )
    from .cli import LIMITS, _integer, _number  # (cli imports this module first)

    p.add_argument("--state", help="a JSON file written from fdp.Accountant.to_json()")
    p.add_argument(
        "--noise-multiplier", type=_number(0.0, LIMITS["max_noise"], low_open=True),
        help="σ > 0: noise std on the sum of clipped gradients / C "
        f"(σ/sensitivity ≥ {LIMITS['min_noise']:g}, σ ≤ {LIMITS['max_noise']:.0e})",
    )
    p.add_argument("--sample-rate", type=_number(0.0, 1.0, low_open=True),
                   help="p in (0, 1] (with --steps; or the planner flags below)")
    p.add_argument("--steps", type=_integer(1, LIMITS["steps"]),
                   help=f"optimizer steps T in [1, {LIMITS['steps']:.0e}] (with --sample-rate)")
    p.add_argument("--dataset-size", type=_integer(1, 10**12),
                   help="n (with --batch-size and --epochs; instead of --sample-rate/--steps)")
    p.add_argument("--batch-size", type=_integer(1, 10**12), help="physical batch size B ≤ n")
    p.add_argument("--epochs", type=_number(0.0, low_open=True), help="passes over the data")
    p.add_argument("--accumulation", type=_integer(1, 10**6), default=None,
                   help="micro-batches accumulated per optimizer step (default 1; planner only)")
    p.add_argument("--sampling", choices=["poisson", "uniform", "shuffle"], default="poisson",
                   help="sampling scheme (default poisson)")
    p.add_argument("--neighbours", choices=["add-remove", "replace-one"],
                   help="neighbouring relation (default: the scheme's)")
    p.add_argument("--sensitivity", type=_number(0.0, low_open=True),
                   help="sensitivity of the clipped-gradient sum in units of C")
    p.add_argument("--delta", type=_number(0.0, 1.0), action="append",
                   help="δ in [0, 1] for the ε bracket (repeatable; default 1e-5 and 1e-6)")
    p.add_argument("--fpr", type=_number(0.0, 1.0), action="append",
                   help="FPR in [0, 1] for the TPR bound (repeatable; default 1e-3, 1e-2, 0.1)")
    p.add_argument("--records-per-user", type=_integer(1, LIMITS["records_per_user"]),
                   action="append",
                   help=f"k in [1, {LIMITS['records_per_user']}] for user-level numbers "
                   "(repeatable)")
    p.add_argument("--tol", type=_number(0.0, 0.1, low_open=True), default=1e-3,
                   help="engine accuracy: relative width of the ε bracket, in (0, 0.1] "
                   "(default 1e-3)")
    return p


_PLANNER = ("--dataset-size", "--batch-size", "--epochs", "--accumulation")


def _rate_and_steps(args: argparse.Namespace, plan_sampling: Any) -> tuple[float, int, Any]:
    """(p, T, plan) from --sample-rate and --steps (plan None), or from the planner flags (not
    both, not a mix); checks σ/sensitivity and T against the command line's limits."""
    from .accountant import step_conventions
    from .cli import LIMITS, check_batch, check_noise, check_plan_steps

    planner = {f: getattr(args, f[2:].replace("-", "_")) for f in _PLANNER}
    given = [f"{f} {v:g}" if isinstance(v, float) else f"{f} {v}"
             for f, v in planner.items() if v is not None]
    if args.sample_rate is not None or args.steps is not None:
        if given:
            raise ValueError(
                f"{given[0]} conflicts with --sample-rate/--steps: give p and T directly "
                "(--sample-rate and --steps) or through the planner (--dataset-size, "
                "--batch-size, --epochs), not both"
            )
        if args.sample_rate is None or args.steps is None:
            missing = "--steps" if args.steps is None else "--sample-rate"
            raise ValueError(f"give {missing} too (p and T go together)")
        p, t, plan = float(args.sample_rate), int(args.steps), None
    else:
        if args.dataset_size is None or args.batch_size is None or args.epochs is None:
            raise ValueError(
                "give --sample-rate and --steps, or --dataset-size, --batch-size and --epochs"
            )
        check_batch(args.batch_size, args.dataset_size)
        plan = plan_sampling(
            args.dataset_size, args.batch_size, args.epochs, args.accumulation or 1,
            sampling=args.sampling, neighbours=args.neighbours,
            sensitivity=args.sensitivity, warn=False,
        )
        p, t = plan.sample_rate, plan.steps
        check_plan_steps(args.epochs, args.dataset_size, args.batch_size, t, LIMITS["steps"])
    sens = step_conventions(args.sampling, args.neighbours, args.sensitivity).sensitivity
    check_noise(args.noise_multiplier, sens, "fdp.report")
    return p, t, plan


def cmd_report(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``fdp report``: the report's ``to_dict()`` plus ``text`` (its Markdown).

    Raises ValueError with a one-line message for inconsistent arguments (the CLI prints it).

    Examples
    --------
    >>> import argparse
    >>> ns = argparse.Namespace(state=None, noise_multiplier=1.0, sample_rate=None, steps=None,
    ...     dataset_size=1000, batch_size=10, epochs=1.0, accumulation=None, sampling="poisson",
    ...     neighbours=None, sensitivity=None, delta=[1e-5], fpr=None, records_per_user=None,
    ...     tol=1e-2)
    >>> out = cmd_report(ns)
    >>> out["plan"]["steps"], out["plan"]["sample_rate"]
    (100, 0.01)
    """
    from .accountant import Accountant, plan_sampling
    from .report import report

    deltas = args.delta or [1e-5, 1e-6]
    fprs = args.fpr or [1e-3, 1e-2, 0.1]
    plan = None
    dpsgd_flags = [args.noise_multiplier, args.sample_rate, args.steps, args.dataset_size,
                   args.batch_size, args.epochs, args.accumulation, args.sensitivity,
                   args.neighbours]
    if args.state is not None:
        if any(x is not None for x in dpsgd_flags):
            raise ValueError("give either --state or DP-SGD parameters, not both")
        try:
            with open(args.state, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise ValueError(
                f"--state: cannot read {args.state!r} ({exc.strerror or exc})"
            ) from exc
        acc = Accountant.from_json(text)
    else:
        if args.noise_multiplier is None:
            raise ValueError("give --noise-multiplier (or --state)")
        p, t, plan = _rate_and_steps(args, plan_sampling)
        acc = Accountant().step(args.noise_multiplier, p, steps=t,
                                sampling=args.sampling, neighbours=args.neighbours,
                                sensitivity=args.sensitivity)
    rep = report(acc, deltas=deltas, fprs=fprs, records_per_user=args.records_per_user,
                 tol=args.tol)
    out = rep.to_dict()
    text = rep.markdown()
    if plan is not None:
        out["plan"] = plan.to_dict()
        if plan.warnings:
            text += "\n## Sampling plan warnings\n\n" + "\n".join(
                f"- {w}" for w in plan.warnings) + "\n"
    out["text"] = text.rstrip("\n")
    # (infinite and undefined numbers are written by fdp.cli.to_json as every command's are,
    # "Infinity" and null; this wrote "inf" and "nan", unlike the README's JSON section)
    return out
