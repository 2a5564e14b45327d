"""fdp.tune_allocator: an opt-in process setting that must not change any answer."""

from __future__ import annotations

import subprocess
import sys

import pytest

import fdp


def test_tuned_allocator_gives_the_same_bracket() -> None:
    """The same certified bracket, to the last bit, with and without the tuning (each in a
    fresh process: the setting is per process and cannot be undone)."""
    code = (
        "import sys, fdp\n"
        "if sys.argv[1] == 'tune': assert fdp.tune_allocator() in (True, False)\n"
        "lo, hi = fdp.dpsgd(1.1, 256 / 60000, 1000).epsilon_bracket(1e-5)\n"
        "print(repr(float(lo)), repr(float(hi)))\n"
    )
    out = [subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True,
                          check=True).stdout for mode in ("plain", "tune")]
    assert out[0] == out[1] and out[0].strip()


@pytest.mark.parametrize(("kw", "err", "words"), [
    ({"trim": 1.5}, TypeError, ["trim", "int"]),
    ({"mmap": True}, TypeError, ["mmap", "int"]),
    ({"trim": 0}, ValueError, ["trim=0", "2**31"]),
    ({"mmap": 2**31}, ValueError, ["mmap=2147483648", "2**31"]),
])
def test_bad_thresholds_are_named(kw: dict, err: type, words: list[str]) -> None:  # type: ignore[type-arg]
    with pytest.raises(err) as e:
        fdp.tune_allocator(**kw)
    assert all(w in str(e.value) for w in words), str(e.value)
