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
