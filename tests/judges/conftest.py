"""The fake OpenAI-compatible judge, served on 127.0.0.1 for one test."""

from __future__ import annotations

import pytest

from .fake_judge import FakeJudge, Served


@pytest.fixture
def fake():
    judge = FakeJudge()
    served = Served(judge)
    yield judge
    served.stop()
