"""An Opacus accountant backed by fdp: ``PrivacyEngine(accountant="fdp")``.

Importing this module registers :class:`FDPAccountant` under the name ``"fdp"`` with Opacus'
accountant registry when Opacus is importable (``opacus.accountants.registry`` in Opacus ≥ 1.6;
before it, the ``create_accountant`` factory is wrapped). Then ``PrivacyEngine(accountant="fdp")``,
``make_private_with_epsilon`` (whose noise search calls :meth:`FDPAccountant.get_epsilon`) and
``save_checkpoint`` / ``load_checkpoint`` use it; the tests run a real ``PrivacyEngine`` on a toy
model with Opacus 1.6 and compare with Opacus' own RDP and PRV accountants. Opacus is optional
(``pip install "fdp[opacus]"``): without it the class is built on a local stand-in of Opacus'
``IAccountant`` interface, so it can be used and tested anywhere.

>>> import fdp.integrations.opacus                      # doctest: +SKIP
>>> from opacus import PrivacyEngine                    # doctest: +SKIP
>>> engine = PrivacyEngine(accountant="fdp")            # doctest: +SKIP

The interface is Opacus' (``opacus.accountants.accountant.IAccountant``): ``step(*,
noise_multiplier, sample_rate)`` after every optimizer step, ``get_epsilon(delta)``, ``__len__``,
``mechanism()``, ``state_dict()`` / ``load_state_dict()``, and a ``history`` list of
``(noise_multiplier, sample_rate, steps)`` tuples, which Opacus' noise calibration
(``get_noise_multiplier``) assigns directly. ε is computed from that history by an
:class:`fdp.Accountant`: a certified upper bound on the exact ε of the composed schedule.

Conventions: Opacus adds Gaussian noise of std σ·C (``noise_multiplier`` σ, ``max_grad_norm``
C) to the sum of clipped per-sample gradients and samples batches by Poisson sampling; that is
fdp's ``sampling="poisson"`` with add/remove neighbours and sensitivity C (:mod:`fdp.sgd`).
Pass ``sampling="uniform"`` or ``"shuffle"`` when the data loader forms batches otherwise (then
replace-one neighbours, sensitivity 2C).

Examples
--------
>>> acc = FDPAccountant()
>>> for _ in range(1000):
...     acc.step(noise_multiplier=1.0, sample_rate=0.01)
>>> len(acc), acc.history
(1000, [(1.0, 0.01, 1000)])
>>> round(acc.get_epsilon(1e-5), 2)
1.83
>>> FDPAccountant.mechanism()
'fdp'
"""

from __future__ import annotations

import abc
from collections import OrderedDict
from copy import deepcopy
from typing import Any

from ..accountant import Accountant

__all__ = ["FDPAccountant", "register", "HAVE_OPACUS"]


class _IAccountantStandIn(abc.ABC):
    """The part of Opacus' ``IAccountant`` that accountants implement or inherit (used when
    Opacus is not installed)."""

    history: list[Any]

    @abc.abstractmethod
    def step(self, *, noise_multiplier: float, sample_rate: float) -> None: ...

    @abc.abstractmethod
    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float: ...

    @abc.abstractmethod
    def __len__(self) -> int: ...

    @classmethod
    @abc.abstractmethod
    def mechanism(cls) -> str: ...

    def get_optimizer_hook_fn(self, sample_rate: float) -> Any:
        def hook_fn(optim: Any) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)

        return hook_fn

    def state_dict(self, destination: Any = None) -> Any:
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        return destination

    def load_state_dict(self, state_dict: Any) -> None:
        if not state_dict or "history" not in state_dict or "mechanism" not in state_dict:
            raise ValueError("state dict must hold 'history' and 'mechanism'")
        if state_dict["mechanism"] != self.mechanism():
            raise ValueError(
                f"state_dict of {state_dict['mechanism']} cannot be loaded into an accountant "
                f"with mechanism {self.mechanism()}"
            )
        self.history = state_dict["history"]


try:  # Opacus (and torch) only if installed
    from opacus.accountants.accountant import IAccountant as _Base

    HAVE_OPACUS = True
except Exception:  # ImportError, or a broken torch install
    _Base = _IAccountantStandIn  # type: ignore[misc,assignment]
    HAVE_OPACUS = False


