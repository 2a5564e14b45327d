"""Test configuration: hypothesis runs derandomized, so the suite is reproducible in CI."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("fdp", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("fdp")
