"""One consistent public API (issue 16): no public name shadows a module.

Reference: the issue's requirement that ``fdp.sgd.poisson_subsampled_gaussian`` be reachable (the
function ``fdp.dpsgd`` once shadowed the module of the same name).
"""

from __future__ import annotations

import importlib
import pkgutil
import types

import fdp


def _submodules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(fdp.__path__) if m.name != "__main__"]


def test_no_public_name_shadows_a_module() -> None:
    for name in _submodules():
        module = importlib.import_module(f"fdp.{name}")
        bound = getattr(fdp, name)
        assert isinstance(bound, types.ModuleType), f"fdp.{name} is {type(bound).__name__}"
        assert bound is module, f"fdp.{name} is not the module fdp/{name}.py"


def test_every_public_name_resolves_and_no_function_is_named_like_a_module() -> None:
    modules = set(_submodules())
    for name in fdp.__all__:
        obj = getattr(fdp, name)
        if not isinstance(obj, types.ModuleType):
            assert name not in modules, name


def test_dpsgd_function_and_module_both_reachable() -> None:
    assert callable(fdp.dpsgd) and not isinstance(fdp.dpsgd, types.ModuleType)
    assert callable(fdp.sgd.poisson_subsampled_gaussian)
    assert fdp.sgd.dpsgd is fdp.dpsgd


_NO_MPL = r"""
import sys

class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("matplotlib is blocked for this test")

sys.meta_path.insert(0, _Block())
import fdp, fdp.cli, fdp.figures, fdp.report, fdp.mechanisms
assert round(fdp.Gaussian(1.0).epsilon(1e-5), 4) == 4.3772
assert fdp.mechanisms.oue(1.0).eps == 1.0
assert fdp.cli.main(["gdp-to-dp", "--mu", "1", "--delta", "1e-5"]) in (0, None)
try:
    fdp.plot.tradeoff(fdp.Gaussian(1.0))
except ImportError as e:
    assert 'fdp[plot]' in str(e), e
else:
    raise AssertionError("plotting without matplotlib did not raise")
print("core without matplotlib: ok")
"""


def test_accounting_core_works_without_matplotlib() -> None:
    # matplotlib is the optional `plot` extra: `pip install fdp` must give working accounting
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run(
        [sys.executable, "-c", _NO_MPL], capture_output=True, text=True, timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "core without matplotlib: ok" in out.stdout


def test_matplotlib_is_an_extra_not_a_dependency() -> None:
    import sys
    from pathlib import Path

    if sys.version_info < (3, 11):  # pragma: no cover - tomllib is 3.11+
        import pytest

        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    meta = tomllib.loads(
        (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    )["project"]
    assert not any(d.lower().startswith("matplotlib") for d in meta["dependencies"])
    assert any(d.lower().startswith("matplotlib") for d in meta["optional-dependencies"]["plot"])
