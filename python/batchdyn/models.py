"""The robot files shipped with batchdyn (models/ of the repository; package data of the wheel)."""
import os


def models_dir():
    """The shipped models: $BATCHDYN_MODELS, the source tree's, or the install's share/batchdyn/models."""
    from ._config import MODELS_DIRS  # written by CMake: the source tree's and the install's models/

    for candidate in [os.environ.get("BATCHDYN_MODELS", "")] + list(MODELS_DIRS):
        if candidate and os.path.exists(os.path.join(candidate, "cartpole.urdf")):
            return os.path.abspath(candidate)
    raise FileNotFoundError("batchdyn models not found: set BATCHDYN_MODELS to the repository's models/ folder")


def model_path(name):
    """models_dir()/name, e.g. model_path("humanoid.urdf"); FileNotFoundError, with what there is, if absent."""
    path = os.path.join(models_dir(), name)
    if not os.path.exists(path):
        shipped = sorted(f for f in os.listdir(models_dir()) if f.endswith((".urdf", ".sdf", ".json")))
        raise FileNotFoundError(f"no shipped model {name!r} in {models_dir()}; shipped: {', '.join(shipped)}")
    return path
