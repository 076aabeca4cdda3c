"""Pinocchio as the oracle: batchdyn's dynamics are Pinocchio's, robot by robot.

Every robot of tests/robots/ (fixed and free-flyer root) and Cassie from SDF, on random states:
ABA, RNEA, CRBA and the frames' placements and velocities to 1e-10; the batched kernels (float64
lanes) too. Constrained forward dynamics (welds and connects, external and internal loops)
against pinocchio.constraintDynamics (its proximal solver) to 1e-8, and the Delassus matrix
against computeDelassusMatrix to 1e-10. Errors are relative: max |ours - Pinocchio's| over
max(1, max |Pinocchio's|). How the two libraries' joints, quaternions and constraint frames
correspond is batchdyn.to_pinocchio's docstring (docs/conventions.md).
"""
import atexit
import functools
import glob
import json
import os
import shutil
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

import batchdyn
from batchdyn import to_pinocchio
from conftest import MODELS, ROBOTS

STATES = 4  # random states per robot


def _root_link_is_world(path):
    if not path.endswith(".urdf"):
        return False
    root = ET.parse(path).getroot()
    children = {j.find("child").get("link") for j in root.findall("joint")}  # the robot's joints, not a transmission's
    return any(link.get("name") == "world" and link.get("name") not in children for link in root.findall("link"))


ROBOT_FILES = sorted(glob.glob(os.path.join(ROBOTS, "*.urdf"))) + [os.path.join(ROBOTS, "cassie.sdf")]
# A root link named `world` cannot be set free (in either library): those robots are fixed only.
TREE_CASES = [(path, root) for path in ROBOT_FILES for root in ("fixed", "free")
              if not (root == "free" and _root_link_is_world(path))]


def skip_without_sdformat(path):
    if path.endswith(".sdf") and not pin.WITH_SDFORMAT:
        pytest.skip(f"this Pinocchio ({pin.__version__}, PyPI's pin) is built without SDFormat: it cannot read {os.path.basename(path)}")


def case_id(case):
    return f"{os.path.basename(case[0])}-{case[1]}"


SCRATCH = tempfile.mkdtemp(prefix="batchdyn_pinocchio_parity_")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)
ROTOR_INERTIA = 0.01  # kg m^2, on the joints that move no mass (see robot())


@functools.lru_cache(maxsize=None)
def robot(path, root, constraints=None):
    """(batchdyn Model, Pinocchio Model, StateMap) of one robot, loaded once per test run.
    constraints: a constraint file, or a JSON list of constraints (a string: cached by value). A robot with joints that move no
    mass (a gripper's massless fingers: M(q) is singular, and batchdyn refuses forward dynamics
    with the remedies) gets ROTOR_INERTIA of armature on those joints, in both libraries."""
    spec = {}
    if constraints is not None and constraints.startswith("["):
        spec = {"constraints": json.loads(constraints)}
    elif constraints is not None:
        with open(constraints) as f:
            spec = json.load(f)
    singular = batchdyn.load(path, root=root).info()["singular_joints"]
    if singular:
        spec["armature"] = {name: ROTOR_INERTIA for name in singular}
    file = None
    if spec:
        file = os.path.join(SCRATCH, f"{len(os.listdir(SCRATCH))}.json")
        with open(file, "w") as f:
            json.dump(spec, f)
    model = batchdyn.load(path, root=root, constraints=file)
    pin_model = to_pinocchio.build_model(path, root)
    for name in singular:
        joint = pin_model.joints[pin_model.getJointId(name)]
        pin_model.armature[joint.idx_v:joint.idx_v + joint.nv] = ROTOR_INERTIA
    return model, pin_model, to_pinocchio.StateMap(model, pin_model)


