"""batchdyn's models, states and constraints in Pinocchio's terms, to compare numbers with it.

    import pinocchio as pin, batchdyn
    from batchdyn import to_pinocchio
    model = batchdyn.load(path, root="free")
    pin_model = to_pinocchio.build_model(path, root="free")
    states = to_pinocchio.StateMap(model, pin_model)
    qdd = states.v_from_pin(pin.aba(pin_model, pin_model.createData(), states.q(q), states.v(v), states.v(tau)))

What is mapped, and why (docs/conventions.md):
- Joints are matched by name. Both libraries number them depth-first from the root, a link's
  child joints in urdfdom's order, so the permutation is the identity on every shipped robot;
  it is still built from the names, not assumed.
- A continuous joint is one angle θ in batchdyn and (cos θ, sin θ) in Pinocchio (its
  JointModelRUBX/Y/Z); same velocity.
- Quaternions (free flyer, ball joint) are (x, y, z, w) in both; a free flyer's velocity is
  [linear; angular] of the base in the base frame in both.
- A constraint's frame k is given in the frame of the joint that moves its body k: that is
  Pinocchio's RigidConstraintModel(joint_k, placement_k). connect is CONTACT_3D, weld is
  CONTACT_6D, both with rows in frame 1 (ReferenceFrame.LOCAL); batchdyn's 5-row revolute
  constraint has no Pinocchio counterpart.

Needs the `pin` package (Pinocchio 4).
"""
import numpy as np
import pinocchio as pin


def build_model(path, root="fixed"):
    """Pinocchio's model of the URDF or SDF at path, with the same root ("fixed" or "free")."""
    root_joint = pin.JointModelFreeFlyer() if root == "free" else None
    if str(path).endswith(".sdf"):
        if not pin.WITH_SDFORMAT:
            raise ValueError(f"{path}: this Pinocchio ({pin.__version__}) is built without SDFormat and cannot read SDF files "
                             "(PyPI's pin is)")
        args = (str(path), root_joint) if root_joint is not None else (str(path),)
        return pin.buildModelsAndConstraintsFromSdf(*args)[0]
    return pin.buildModelFromUrdf(str(path), root_joint) if root_joint is not None else pin.buildModelFromUrdf(str(path))


class StateMap:
    """Maps configurations, velocities and matrices between a batchdyn Model and a Pinocchio model
    of the same robot. Arrays may have leading batch dimensions."""

    def __init__(self, model, pin_model):
        self.nq, self.nv = model.nq, model.nv
        if pin_model.nv != model.nv:
            raise ValueError(f"{model.name}: batchdyn has nv = {model.nv}, Pinocchio {pin_model.nv}")
        q_from, q_to, angles, v_perm = [], [], [], np.empty(model.nv, dtype=np.int64)
        for joint in model.info()["joints"]:
            if not pin_model.existJointName(joint["name"]):
                raise ValueError(f"{model.name}: batchdyn's joint {joint['name']!r} is not in Pinocchio's model")
            pj = pin_model.joints[pin_model.getJointId(joint["name"])]
            if pj.nv != joint["nv"]:
                raise ValueError(f"{model.name}: joint {joint['name']!r} has nv = {joint['nv']} in batchdyn, {pj.nv} in Pinocchio")
            v_perm[pj.idx_v:pj.idx_v + pj.nv] = np.arange(joint["idx_v"], joint["idx_v"] + joint["nv"])
            if joint["nq"] == 1 and pj.nq == 2:  # continuous: θ -> (cos θ, sin θ)
                angles.append((joint["idx_q"], pj.idx_q))
            elif joint["nq"] == pj.nq:
                q_from += range(joint["idx_q"], joint["idx_q"] + joint["nq"])
                q_to += range(pj.idx_q, pj.idx_q + pj.nq)
            else:
                raise ValueError(f"{model.name}: joint {joint['name']!r} has nq = {joint['nq']} in batchdyn, {pj.nq} in Pinocchio")
        self.pin_nq = pin_model.nq
        self._q_from, self._q_to = np.array(q_from, dtype=np.int64), np.array(q_to, dtype=np.int64)
        self._angles = np.array(angles, dtype=np.int64).reshape(-1, 2)
        self._v_perm = v_perm  # v_pin = v[..., v_perm]
        self._v_inverse = np.argsort(v_perm)

    def q(self, q):
        """batchdyn's configuration -> Pinocchio's."""
        q = np.asarray(q, dtype=np.float64)
        out = np.zeros(q.shape[:-1] + (self.pin_nq,))
        out[..., self._q_to] = q[..., self._q_from]
        theta = q[..., self._angles[:, 0]]
        out[..., self._angles[:, 1]] = np.cos(theta)
        out[..., self._angles[:, 1] + 1] = np.sin(theta)
        return out

    def v(self, v):
        """batchdyn's velocity (or acceleration, torque) vector -> Pinocchio's."""
        return np.asarray(v, dtype=np.float64)[..., self._v_perm]

    def v_from_pin(self, v):
        """Pinocchio's velocity (or acceleration, torque) vector -> batchdyn's; on a k x nv matrix
        (a Jacobian), its columns."""
        return np.asarray(v, dtype=np.float64)[..., self._v_inverse]

    def matrix_from_pin(self, m):
        """An nv x nv matrix of Pinocchio's (the mass matrix) -> batchdyn's joint order."""
        return np.asarray(m)[np.ix_(self._v_inverse, self._v_inverse)]



def _se3(h):
    return pin.SE3(np.array(h[:3, :3]), np.array(h[:3, 3]))


def constraint_models(model, pin_model):
    """Pinocchio's RigidConstraintModel for each of the model's constraints, in the model's
    order (so Pinocchio's stacked rows are batchdyn's). A revolute constraint raises ValueError."""
    kinds = {"connect": pin.ContactType.CONTACT_3D, "weld": pin.ContactType.CONTACT_6D}
    out = pin.StdVec_RigidConstraintModel()
    for c in model.constraints:
        if c["type"] not in kinds:
            raise ValueError(f"{model.name}: constraint {c['name']!r} is a {c['type']} constraint, which Pinocchio does not have")
        joint1 = pin_model.getJointId(c["joint1"])
        joint2 = 0 if c["body2"] == "world" else pin_model.getJointId(c["joint2"])
        rcm = pin.RigidConstraintModel(kinds[c["type"]], pin_model, joint1, _se3(c["placement1"]), joint2,
                                       _se3(c["placement2"]), pin.ReferenceFrame.LOCAL)
        rcm.name = c["name"]
        out.append(rcm)
    return out
