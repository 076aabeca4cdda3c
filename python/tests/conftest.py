import os

import pytest

MODELS = os.environ.get("BATCHDYN_MODELS", os.path.join(os.path.dirname(__file__), "..", "..", "models"))


@pytest.fixture
def models_dir():
    return MODELS
