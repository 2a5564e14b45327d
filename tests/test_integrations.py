"""fdp.integrations: dp_accounting (DpEvent trees, PLDs) and Opacus (the IAccountant interface)."""

from __future__ import annotations

import abc
import importlib
import sys
import types
from collections import OrderedDict
from typing import Any

import pytest

import fdp
from fdp.integrations.dp_accounting import dpevent_to_curve, to_accountant


def _ev(name: str, **fields: Any) -> Any:
    """A stand-in for a dp_accounting event: the adapter reads class names and fields."""
    return type(name, (), fields)()


# ------------------------------------------------------------------------------ DpEvent trees
def test_events_without_the_package() -> None:
    assert dpevent_to_curve(_ev("GaussianDpEvent", noise_multiplier=2.0)) == fdp.Gaussian(0.5)
    assert dpevent_to_curve(_ev("GaussianDpEvent", noise_multiplier=2.0),
                            neighbours="replace-one") == fdp.Gaussian(1.0)
    assert dpevent_to_curve(_ev("LaplaceDpEvent", noise_multiplier=4.0)) == fdp.Laplace(0.25)
    eps_delta = dpevent_to_curve(_ev("EpsilonDeltaDpEvent", epsilon=1.0, delta=1e-6))
    assert eps_delta == fdp.EpsDelta(1.0, 1e-6)
    nested = _ev("ComposedDpEvent", events=[
        _ev("SelfComposedDpEvent", event=_ev("GaussianDpEvent", noise_multiplier=1.0), count=3),
        _ev("NoOpDpEvent"),
        _ev("GaussianDpEvent", noise_multiplier=1.0),
    ])
    assert dpevent_to_curve(nested) == fdp.Gaussian(2.0)
    assert float(dpevent_to_curve(_ev("NonPrivateDpEvent"))(0.5)) == 0.0
    rr = dpevent_to_curve(_ev("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=4),
                          neighbours="replace-one")
    assert float(rr.epsilon(0.0)) == pytest.approx(math_log(5.0))
    with pytest.raises(ValueError, match="replace-one"):
        dpevent_to_curve(_ev("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=4))
    with pytest.raises(ValueError, match="unsupported DpEvent"):
        dpevent_to_curve(_ev("SampledWithReplacementDpEvent"))
    with pytest.raises(ValueError, match="neighbours"):
        dpevent_to_curve(_ev("NoOpDpEvent"), neighbours="swap")


def math_log(x: float) -> float:
    import math

    return math.log(x)


def test_sampled_events_become_accountant_steps() -> None:
    g = _ev("GaussianDpEvent", noise_multiplier=1.0)
    ev = _ev("SelfComposedDpEvent", event=_ev("PoissonSampledDpEvent", sampling_probability=0.01,
                                              event=g), count=500)
    acc = to_accountant(ev)
    assert acc.history[0]["count"] == 500 and acc.history[0]["sampling"] == "poisson"
    assert acc.epsilon_bracket(1e-5) == pytest.approx(
        fdp.dpsgd(1.0, 0.01, 500).epsilon_bracket(1e-5), rel=1e-9)
    swor = _ev("SampledWithoutReplacementDpEvent", source_dataset_size=1000, sample_size=10,
               event=_ev("GaussianDpEvent", noise_multiplier=2.0))
    u = to_accountant(_ev("SelfComposedDpEvent", event=swor, count=100), neighbours="replace-one")
    assert u.history[0]["sampling"] == "uniform" and u.history[0]["sensitivity"] == 2.0
    with pytest.raises(ValueError, match="replace-one"):
        to_accountant(swor)
    with pytest.raises(ValueError, match="add-remove"):
        to_accountant(_ev("PoissonSampledDpEvent", sampling_probability=0.1, event=g),
                      neighbours="replace-one")
    # any other mechanism on a Poisson subsample: p f + (1 − p) Id in the add direction
    lap = _ev("PoissonSampledDpEvent", sampling_probability=0.1,
              event=_ev("LaplaceDpEvent", noise_multiplier=1.0))
    curve = dpevent_to_curve(_ev("SelfComposedDpEvent", event=lap, count=20))
    assert 0 < float(curve.epsilon(1e-6)) < float((fdp.Laplace(1.0) ** 20).epsilon(1e-6))


# ------------------------------------------------------------------------------ dp_accounting
def test_three_phase_schedule_agrees_with_dp_accounting() -> None:
    """σ = 1, 1.5, 2 for 1000, 2000, 4000 steps at p = 0.01, δ = 1e-5.

    Recorded with dp-accounting 0.6.0 (value_discretization_interval=1e-4, pessimistic):
        PLDAccountant(value_discretization_interval=1e-4).compose(
            ComposedDpEvent([SelfComposedDpEvent(PoissonSampledDpEvent(0.01,
            GaussianDpEvent(s)), n) for s, n in [(1, 1000), (1.5, 2000), (2, 4000)]]))
        get_epsilon(1e-5) = 2.697290600821395, get_delta(1.0) = 0.024759662049434066
    fdp's certified bracket at tol 1e-3: [2.697198, 2.697334].
    """
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    ev = dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(s)), n)
        for s, n in [(1.0, 1000), (1.5, 2000), (2.0, 4000)]
    ])
    acc = to_accountant(ev, tol=1e-4)  # (the default 1e-3 allows a bracket 2.7e-3 wide)
    lo, hi = acc.epsilon_bracket(1e-5)
    pld = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    pld.compose(ev)
    ref = pld.get_epsilon(1e-5)
    assert ref == pytest.approx(2.697290600821395, rel=1e-6)
    # dp_accounting's pessimistic estimate is an upper bound on the exact ε ≥ fdp's lower bound
    assert lo <= ref
    # ... and it is within its own discretization error (h = 1e-4 per unit loss) of fdp's upper
    assert abs(ref - hi) < 2e-4
    # the same from the accountant built by hand
    hand = fdp.Accountant(tol=1e-3).step(1.0, 0.01, steps=1000).step(1.5, 0.01, steps=2000)
    hand.step(2.0, 0.01, steps=4000)
    assert lo <= hand.epsilon(1e-5) and hand.epsilon(1e-5) <= hi * (1 + 1e-3)
    assert acc.delta(1.0) == pytest.approx(pld.get_delta(1.0), rel=5e-3)