def random_states(model, count, seed):
    """count random (q, v, tau): positions in ±1 m, unit quaternions, angles in ±pi, prismatic
    offsets in ±0.3 m, velocities and torques N(0, 1)."""
    rng = np.random.default_rng(seed)
    q = np.zeros((count, model.nq))
    for joint in model.info()["joints"]:
        i, nq, nv = joint["idx_q"], joint["nq"], joint["nv"]
        if nq == 7:  # free flyer: position, quaternion (x, y, z, w)
            q[:, i:i + 3] = rng.uniform(-1, 1, (count, 3))
            quat = rng.normal(size=(count, 4))
            q[:, i + 3:i + 7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        elif nq == 4 and nv == 3:  # ball joint
            quat = rng.normal(size=(count, 4))
            q[:, i:i + 4] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        elif joint["type"] == "prismatic":
            q[:, i] = rng.uniform(-0.3, 0.3, count)
        else:
            q[:, i] = rng.uniform(-np.pi, np.pi, count)
    return q, rng.normal(size=(count, model.nv)), rng.normal(size=(count, model.nv))


def relative_error(ours, theirs):
    theirs = np.asarray(theirs)
    return float(np.max(np.abs(np.asarray(ours) - theirs), initial=0.0) / max(1.0, float(np.max(np.abs(theirs), initial=0.0))))


def expect_close(name, quantity, ours, theirs, tolerance):
    error = relative_error(ours, theirs)
    assert error <= tolerance, f"{name}: {quantity} differs from Pinocchio's by {error:.3e} (relative; tolerance {tolerance:.0e})"


def pin_crba(pin_model, pin_data, q):
    m = pin.crba(pin_model, pin_data, q)  # the upper triangle
    return np.triu(m) + np.triu(m, 1).T


@pytest.mark.parametrize("case", TREE_CASES, ids=case_id)
def test_aba_rnea_and_crba_are_pinocchios(case):
    skip_without_sdformat(case[0])
    model, pin_model, states = robot(*case)
    pin_data = pin_model.createData()
    q, v, tau = random_states(model, STATES, seed=1)
    for s in range(STATES):
        pq, pv, ptau = states.q(q[s]), states.v(v[s]), states.v(tau[s])
        where = f"{case_id(case)} state {s}"
        expect_close(where, "ABA's qdd", batchdyn.aba(model, q[s], v[s], tau[s]),
                     states.v_from_pin(pin.aba(pin_model, pin_data, pq, pv, ptau)), 1e-10)
        expect_close(where, "RNEA's tau", batchdyn.rnea(model, q[s], v[s], tau[s]),
                     states.v_from_pin(pin.rnea(pin_model, pin_data, pq, pv, ptau)), 1e-10)
        expect_close(where, "CRBA's M", batchdyn.crba(model, q[s]), states.matrix_from_pin(pin_crba(pin_model, pin_data, pq)), 1e-10)


@pytest.mark.parametrize("case", TREE_CASES, ids=case_id)
def test_batched_forward_dynamics_in_float64_is_pinocchios_aba(case):
    skip_without_sdformat(case[0])
    model, pin_model, states = robot(*case)
    pin_data = pin_model.createData()
    q, v, tau = random_states(model, 2 * STATES + 1, seed=2)  # more than one lane block, a partial one
    batch = batchdyn.Batch(model, len(q), dtype=np.float64, threads=1)
    batch.effort_clamp, batch.passive_forces = False, False  # Pinocchio's FD: tau as given
    batch.q[:], batch.v[:], batch.tau[:] = q, v, tau
    batch.forward_dynamics()
    for s in range(len(q)):
        expected = states.v_from_pin(pin.aba(pin_model, pin_data, states.q(q[s]), states.v(v[s]), states.v(tau[s])))
        expect_close(f"{case_id(case)} env {s}", "the batched qdd", batch.qdd[s], expected, 1e-10)


def rotation_from_quaternion(xyzw):
    return pin.Quaternion(xyzw[3], *xyzw[:3]).normalized().toRotationMatrix()


@pytest.mark.parametrize("case", TREE_CASES, ids=case_id)
def test_every_links_placement_and_velocity_are_pinocchios(case):
    skip_without_sdformat(case[0])
    model, pin_model, states = robot(*case)
    pin_data = pin_model.createData()
    links = [f["name"] for f in model.info()["frames"] if f["kind"] == "link" and f["name"] != "world"]
    q, v, _ = random_states(model, STATES, seed=3)
    batch = batchdyn.Batch(model, STATES, dtype=np.float64, threads=1)
    batch.q[:], batch.v[:] = q, v
    batch.set_observed_frames(links)
    observed = batch.observe()  # (N, k, 13): position, quaternion xyzw, linear and angular velocity (world axes)
    for s in range(STATES):
        pin.forwardKinematics(pin_model, pin_data, states.q(q[s]), states.v(v[s]))
        pin.updateFramePlacements(pin_model, pin_data)
        for k, link in enumerate(links):
            frame = pin_model.getFrameId(link, pin.FrameType.BODY)
            assert frame < len(pin_model.frames), f"{case_id(case)}: link {link!r} is not a frame of Pinocchio's model"
            where = f"{case_id(case)} state {s} link {link}"
            placement = pin_data.oMf[frame]
            twist = pin.getFrameVelocity(pin_model, pin_data, frame, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            expect_close(where, "the position", observed[s, k, 0:3], placement.translation, 1e-10)
            expect_close(where, "the rotation", rotation_from_quaternion(observed[s, k, 3:7]), placement.rotation, 1e-10)
            expect_close(where, "the linear velocity", observed[s, k, 7:10], twist.linear, 1e-10)
            expect_close(where, "the angular velocity", observed[s, k, 10:13], twist.angular, 1e-10)


def at(xyz, rpy):
    return {"xyz": xyz, "rpy": rpy}


# Robots with constraints Pinocchio also has (welds and connects; batchdyn's revolute loops have
# no counterpart): the shipped files, and constraints written here with placements that are
# neither identities nor "hold", between two links (internal loops) and to the world.
CONSTRAINED_CASES = {
    "humanoid-feet welded": (os.path.join(MODELS, "humanoid.urdf"), "free", os.path.join(MODELS, "humanoid_feet.json")),
    "humanoid-feet and hands welded": (os.path.join(MODELS, "humanoid.urdf"), "free", os.path.join(MODELS, "humanoid_feet_hands.json")),
    "quadruped-feet connected": (os.path.join(MODELS, "quadruped.urdf"), "free", os.path.join(MODELS, "quadruped_feet.json")),
    "anymal_b-feet connected to each other and to the world": (os.path.join(ROBOTS, "anymal_b.urdf"), "free", [
        {"name": "front_feet", "type": "connect", "link1": "LF_FOOT", "link2": "RF_FOOT",
         "placement1": at([0.01, 0.02, -0.03], [0, 0, 0]), "placement2": at([-0.02, 0.0, 0.01], [0, 0, 0])},
        {"name": "left_hind_foot", "type": "connect", "link1": "LH_FOOT", "link2": "world",
         "placement1": at([0.0, 0.0, -0.02], [0, 0, 0]), "placement2": at([-0.3, 0.2, 0.0], [0, 0, 0])}]),
    "tiago_dual-grippers welded to each other": (os.path.join(ROBOTS, "tiago_dual.urdf"), "fixed", [
        {"name": "hands", "type": "weld", "link1": "arm_left_7_link", "link2": "arm_right_7_link",
         "placement1": at([0.0, 0.05, 0.1], [0.3, -0.2, 0.1]), "placement2": at([0.02, -0.05, 0.1], [-0.1, 0.2, 0.5])}]),
    "romeo-sole welded to the world, wrists connected": (os.path.join(ROBOTS, "romeo.urdf"), "free", [
        {"name": "left_sole", "type": "weld", "link1": "l_sole", "link2": "world",
         "placement1": at([0.01, 0.0, 0.0], [0.0, 0.1, 0.0]), "placement2": at([0.1, 0.2, 0.0], [0.0, 0.0, 0.4])},
        {"name": "wrists", "type": "connect", "link1": "l_wrist", "link2": "r_wrist",
         "placement1": at([0.05, 0.0, 0.0], [0, 0, 0]), "placement2": at([0.05, 0.0, 0.0], [0, 0, 0])}]),
}


def constrained_robot(name):
    path, root, constraints = CONSTRAINED_CASES[name]
    return robot(path, root, json.dumps(constraints) if isinstance(constraints, list) else constraints)


def pinocchio_constrained(pin_model, constraint_models):
    data = pin_model.createData()
    datas = pin.StdVec_RigidConstraintData()
    for cm in constraint_models:
        datas.append(cm.createData())
    pin.initConstraintDynamics(pin_model, data, constraint_models, datas)
    return data, datas


@pytest.mark.parametrize("name", CONSTRAINED_CASES)
def test_constrained_forward_dynamics_is_pinocchios_constraint_dynamics(name):
    model, pin_model, states = constrained_robot(name)
    cms = to_pinocchio.constraint_models(model, pin_model)
    data, datas = pinocchio_constrained(pin_model, cms)
    settings = pin.ProximalSettings(1e-14, 1e-10, 200)  # accuracy, mu, iterations
    q, v, tau = random_states(model, STATES, seed=4)
    for s in range(STATES):
        ours = batchdyn.constrained_forward_dynamics(model, q[s], v[s], tau[s])
        theirs = pin.constraintDynamics(pin_model, data, states.q(q[s]), states.v(v[s]), states.v(tau[s]), cms, datas, settings)
        expect_close(f"{name} state {s}", "the constrained qdd", ours["qdd"], states.v_from_pin(theirs), 1e-8)
        expect_close(f"{name} state {s}", "the constraint forces", ours["lambda"], data.lambda_c, 1e-8)


@pytest.mark.parametrize("name", CONSTRAINED_CASES)
def test_delassus_matrix_is_pinocchios(name):
    """The oracle is J M^-1 J^T from Pinocchio's constraint Jacobian (getConstraintsJacobian) and
    mass matrix. pinocchio.computeDelassusMatrix agrees with it, and with us, when every
    constraint holds a link to the world; for a constraint between two moving links Pinocchio
    4.1's computeDelassusMatrix differs from its own J M^-1 J^T (by 80 % on anymal_b's feet), so
    there it is not the oracle."""
    model, pin_model, states = constrained_robot(name)
    cms = to_pinocchio.constraint_models(model, pin_model)
    data, datas = pinocchio_constrained(pin_model, cms)
    external = all(c["body2"] == "world" for c in model.constraints)
    q, _, _ = random_states(model, STATES, seed=5)
    batch = batchdyn.Batch(model, STATES, dtype=np.float64, threads=1)
    batch.q[:] = q
    batched = batch.delassus()
    for s in range(STATES):
        pq = states.q(q[s])
        pin.computeJointJacobians(pin_model, data, pq)
        for cm, cd in zip(cms, datas):
            cm.calc(pin_model, data, cd)
        jacobian = states.v_from_pin(pin.getConstraintsJacobian(pin_model, data, cms, datas))
        mass = states.matrix_from_pin(pin_crba(pin_model, data, pq))
        theirs = jacobian @ np.linalg.solve(mass, jacobian.T)
        where = f"{name} state {s}"
        expect_close(where, "the Delassus matrix", batchdyn.delassus(model, q[s]), theirs, 1e-10)
        expect_close(where, "the batched Delassus matrix (PV-OSIMr)", batched[s], theirs, 1e-10)
        if external:
            expect_close(where, "computeDelassusMatrix", theirs,
                         pin.computeDelassusMatrix(pin_model, data, pq, cms, datas, 0.0), 1e-10)


def test_a_revolute_loop_is_refused_by_name_for_pinocchio():
    model = batchdyn.load(os.path.join(MODELS, "four_bar.urdf"))
    with pytest.raises(ValueError, match="coupler_rocker.*revolute"):
        to_pinocchio.constraint_models(model, to_pinocchio.build_model(os.path.join(MODELS, "four_bar.urdf")))
