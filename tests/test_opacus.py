"""fdp.integrations.opacus against the real Opacus package: a PrivacyEngine run on a toy model.

CI installs torch and Opacus (the ``dev`` extra), so these tests run there; under ``CI=true`` a
missing torch or Opacus is an error, not a skip. Elsewhere they are skipped without torch.

References are not computed by fdp: Opacus' own RDP accountant (Mironov 2017; Mironov, Talwar &
Zhang 2019), an upper bound looser than the exact ε, and its PRV accountant (Gopi, Lee & Wutschitz
2021), an upper bound within its ``eps_error`` of the exact ε.
"""

from __future__ import annotations

import importlib
import os
import warnings
from typing import Any

import pytest

import fdp

if os.environ.get("CI") == "true":  # .ci/run installs the dev extra, so both must be there
    import opacus
    import torch
else:
    torch = pytest.importorskip("torch")
    opacus = pytest.importorskip("opacus")

from opacus import PrivacyEngine  # noqa: E402
from opacus.accountants import create_accountant  # noqa: E402
from opacus.accountants.accountant import IAccountant  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

import fdp.integrations.opacus as adapter  # noqa: E402

SIGMA, BATCH, N, STEPS, DELTA = 1.1, 20, 200, 5, 1e-5
RATE = BATCH / N  # Opacus' Poisson loader samples each example with probability 1/len(loader)


def _private_run(accountant: str = "fdp", steps: int = STEPS, seed: int = 0) -> tuple[Any, ...]:
    """A linear model trained for ``steps`` DP-SGD steps through PrivacyEngine.make_private."""
    torch.manual_seed(seed)
    x, y = torch.randn(N, 5), torch.randint(0, 2, (N,))
    model = torch.nn.Linear(5, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=BATCH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus' notices: secure_mode off, backward hooks
        engine = PrivacyEngine(accountant=accountant)
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader,
            noise_multiplier=SIGMA, max_grad_norm=1.0,
        )
        loss = torch.nn.CrossEntropyLoss()
        done = 0
        while done < steps:
            for xb, yb in loader:
                if done == steps:
                    break
                optimizer.zero_grad()
                loss(model(xb), yb).backward()
                optimizer.step()
                done += 1
    return engine, model, optimizer


def test_the_real_base_class_and_registry() -> None:
    assert adapter.HAVE_OPACUS
    assert issubclass(adapter.FDPAccountant, IAccountant)
    acc = create_accountant("fdp")
    assert isinstance(acc, adapter.FDPAccountant) and acc.mechanism() == "fdp"
    # re-importing the adapter registers the new class again (no "already registered" error)
    reloaded = importlib.reload(adapter)
    assert type(create_accountant("fdp")) is reloaded.FDPAccountant


def test_privacy_engine_training_loop_with_the_fdp_accountant() -> None:
    engine, _, optimizer = _private_run()
    acc = engine.accountant
    assert isinstance(acc, adapter.FDPAccountant)
    assert len(acc) == STEPS and acc.history == [(SIGMA, RATE, STEPS)]
    assert optimizer.noise_multiplier == SIGMA
    eps = engine.get_epsilon(DELTA)
    # the number of fdp's accountant for the same schedule, bit for bit
    assert eps == fdp.Accountant(tol=1e-3).step(SIGMA, RATE, steps=STEPS).epsilon(DELTA)
    # ... and a certified upper bound on the exact ε of fdp.dpsgd, within the engine tolerance
    lo, hi = fdp.dpsgd(SIGMA, RATE, STEPS).epsilon_bracket(DELTA)
    assert lo <= eps <= hi * (1 + 1e-3)


def test_epsilon_against_opacus_own_accountants() -> None:
    engine, _, _ = _private_run()
    eps = engine.get_epsilon(DELTA)
    lo, _ = engine.accountant.get_epsilon_bracket(DELTA)
    history = list(engine.accountant.history)
    rdp, prv = create_accountant("rdp"), create_accountant("prv")
    rdp.history, prv.history = list(history), list(history)
    e_rdp = rdp.get_epsilon(DELTA)
    e_prv = prv.get_epsilon(DELTA, eps_error=0.01)
    # RDP converts through Rényi divergences: a valid but looser upper bound
    assert e_rdp >= eps
    assert e_rdp <= 1.5 * eps
    # PRV's upper bound is within eps_error (0.01) of the exact ε, which is ≥ fdp's lower bound
    assert e_prv >= lo
    assert abs(e_prv - eps) <= 0.02
    # the same holds over a longer, heterogeneous schedule of the kind Opacus records
    sched = [(1.0, 0.01, 500), (1.5, 0.01, 500)]
    ours = adapter.FDPAccountant()
    ours.history = list(sched)
    rdp.history, prv.history = list(sched), list(sched)
    e, (l2, _) = ours.get_epsilon(DELTA), ours.get_epsilon_bracket(DELTA)
    assert rdp.get_epsilon(DELTA) >= e
    e_prv = prv.get_epsilon(DELTA, eps_error=0.01)
    assert e_prv >= l2 and abs(e_prv - e) <= 0.02


def test_checkpoint_round_trip_through_the_privacy_engine(tmp_path: Any) -> None:
    engine, model, optimizer = _private_run()
    path = tmp_path / "checkpoint.pt"
    engine.save_checkpoint(path=path, module=model, optimizer=optimizer)
    fresh, model2, optimizer2 = _private_run(steps=1, seed=1)
    assert len(fresh.accountant) == 1
    fresh.load_checkpoint(path=path, module=model2, optimizer=optimizer2)
    assert isinstance(fresh.accountant, adapter.FDPAccountant)
    assert fresh.accountant.history == engine.accountant.history
    assert fresh.get_epsilon(DELTA) == engine.get_epsilon(DELTA)
    # the state dict itself, and Opacus' check of the mechanism
    state = engine.accountant.state_dict()
    assert state["mechanism"] == "fdp"
    other = adapter.FDPAccountant()
    other.load_state_dict(state)
    assert other.get_epsilon(DELTA) == engine.get_epsilon(DELTA)
    with pytest.raises(ValueError, match="rdp"):
        other.load_state_dict(create_accountant("rdp").state_dict())


def test_make_private_with_epsilon_calibrates_with_fdp() -> None:
    """Opacus' get_noise_multiplier bisects σ with the accountant's get_epsilon."""
    torch.manual_seed(0)
    x, y = torch.randn(N, 5), torch.randint(0, 2, (N,))
    model = torch.nn.Linear(5, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = PrivacyEngine(accountant="fdp")
        _, optimizer, _ = engine.make_private_with_epsilon(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=DataLoader(TensorDataset(x, y), batch_size=BATCH),
            target_epsilon=2.0, target_delta=DELTA, epochs=1, max_grad_norm=1.0,
        )
    sigma = optimizer.noise_multiplier
    steps = int(1 / RATE)  # one epoch
    assert fdp.dpsgd(sigma, RATE, steps).epsilon(DELTA) <= 2.0
    # Opacus stops its bisection within epsilon_tolerance = 0.01 of the target
    assert fdp.dpsgd(sigma, RATE, steps).epsilon(DELTA) >= 2.0 - 0.02
    # fdp's own calibration of the same target is no larger (it searches to rtol 1e-3)
    assert fdp.calibrate_dpsgd(RATE, steps, eps=2.0, delta=DELTA) <= sigma * (1 + 1e-3)