def test_pld_import_and_export() -> None:
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    from fdp.integrations.dp_accounting import from_pld, to_pld

    f = from_pld(pldlib.from_gaussian_mechanism(1.0))
    assert f.kind == "approximation" and "not certified" in repr(f)
    assert float(f.epsilon(1e-5)) == pytest.approx(4.377178, abs=1e-3)
    trusted = from_pld(pldlib.from_gaussian_mechanism(1.0, sampling_prob=0.1), trust=True)
    assert trusted.kind == "exact"
    # export: the PLD of fdp's certified lower curve, losses rounded up: ε never below fdp's
    g = to_pld(fdp.Gaussian(1.0), value_discretization_interval=1e-4)
    assert 4.377178 <= g.get_epsilon_for_delta(1e-5) <= 4.3775
    h = fdp.dpsgd(1.0, 0.01, 200)
    exported = to_pld(h, value_discretization_interval=1e-4)
    assert exported.get_epsilon_for_delta(1e-5) >= float(h.epsilon(1e-5)) - 1e-9
    with pytest.raises(ValueError):
        to_pld(fdp.dpsgd_clt(1.0, 0.01, 100))


# ------------------------------------------------------------------------------ Opacus
class _FakeIAccountant(abc.ABC):
    """A test double of Opacus' IAccountant: the abstract interface and the concrete helpers
    that PrivacyEngine and get_noise_multiplier call."""

    @abc.abstractmethod
    def __init__(self) -> None:
        self.history: list[Any] = []

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
        def hook(optim: Any) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)

        return hook

    def state_dict(self, destination: Any = None) -> Any:
        destination = OrderedDict() if destination is None else destination
        destination["history"] = self.history
        destination["mechanism"] = self.__class__.mechanism
        return destination

    def load_state_dict(self, state_dict: Any) -> None:
        if state_dict["mechanism"] != self.__class__.mechanism:
            raise ValueError("wrong mechanism")
        self.history = state_dict["history"]


@pytest.fixture()
def fake_opacus(monkeypatch: pytest.MonkeyPatch) -> Any:
    registry: dict[str, Any] = {}
    pkg = types.ModuleType("opacus")
    acc_pkg = types.ModuleType("opacus.accountants")
    acc_mod = types.ModuleType("opacus.accountants.accountant")
    reg_mod = types.ModuleType("opacus.accountants.registry")
    acc_mod.IAccountant = _FakeIAccountant  # type: ignore[attr-defined]
    reg_mod.register_accountant = registry.__setitem__  # type: ignore[attr-defined]
    reg_mod.create_accountant = lambda mechanism: registry[mechanism]()  # type: ignore[attr-defined]
    for name, mod in [("opacus", pkg), ("opacus.accountants", acc_pkg),
                      ("opacus.accountants.accountant", acc_mod),
                      ("opacus.accountants.registry", reg_mod)]:
        monkeypatch.setitem(sys.modules, name, mod)
    import fdp.integrations.opacus as adapter

    adapter = importlib.reload(adapter)
    yield adapter, reg_mod
    monkeypatch.undo()
    importlib.reload(adapter)  # back to the stand-in base


