"""Fixtures for the kernel tests: one seeded random generator per test, so every failure reproduces."""

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh generator seeded with 0: the same numbers on every run and in every test."""
    return np.random.default_rng(0)
