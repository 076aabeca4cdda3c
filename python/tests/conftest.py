"""What the Python tests share: where the repository's files are (the models, the robot corpus,
the examples and the docs, from the environment ctest sets or relative to this folder), and the
`slow` marker (`python3 -m pytest -m "not slow"` runs the fast part)."""
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.environ.get("BATCHDYN_MODELS", os.path.join(ROOT, "models"))
ROBOTS = os.path.join(ROOT, "tests", "robots")
EXAMPLES = os.environ.get("BATCHDYN_EXAMPLES", os.path.join(ROOT, "examples"))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: minutes of work (PPO training, torchrun); ctest runs them under the label 'slow'")


@pytest.fixture
def models_dir():
    return MODELS


@pytest.fixture
def robots_dir():
    return ROBOTS


@pytest.fixture
def examples_dir():
    return EXAMPLES