def test_opacus_adapter_against_a_test_double(fake_opacus: Any) -> None:
    adapter, registry = fake_opacus
    assert adapter.HAVE_OPACUS and issubclass(adapter.FDPAccountant, _FakeIAccountant)
    acc = registry.create_accountant("fdp")  # what PrivacyEngine(accountant="fdp") does
    assert isinstance(acc, adapter.FDPAccountant) and acc.mechanism() == "fdp"
    # the optimizer hook after each step (with gradient accumulation: sample_rate × k)
    optim = types.SimpleNamespace(noise_multiplier=1.0, accumulated_iterations=1)
    hook = acc.get_optimizer_hook_fn(sample_rate=0.01)
    for _ in range(300):
        hook(optim)
    optim.noise_multiplier = 2.0
    for _ in range(300):
        hook(optim)
    assert len(acc) == 600 and acc.history == [(1.0, 0.01, 300), (2.0, 0.01, 300)]
    eps = acc.get_epsilon(delta=1e-5)
    ref = fdp.Accountant().step(1.0, 0.01, steps=300).step(2.0, 0.01, steps=300)
    assert eps == ref.epsilon(1e-5)
    lo, hi = acc.get_epsilon_bracket(1e-5)
    assert lo <= eps <= hi * (1 + 1e-3)
    # more steps extend the cached fdp accountant
    inner = acc.accountant()
    hook(optim)
    assert acc.accountant() is inner and acc.accountant().steps == 601
    # checkpoint through Opacus' state dict
    state = acc.state_dict()
    fresh = registry.create_accountant("fdp")
    fresh.load_state_dict(state)
    assert fresh.get_epsilon(1e-5) == acc.get_epsilon(1e-5)
    # get_noise_multiplier assigns the history directly
    fresh.history = [(1.0, 0.01, 1000)]
    assert fresh.get_epsilon(1e-5) == pytest.approx(float(fdp.dpsgd(1.0, 0.01, 1000).epsilon(1e-5)),
                                                    rel=2e-3)
    assert "# Privacy report" in fresh.report(deltas=(1e-5,)).markdown()


def test_opacus_adapter_without_opacus() -> None:
    from fdp.integrations import opacus as adapter

    acc = adapter.FDPAccountant()
    assert acc.get_epsilon(1e-5) == 0.0 and len(acc) == 0
    acc.step(noise_multiplier=1.0, sample_rate=0.01)
    state = acc.state_dict()
    assert state["mechanism"] == "fdp"  # a string, as Opacus ≥ 1.6 stores it
    other = adapter.FDPAccountant()
    other.load_state_dict(state)
    assert other.history == [(1.0, 0.01, 1)]
    with pytest.raises(ValueError):
        other.load_state_dict({"history": [], "mechanism": "rdp"})


# The real-package tests (a PrivacyEngine training loop, Opacus' RDP and PRV accountants,
# checkpoints) are in tests/test_opacus.py.


def test_fdp_imports_without_torch_or_opacus() -> None:
    """fdp and both adapters import with torch, Opacus and dp_accounting unavailable."""
    import subprocess
    import sys as _sys

    code = (
        "import sys\n"
        "class Block:  # 'import torch' and the others raise ImportError, as if not installed\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'opacus', 'dp_accounting'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import fdp, fdp.integrations.opacus as a, fdp.integrations.dp_accounting\n"
        "assert not a.HAVE_OPACUS and not a.register()\n"
        "acc = a.FDPAccountant()\n"
        "acc.step(noise_multiplier=1.0, sample_rate=0.01)\n"
        "assert len(acc) == 1 and acc.get_epsilon(1e-5) > 0\n"
    )
    done = subprocess.run([_sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    # and importing fdp alone never loads torch, even where it is installed
    code = "import sys, fdp; assert 'torch' not in sys.modules and 'opacus' not in sys.modules"
    done = subprocess.run([_sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
