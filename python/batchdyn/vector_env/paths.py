"""Where the shipped robot files are."""
import os


def models_dir():
    """The shipped models: $BATCHDYN_MODELS, the source tree's, or the install's share/batchdyn/models."""
    from .._config import MODELS_DIRS  # written by CMake: the source tree's and the install's models/

    for candidate in [os.environ.get("BATCHDYN_MODELS", "")] + list(MODELS_DIRS):
        if candidate and os.path.exists(os.path.join(candidate, "cartpole.urdf")):
            return os.path.abspath(candidate)
    raise FileNotFoundError("batchdyn models not found: set BATCHDYN_MODELS to the repository's models/ folder")


def model_path(name):
    """models_dir()/name."""
    return os.path.join(models_dir(), name)
