"""batchdyn: rigid-body dynamics for thousands of robot states per call.

    import numpy as np, batchdyn
    model = batchdyn.load(batchdyn.model_path("humanoid.urdf"), root="free")  # a shipped model
    batch = batchdyn.Batch(model, 4096, dtype=np.float32)   # SIMD lanes x threads
    batch.q[:] = ...                                          # NumPy views of the engine's memory
    batch.step(1e-3)                                          # GIL released while it runs
    torch.from_numpy(batch.qdd)                               # shares memory, no copy

Errors (bad files, names, sizes, dtypes) raise batchdyn.Error, a ValueError.
"""
import json as _json
import warnings as _warnings

import numpy as _np

from ._batchdyn import (  # noqa: F401
    BatchFloat32,
    BatchFloat64,
    Error,
    Model,
    aba,
    candidate_states,
    constrained_forward_dynamics,
    crba,
    delassus,
    dense_contact_step,
    lcaba,
    project_to_constraints,
    proxbbo,
    rnea,
    a_to_mujoco,
    mjcf_supported,
    mujoco_header_version,
    mujoco_library_path,
    q_from_mujoco,
    q_to_mujoco,
    simd_width_float32,
    simd_width_float64,
    v_from_mujoco,
    v_to_mujoco,
    _set_mujoco_library,
    _status_table,
)
from ._batchdyn import load as _load
from ._config import VERSION as __version__
from .models import model_path, models_dir

__all__ = ["load", "Batch", "model_path", "models_dir", "Model", "Error", "aba", "rnea", "crba", "constrained_forward_dynamics", "lcaba", "proxbbo", "project_to_constraints",
           "delassus", "dense_contact_step", "STATUS_NAMES", "STATUS_REPORTS", "mjcf_supported", "mujoco_header_version",
           "mujoco_library_path", "q_from_mujoco", "q_to_mujoco", "v_from_mujoco", "v_to_mujoco", "a_to_mujoco"]



def _use_mujoco_wheel():
    """MJCF is compiled by libmujoco: the `mujoco` wheel's, found without importing it (unless
    BATCHDYN_LIBMUJOCO names another)."""
    import glob
    import importlib.util
    import os

    if not mjcf_supported() or os.environ.get("BATCHDYN_LIBMUJOCO"):
        return
    spec = importlib.util.find_spec("mujoco")
    if spec is None or spec.origin is None:
        return  # load() of an MJCF file then says how to get it
    libraries = sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), "libmujoco.so.*")))
    if libraries:
        _set_mujoco_library(libraries[-1])


_use_mujoco_wheel()

# Values of Batch.status (uint8): batch/env_status.hpp's table.
STATUS_NAMES = {code: name for code, name, _ in _status_table}
# The codes that are reports on a state that was stepped (a solver hit its cap, loops drifted, a
# contact went deep); the others but 0 are failures, where nothing was computed.
STATUS_REPORTS = frozenset(code for code, _, report in _status_table if report)


def load(path, root="fixed", constraints=None, closure="duplicate", balance_inertia=False, strict_inertia=False, contacts=None,
         self_collision=False):
    """Loads a robot: an MJCF file (MuJoCo's XML, compiled by MuJoCo itself; it sets its own root,
    so leave `root` as it is), a URDF or an SDF (root "fixed" or "free") or a scene JSON, and optionally
    a JSON file of constraints (also "lock_joints", "armature", "damping"). An SDF's loops
    (links with several parent joints) close as Pinocchio closes them, closure="duplicate"
    (duplicate link + 6D weld), or by cut joints, closure="cut" (connect / revolute / weld).

    A rotational inertia that violates the triangle inequality loads as written (as in
    Pinocchio) and is listed in model.inertia_warnings; balance_inertia=True repairs it,
    strict_inertia=True refuses it (MuJoCo's rule).

    Contacts: a URDF's <collision> spheres, boxes, cylinders and meshes (STL, OBJ or COLLADA,
    through their convex hull; a mesh file not found is skipped, listed in
    model.info()["contacts"]["skipped"]) load as collision geometry, and a model with a free-flyer
    root gets a ground plane at z = 0 (a warning says so when such a model has no candidate left:
    it would fall through the ground); contacts="file.json" sets the ground, friction, margins
    and adds geometry (topology/contacts.hpp documents the format). An MJCF file's geoms collide
    with the ground and the world's geoms as in MuJoCo; self_collision=True makes the robot's
    geoms collide with each other too, as MuJoCo's filter lets them (off by default: it
    multiplies the step's cost; the pairs left out are counted in model.info()["contacts"]["skipped"])."""
    model = _load(str(path), root, None if constraints is None else str(constraints), closure, bool(balance_inertia),
                  bool(strict_inertia), None if contacts is None else str(contacts), bool(self_collision))
    if model.contact_warning:
        _warnings.warn(model.contact_warning, stacklevel=2)
    return model


def _info(self):
    """The model as a dict: the same document as `batchdyn info --json`."""
    return _json.loads(self.info_json())


Model.info = _info


def Batch(model, num_envs, dtype=_np.float32, threads=0):
    """N environments of `model` stepped together in `dtype` (float32 or float64) on `threads`
    threads (0 = all cores). Returns a BatchFloat32 or BatchFloat64."""
    dtype = _np.dtype(dtype)
    if dtype == _np.float32:
        return BatchFloat32(model, int(num_envs), int(threads))
    if dtype == _np.float64:
        return BatchFloat64(model, int(num_envs), int(threads))
    raise Error(f"Batch: dtype must be float32 or float64, got {dtype}")
