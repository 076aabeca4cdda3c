"""Observations that locomotion tasks need, read from a Batch without the free-flyer bookkeeping.

For a model whose root is a free flyer, Batch.q is [base position (3), base quaternion xyzw (4),
joint positions] and Batch.v is [base linear velocity (3), base angular velocity (3), joint
velocities], the base velocities in the base frame (Pinocchio's convention). For a fixed root the
joint parts are all of q and v. Each function returns an (N, k) array; `out` (optional) receives
it without allocating.
"""
import numpy as np


def has_free_root(model):
    """True when the model's first joint is a free flyer (7 q, 6 v)."""
    return model.info()["joints"][0]["type"] == "free_flyer"


def _copied(view, out):
    """view copied into out (allocated when None)."""
    if out is None:
        return view.copy()
    out[...] = view
    return out


def joint_positions(batch, free_root, out=None):
    """The joints' positions, (N, nq - 7) for a free root, else q itself (N, nq)."""
    return _copied(batch.q[:, 7:] if free_root else batch.q, out)


def joint_velocities(batch, free_root, out=None):
    """The joints' velocities, (N, nv - 6) for a free root, else v (N, nv)."""
    return _copied(batch.v[:, 6:] if free_root else batch.v, out)


def base_linear_velocity(batch, out=None):
    """The base's linear velocity in the base frame (m/s), (N, 3). Needs a free root."""
    return _copied(batch.v[:, 0:3], out)


def base_angular_velocity(batch, out=None):
    """The base's angular velocity in the base frame (rad/s), (N, 3). Needs a free root."""
    return _copied(batch.v[:, 3:6], out)


def rotate_into_base(quaternion_xyzw, vector):
    """R^T vector for unit quaternions (x, y, z, w) of shape (N, 4) and vectors (N, 3) or (3,): a
    world vector in the base frame."""
    u, w = -quaternion_xyzw[:, 0:3], quaternion_xyzw[:, 3:4]  # the conjugate rotates world -> base
    t = 2.0 * np.cross(u, vector)
    return vector + w * t + np.cross(u, t)


def gravity_in_base(quaternion_xyzw, out=None):
    """R^T (0, 0, -1) for unit quaternions (x, y, z, w), (N, 4) -> (N, 3): minus the third row of
    R, written out (a column at a time: no (N, 3, 3) temporaries)."""
    x, y, z, w = (quaternion_xyzw[:, k] for k in range(4))
    if out is None:
        out = np.empty((quaternion_xyzw.shape[0], 3), dtype=quaternion_xyzw.dtype)
    out[:, 0] = 2 * (y * w - x * z)
    out[:, 1] = -2 * (y * z + x * w)
    out[:, 2] = 2 * (x * x + y * y) - 1
    return out


def projected_gravity(batch, out=None):
    """The unit vector of gravity (world -z) in the base frame, (N, 3): (0, 0, -1) when upright.
    Needs a free root."""
    return gravity_in_base(batch.q[:, 3:7], out)
