"""Every command output shown in README.md is what the command prints today.

The README's Python examples are doctests (pytest's ``--doctest-glob=README.md``). This module
checks its ```console blocks: each ``$ fdp ...`` line is run through :func:`fdp.cli.main` in a
temporary directory and its output compared with the lines that follow it, with doctest's
ELLIPSIS and NORMALIZE_WHITESPACE (``...`` stands for digits beyond the stated accuracy).
Reference: the README itself.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fdp import cli

README = Path(__file__).resolve().parent.parent / "README.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks(kind: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [body for lang, body in _FENCE.findall(text) if lang == kind]


def _examples() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for body in _blocks("console"):
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            command, _, expected = chunk.partition("\n")
            out.append((command.strip(), expected))
    return out


EXAMPLES = _examples()


def test_readme_has_console_examples() -> None:
    assert len(EXAMPLES) >= 5


def test_every_cli_example_is_a_checked_console_block() -> None:
    # command lines in ```bash blocks are not checked, so only the install/test lines may be there
    for body in _blocks("bash"):
        for line in body.splitlines():
            words = line.split()
            if words and words[0] == "fdp":
                raise AssertionError(f"unchecked CLI example in a bash block: {line!r}")


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_console_example(
    command: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = shlex.split(command)
    assert argv[0] == "fdp", command
    monkeypatch.chdir(tmp_path)  # commands that write files write them here
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli.main(argv[1:])
    assert rc in (0, None), (command, rc)
    got = buf.getvalue()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    checker = doctest.OutputChecker()
    if not checker.check_output(expected, got, flags):
        example = doctest.Example(command, expected)
        raise AssertionError(checker.output_difference(example, got, flags))


# ---- the fdp column of the speed table and the prose below it (issue 16: README numbers that
# cannot go stale). Timings depend on the machine and the peers' columns on their packages; every
# accuracy number of fdp shown there is recomputed here.
def _workloads() -> dict[str, tuple[Callable[[], Any], float]]:
    import fdp

    return {
        "Laplace(0.1)^1000 (δ=1e-6)": (lambda: fdp.Laplace(0.1) ** 1000, 1e-6),
        "Laplace(0.1)^10000 (δ=1e-6)": (lambda: fdp.Laplace(0.1) ** 10000, 1e-6),
        "Gaussian(0.1)^1000 numeric (δ=1e-5)": (
            lambda: fdp.compose(fdp.Gaussian(0.1), repeat=1000, numeric=True), 1e-5
        ),
        "100 Laplace(0.1) + 100 Gaussian(0.1) (δ=1e-6)": (
            lambda: fdp.compose(fdp.Laplace(0.1), fdp.Gaussian(0.1), repeat=100), 1e-6
        ),
        "DP-SGD MNIST σ=1.1, q=256/60000, T=14063 (δ=1e-5)": (
            lambda: fdp.dpsgd(1.1, 256 / 60000, 14063), 1e-5
        ),
        "DP-SGD σ=0.8, q=0.01, T=10000 (δ=1e-5)": (lambda: fdp.dpsgd(0.8, 0.01, 10000), 1e-5),
    }


def _speed_rows() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Speed and accuracy against the peers", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("workload (ε at δ)", "---"):
            rows[cells[0]] = cells[1]
    return rows


def test_speed_table_lists_the_checked_workloads() -> None:
    assert set(_speed_rows()) == set(_workloads())


@pytest.mark.parametrize("workload", sorted(_workloads()))
def test_speed_table_fdp_numbers(workload: str) -> None:
    import math

    import fdp

    shown = _speed_rows()[workload]
    make, delta = _workloads()[workload]
    lo, hi = (float(x) for x in make().epsilon_bracket(delta))
    checked = 0
    m = re.search(r"ε ∈ \[([\d.]+), ([\d.]+)\]", shown)
    if m:  # the bracket, to the digits shown
        assert (f"{lo:.5f}", f"{hi:.5f}") == m.groups(), (workload, lo, hi)
        checked += 1
    m = re.search(r"(?:bracket )?\(?([\d.]+) %\)?", shown)
    if m:  # relative width of the certified bracket, in %
        assert f"{100 * (hi - lo) / hi:.3f}" == m.group(1), (workload, lo, hi)
        checked += 1
    m = re.search(r"error \+([\d.e-]+)", shown)
    if m:  # relative error of the reported (upper) ε against the closed form G_√10
        exact = float(fdp.Gaussian(math.sqrt(10.0)).epsilon(delta))
        rel = (hi - exact) / exact
        assert rel > 0 and f"{rel:.0e}".replace("e-0", "e-") == m.group(1), (workload, rel)
        checked += 1
    assert checked, f"no fdp number recognised in {shown!r}"


def test_speed_prose_rdp_and_clt_percentages() -> None:
    import fdp
    from fdp import rdp

    text = README.read_text(encoding="utf-8")
    claim = re.search(
        r"RDP is \+(\d+) % on both DP-SGD workloads; the GDP CLT is (\d+)–(\d+) % low", text
    )
    assert claim, "the sentence on RDP and the CLT moved: update this test"
    rdp_pct, clt_pcts = [], []
    for s, p, t in [(1.1, 256 / 60000, 14063), (0.8, 0.01, 10000)]:
        exact = float(fdp.dpsgd(s, p, t).epsilon(1e-5))
        r = rdp.to_epsilon(t * rdp.subsampled_gaussian(s, p), rdp.DEFAULT_ORDERS, 1e-5)
        c = float(fdp.dpsgd_clt(s, p, t).epsilon(1e-5))
        rdp_pct.append(round(100 * (r / exact - 1)))
        clt_pcts.append(round(100 * (1 - c / exact)))
    assert rdp_pct == [int(claim.group(1))] * 2
    assert sorted(clt_pcts) == [int(claim.group(2)), int(claim.group(3))]
