"""Fixtures of the analysis tests."""

import copy

import pytest


@pytest.fixture
def results(computed):
    """A copy of the module's `computed` results for one test, which may change it."""
    return copy.deepcopy(computed)