class FDPAccountant(_Base):  # type: ignore[misc,valid-type]
    """Opacus accountant computing ε with fdp's certified f-DP composition.

    Parameters
    ----------
    sampling : {"poisson", "uniform", "shuffle"}, default "poisson"
        How batches are formed (Opacus' DPDataLoader: Poisson).
    tol : float
        Engine accuracy of the curve behind :meth:`get_epsilon_bracket` and :meth:`report`.

    Examples
    --------
    >>> a = FDPAccountant()
    >>> a.history = [(1.0, 0.01, 1000)]        # what Opacus' get_noise_multiplier does
    >>> round(a.get_epsilon(delta=1e-5), 2)
    1.83
    """

    def __init__(self, sampling: str = "poisson", tol: float = 1e-3) -> None:
        self.history: list[tuple[float, float, int]] = []
        self.sampling = sampling
        self.tol = tol
        self._acc: Accountant | None = None
        self._key: tuple[Any, ...] | None = None

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimizer step (consecutive equal steps are merged into one entry)."""
        if self.history:
            s, p, n = self.history[-1]
            if s == noise_multiplier and p == sample_rate:
                self.history[-1] = (s, p, n + 1)
                return
        self.history.append((noise_multiplier, sample_rate, 1))

    def accountant(self) -> Accountant:
        """The :class:`fdp.Accountant` of the current history (steps appended since the last call
        extend it, so its caches carry over; any other change rebuilds it)."""
        key = tuple((float(s), float(p), int(n)) for s, p, n in self.history)
        if self._acc is not None and key == self._key:
            return self._acc
        old = self._key or ()
        if self._acc is None or not _extends(old, key):
            self._acc, old = Accountant(tol=self.tol), ()
        for i, (s, p, n) in enumerate(key):
            done = old[i][2] if i < len(old) else 0
            if n > done:
                self._acc.step(s, p, steps=n - done, sampling=self.sampling)
        self._key = key
        return self._acc

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """A certified upper bound on ε at ``delta`` for the steps taken so far."""
        if not self.history:
            return 0.0
        return self.accountant().epsilon(delta)

    def get_epsilon_bracket(self, delta: float) -> tuple[float, float]:
        """Certified (lower, upper) bounds on the exact ε at ``delta``."""
        if not self.history:
            return 0.0, 0.0
        return self.accountant().epsilon_bracket(delta)

    def report(self, **kwargs: Any) -> Any:
        """:func:`fdp.report` of the run so far."""
        from ..report import report

        return report(self.accountant(), tol=self.tol, **kwargs)

    def __len__(self) -> int:
        return int(sum(n for _, _, n in self.history))

    @classmethod
    def mechanism(cls) -> str:
        return "fdp"


def _extends(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    """Whether history ``new`` is ``old`` with steps appended (to its last entry or after it)."""
    if len(new) < len(old) or old[:-1] != new[: len(old) - 1]:
        return False
    if not old:
        return True
    last, same = old[-1], new[len(old) - 1]
    return bool(last[:2] == same[:2] and last[2] <= same[2])


def register() -> bool:
    """Register :class:`FDPAccountant` with Opacus under ``"fdp"``; False if Opacus is absent.

    Opacus ≥ 1.6 has a registry (``opacus.accountants.registry.register_accountant``); for older
    versions the ``create_accountant`` factory is wrapped where ``PrivacyEngine`` and
    ``get_noise_multiplier`` look it up. Importing this module calls it.

    Examples
    --------
    >>> isinstance(register(), bool)
    True
    """
    if not HAVE_OPACUS:
        return False
    try:
        from opacus.accountants.registry import register_accountant
    except ImportError:  # pragma: no cover - Opacus < 1.6 (CI tests 1.6)
        _wrap_factories()
        return True
    try:  # force: re-importing this module (importlib.reload) registers the new class again
        register_accountant(FDPAccountant.mechanism(), FDPAccountant, force=True)
    except TypeError:  # pragma: no cover - a registry without the force flag
        register_accountant(FDPAccountant.mechanism(), FDPAccountant)
    return True


def _wrap_factories() -> None:  # pragma: no cover - Opacus < 1.6
    """Make ``create_accountant("fdp")`` return an :class:`FDPAccountant` in every module of an
    Opacus without a registry that imported the factory by name."""
    import importlib

    for name in ("opacus.accountants", "opacus.accountants.utils", "opacus.privacy_engine"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        original = getattr(mod, "create_accountant", None)
        if original is None or getattr(original, "_fdp_wrapped", False):
            continue

        def create_accountant(mechanism: str, _original: Any = original) -> Any:
            if mechanism == "fdp":
                return FDPAccountant()  # the module's current class, also after a reload
            return _original(mechanism)

        create_accountant._fdp_wrapped = True  # type: ignore[attr-defined]
        mod.create_accountant = create_accountant  # type: ignore[attr-defined]


register()
