"""Nothing a user does from Python crashes the interpreter: every entry point refuses what the C++
and CLI entry points refuse, with batchdyn.Error (a ValueError); views keep their memory alive;
calls on one Batch from several threads run one at a time."""
import gc
import json
import os
import threading

import numpy as np
import pytest

import batchdyn


def load(models_dir, name, root="fixed", constraints=None):
    path = os.path.join(models_dir, name)
    return batchdyn.load(path, root=root, constraints=None if constraints is None else os.path.join(models_dir, constraints))


# --- Degenerate but valid input, at every binding ---------------------------------------------

@pytest.mark.parametrize("name", ["constrained_forward_dynamics", "lcaba", "proxbbo"])
def test_constrained_solvers_refuse_a_model_without_constraints_like_the_cli(models_dir, name):
    for model in (load(models_dir, "humanoid.urdf", "free"), load(models_dir, "cartpole.urdf")):
        q, z = model.neutral(), np.zeros(model.nv)
        with pytest.raises(batchdyn.Error, match=f"batchdyn.{name} needs constraints"):
            getattr(batchdyn, name)(model, q, z, z)


def test_delassus_and_projection_refuse_a_model_without_constraints(models_dir):
    model = load(models_dir, "cartpole.urdf")
    with pytest.raises(batchdyn.Error, match="batchdyn.delassus needs constraints"):
        batchdyn.delassus(model, model.neutral())
    with pytest.raises(batchdyn.Error, match="batchdyn.project_to_constraints needs constraints"):
        batchdyn.project_to_constraints(model, model.neutral())
    with pytest.raises(batchdyn.Error, match="needs constraints"):
        batchdyn.Batch(model, 4, dtype=np.float64).delassus()


def test_every_reference_function_runs_on_a_constrained_model_and_agrees(models_dir):
    model = load(models_dir, "humanoid.urdf", "free", "humanoid_feet.json")
    q, v, tau = model.neutral(), np.zeros(model.nv), np.zeros(model.nv)
    dense = batchdyn.constrained_forward_dynamics(model, q, v, tau)
    for name in ("lcaba", "proxbbo"):
        result = getattr(batchdyn, name)(model, q, v, tau)
        np.testing.assert_allclose(result["qdd"], dense["qdd"], atol=1e-6)
    assert batchdyn.delassus(model, q).shape == (model.constraint_rows, model.constraint_rows)
    projected, info = batchdyn.project_to_constraints(model, q)
    assert info["converged"] and projected.shape == q.shape
    M = batchdyn.crba(model, q)
    np.testing.assert_allclose(batchdyn.rnea(model, q, v, batchdyn.aba(model, q, v, tau)), tau, atol=1e-9 * np.abs(M).max())


@pytest.mark.parametrize("name", ["constrained_forward_dynamics", "lcaba", "proxbbo"])
def test_solver_settings_out_of_range_are_refused_by_the_reference_functions(models_dir, name):
    model = load(models_dir, "humanoid.urdf", "free", "humanoid_feet.json")
    q, z = model.neutral(), np.zeros(model.nv)
    solve = getattr(batchdyn, name)
    for bad in ({"mu": 0.0}, {"mu": float("nan")}, {"mu": 1e300}, {"max_iterations": 0}, {"max_iterations": -5},
                {"tolerance": -1.0}, {"tolerance": float("inf")}):
        with pytest.raises(batchdyn.Error, match=name):
            solve(model, q, z, z, **bad)
    assert solve(model, q, z, z, tolerance=0.0, max_iterations=3)["iterations"] <= 3


def test_batch_solver_settings_out_of_range_are_refused_and_leave_the_settings_unchanged(models_dir):
    batch = batchdyn.Batch(load(models_dir, "humanoid.urdf", "free", "humanoid_feet.json"), 4, dtype=np.float64)
    before = (batch.constraint_mu, batch.constraint_max_iterations, batch.constraint_tolerance)
    for attribute, value in (("constraint_mu", 0.0), ("constraint_mu", float("nan")), ("constraint_max_iterations", 0),
                             ("constraint_tolerance", -1e-9), ("constraint_tolerance", float("nan"))):
        with pytest.raises(batchdyn.Error, match="set_constraint_settings"):
            setattr(batch, attribute, value)
    assert (batch.constraint_mu, batch.constraint_max_iterations, batch.constraint_tolerance) == before


def test_a_batch_of_zero_or_negative_environments_is_refused_and_one_environment_steps(models_dir):
    model = load(models_dir, "cartpole.urdf")
    for n in (0, -3):
        with pytest.raises(batchdyn.Error):
            batchdyn.Batch(model, n)
    batch = batchdyn.Batch(model, 1, dtype=np.float64)
    batch.step(1e-3)
    assert batch.q.shape == (1, model.nq) and batch.status[0] == 0


def test_a_model_without_actuated_joints_steps_in_torque_and_pd_mode(tmp_path):
    scene = tmp_path / "box.json"
    scene.write_text(json.dumps({"boxes": [{"name": "box", "mass": 2.0, "size": [0.1, 0.2, 0.3], "root": "free"}]}))
    model = batchdyn.load(str(scene))
    assert model.nv == 6
    batch = batchdyn.Batch(model, 3, dtype=np.float64)
    batch.control_mode = "pd"  # no 1-dof joint: no targets, and nothing to refuse
    batch.step(1e-3, 2)
    assert np.all(batch.status == 0)
    np.testing.assert_allclose(batch.v[:, 2], -9.81 * 1e-3, rtol=1e-6)  # free fall of the box's origin


# Every public member of Batch, called on one environment of a free box (no 1-dof joint, no
# constraint) with degenerate but valid arguments (empty lists, zero-sized arrays). None = the
# call must work; a string = it must raise batchdyn.Error matching it. The table must name every
# member, so a new binding cannot skip this test.
DEGENERATE_CALLS = {
    "body_mass": (lambda b, m: b.body_mass(0, 1), None),
    "constraint_forces": (lambda b, m: b.constraint_forces, None),
    "constraint_converged": (lambda b, m: b.constraint_converged, None),
    "loop_time_constant": (lambda b, m: setattr(b, "loop_time_constant", -1.0), "time constant must be finite and >= 0"),
    "loop_damping_ratio": (lambda b, m: setattr(b, "loop_damping_ratio", 0.0), "damping ratio must be finite and > 0"),
    "loop_drift_tolerance": (lambda b, m: setattr(b, "loop_drift_tolerance", float("nan")), "drift tolerance must be > 0"),
    "loop_velocity_level": (lambda b, m: setattr(b, "loop_velocity_level", False), None),
    "loop_plateau_tolerance": (lambda b, m: setattr(b, "loop_plateau_tolerance", -1e-9), "plateau tolerance must be finite and >= 0"),
    "loop_drift": (lambda b, m: b.loop_drift, None),
    "constraint_iterations": (lambda b, m: b.constraint_iterations, None),
    "constraint_max_iterations": (lambda b, m: setattr(b, "constraint_max_iterations", b.constraint_max_iterations), None),
    "constraint_mu": (lambda b, m: setattr(b, "constraint_mu", b.constraint_mu), None),
    "constraint_residual": (lambda b, m: b.constraint_residual, None),
    "constraint_solver": (lambda b, m: setattr(b, "constraint_solver", b.constraint_solver), None),
    "constraint_tolerance": (lambda b, m: setattr(b, "constraint_tolerance", b.constraint_tolerance), None),
    "contact_candidates": (lambda b, m: b.contact_candidates, None),
    "contact_flags": (lambda b, m: b.contact_flags, None),
    "contact_forces": (lambda b, m: b.contact_forces, None),
    "contact_gaps": (lambda b, m: b.contact_gaps, None),
    "contact_iterations": (lambda b, m: b.contact_iterations, None),
    "contact_max_iterations": (lambda b, m: setattr(b, "contact_max_iterations", 0), "max_iterations"),
    "contact_observations": (lambda b, m: b.contact_observations, "no geometries chosen"),
    "contact_residual": (lambda b, m: b.contact_residual, None),
    "contact_solver": (lambda b, m: setattr(b, "contact_solver", "lemke"), "contact_solver must be admm or pgs, got 'lemke'"),
    "admm_linear_solve": (lambda b, m: setattr(b, "admm_linear_solve", "lu"), "admm_linear_solve must be cholesky or pv-soft, got 'lu'"),
    "admm_polish": (lambda b, m: setattr(b, "admm_polish", False), None),
    "contact_tolerance": (lambda b, m: setattr(b, "contact_tolerance", float("nan")), "tolerance"),
    "contacts": (lambda b, m: setattr(b, "contacts", True), None),
    "control_mode": (lambda b, m: setattr(b, "control_mode", "pd"), None),
    "delassus": (lambda b, m: b.delassus(), "needs constraints"),
    "dtype": (lambda b, m: b.dtype, None),
    "effort_limits": (lambda b, m: setattr(b, "effort_limits", list(b.effort_limits)), None),
    "failed_count": (lambda b, m: b.failed_count, None),
    "forward_dynamics": (lambda b, m: b.forward_dynamics(), None),
    "max_threads": (lambda b, m: b.max_threads, None),
    "nq": (lambda b, m: b.nq, None),
    "num_envs": (lambda b, m: b.num_envs, None),
    "nv": (lambda b, m: b.nv, None),
    "observations": (lambda b, m: b.observations, "no frames chosen"),
    "observe": (lambda b, m: b.observe(), "no frames chosen"),  # before set_observed_frames (sorted order)
    "passive_forces": (lambda b, m: setattr(b, "passive_forces", False), None),
    "per_env_parameters": (lambda b, m: b.per_env_parameters, None),
    "q": (lambda b, m: b.q, None),
    "qdd": (lambda b, m: b.qdd, None),
    "remove_effort_limits": (lambda b, m: b.remove_effort_limits(), None),
    "reserve_contacts": (lambda b, m: b.reserve_contacts(-1), "contacts must be >= 0, got -1"),
    "reset": (lambda b, m: (b.reset([]), b.reset([0], seed=3, noise=0.0)), None),
    "reset_parameters": (lambda b, m: b.reset_parameters(), None),
    "reset_to": (lambda b, m: b.reset_to([], np.zeros((0, m.nq)), np.zeros((0, m.nv))), None),
    "set_armature": (lambda b, m: b.set_armature([], np.zeros((0, m.nv))), None),
    "set_body_inertia": (lambda b, m: b.set_body_inertia([], 1, np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3, 3))), None),
    "set_damping": (lambda b, m: b.set_damping([], np.zeros((0, m.nv))), None),
    "set_gravity": (lambda b, m: b.set_gravity([], np.zeros((0, 3))), None),
    "set_motor_strength": (lambda b, m: b.set_motor_strength([], np.zeros((0, m.nv))), None),
    "motor_strength": (lambda b, m: b.motor_strength(1, 0), "environment index 1"),
    "set_observed_contacts": (lambda b, m: b.set_observed_contacts([]), None),
    "set_observed_frames": (lambda b, m: b.set_observed_frames([]), None),
    "set_pd_gains": (lambda b, m: b.set_pd_gains([0.0] * m.nv, [0.0] * m.nv), None),
    "set_reference_configuration": (lambda b, m: b.set_reference_configuration(m.neutral()), None),
    "status": (lambda b, m: b.status, None),
    "status_message": (lambda b, m: b.status_message(0), None),
    "joint_limits": (lambda b, m: setattr(b, "joint_limits", False), None),
    "integrator": (lambda b, m: setattr(b, "integrator", "midpoint"), "integrator must be euler or rk4, got 'midpoint'"),
    "set_friction": (lambda b, m: b.set_friction([0], -1.0), "mu must be finite and >= 0"),
    "set_ground": (lambda b, m: b.set_ground([0], 0.0, [0.0, 0.0, 0.0]), "normal finite and non-zero"),
    "set_terrain": (lambda b, m: b.set_terrain(np.zeros((1, 1)), 0.1), "at least 2 x 2 points"),
    "set_terrain_heights": (lambda b, m: b.set_terrain_heights([0], np.zeros((2, 2))), "call set_terrain first"),
    "clear_terrain": (lambda b, m: b.clear_terrain(), None),
    "terrain_shape": (lambda b, m: b.terrain_shape, None),
    "step": (lambda b, m: b.step(1e-3), None),
    "target": (lambda b, m: b.target, None),
    "ctrl": (lambda b, m: b.ctrl, None),  # (N, 0): the box has no actuators
    "nu": (lambda b, m: b.nu, None),
    "use_ctrl_buffer": (lambda b, m: b.use_ctrl_buffer(np.zeros((2, 1), dtype=b.dtype)), "ctrl"),
    "friction_loss": (lambda b, m: setattr(b, "friction_loss", False), None),
    "sense": (lambda b, m: b.sense(), "no sensors"),  # the box's scene file has no <sensor>
    "sensordata": (lambda b, m: b.sensordata, None),  # (N, 0)
    "friction": (lambda b, m: b.friction(0, -1), "candidate -1 out of range"),
    "tau": (lambda b, m: b.tau, None),
    "threads": (lambda b, m: setattr(b, "threads", 1), None),
    "time_steps_in_cpp": (lambda b, m: b.time_steps_in_cpp(1e-3, 1, 0), None),
    "use_buffers": (lambda b, m: b.use_buffers(), None),
    "use_constraints": (lambda b, m: setattr(b, "use_constraints", False), None),
    "use_target_buffer": (lambda b, m: b.use_target_buffer(np.zeros((1, m.nv), dtype=b.dtype)), None),
    "v": (lambda b, m: b.v, None),
    "actuator_torques": (lambda b, m: b.actuator_torques, None),
    "effort_clamp": (lambda b, m: setattr(b, "effort_clamp", False), None),
    "contact_impulses": (lambda b, m: b.contact_impulses, None),
    "contact_baumgarte": (lambda b, m: setattr(b, "contact_baumgarte", 2.0), "baumgarte in \\[0, 1\\]"),
    "contact_max_push_out": (lambda b, m: setattr(b, "contact_max_push_out", -1.0), "max_push_out"),
    "contact_limit_margin": (lambda b, m: setattr(b, "contact_limit_margin", float("inf")), "limit_margin"),
    "contact_max_penetration": (lambda b, m: setattr(b, "contact_max_penetration", 0.0), "max_penetration > 0"),
    "state_size": (lambda b, m: b.state_size, None),
    "get_state": (lambda b, m: b.get_state([]), None),
    "set_state": (lambda b, m: b.set_state(np.zeros((0, b.state_size)), []), None),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_batch_member_takes_degenerate_input_on_one_environment_without_joints_or_constraints(tmp_path, dtype):
    scene = tmp_path / "box.json"
    scene.write_text(json.dumps({"boxes": [{"name": "box", "mass": 2.0, "size": [0.1, 0.2, 0.3], "root": "free"}]}))
    model = batchdyn.load(str(scene))
    batch = batchdyn.Batch(model, 1, dtype=dtype, threads=1)
    members = {name for name in dir(type(batch)) if not name.startswith("_")}
    assert members == set(DEGENERATE_CALLS), f"members without a degenerate case: {members - set(DEGENERATE_CALLS)}"
    for name, (call, refusal) in sorted(DEGENERATE_CALLS.items()):
        if refusal is None:
            call(batch, model)
        else:
            with pytest.raises(batchdyn.Error, match=refusal):
                call(batch, model)
    batch.step(1e-3)
    assert batch.status[0] == 0 and np.all(np.isfinite(batch.q))


def test_a_time_step_that_is_not_a_positive_finite_number_of_at_most_one_second_per_substep_is_refused(models_dir):
    batch = batchdyn.Batch(load(models_dir, "cartpole.urdf"), 4, dtype=np.float64)
    q = batch.q.copy()
    for dt, substeps in ((0.0, 1), (-1e-3, 1), (float("nan"), 1), (float("inf"), 1), (1000.0, 1), (1e-3, 0)):
        with pytest.raises(batchdyn.Error, match="Batch::step"):
            batch.step(dt, substeps)
    np.testing.assert_array_equal(batch.q, q)
    batch.step(2.0, 4)  # 0.5 s substeps are allowed


def test_a_thread_count_beyond_the_bound_is_refused_at_construction_and_when_set(models_dir):
    model = load(models_dir, "cartpole.urdf")
    with pytest.raises(batchdyn.Error, match="thread count"):
        batchdyn.Batch(model, 8, threads=70000)
    batch = batchdyn.Batch(model, 8, threads=1)
    assert batch.max_threads >= 256
    batch.threads = batch.max_threads  # the bound itself is accepted
    batch.threads = 1
    for bad in (100000, batch.max_threads + 1, -1):
        with pytest.raises(batchdyn.Error, match="thread count"):
            batch.threads = bad
    assert batch.threads == 1
    batch.threads = 2
    batch.step(1e-3)


# --- Views keep their memory alive ----------------------------------------------------------------

def test_a_view_taken_before_use_buffers_keeps_its_own_memory_and_does_not_write_into_the_new_buffer(models_dir):
    model = load(models_dir, "cartpole.urdf")
    batch = batchdyn.Batch(model, 4, dtype=np.float64)
    first = np.zeros((4, model.nq))
    batch.use_buffers(q=first)
    view = batch.q
    assert np.shares_memory(view, first)
    second = np.full((4, model.nq), 3.0)
    batch.use_buffers(q=second)
    del first
    gc.collect()
    noise = [np.full((4, model.nq), 9.0) for _ in range(64)]  # would reuse a freed buffer
    view[:] = -1.0  # writes into the first array, still alive through the view
    assert np.all(second == 3.0) and np.all(batch.q == 3.0)
    assert np.all(view == -1.0) and all(np.all(n == 9.0) for n in noise)
    assert np.shares_memory(batch.q, second)


def test_an_observation_array_outlives_a_new_frame_set(models_dir):
    model = load(models_dir, "humanoid.urdf", "free")
    batch = batchdyn.Batch(model, 5, dtype=np.float64)
    batch.set_observed_frames(["torso"])
    one = batch.observe()
    saved = one.copy()
    batch.set_observed_frames(["torso", "left_foot", "right_foot"])
    gc.collect()
    noise = [np.full(one.shape, 9.0) for _ in range(64)]
    two = batch.observe()
    assert one.shape == (5, 1, 13) and two.shape == (5, 3, 13)
    np.testing.assert_array_equal(one, saved)
    np.testing.assert_array_equal(two[:, 0], saved[:, 0])
    assert not np.shares_memory(one, two) and all(np.all(n == 9.0) for n in noise)
    assert batch.observations is two or np.shares_memory(batch.observations, two)


# --- One Batch, several Python threads ----------------------------------------------------------------

def test_two_threads_stepping_one_batch_give_the_steps_of_one_thread(models_dir):
    model = load(models_dir, "humanoid.urdf", "free")
    steps = 40
    reference = batchdyn.Batch(model, 64, dtype=np.float64, threads=2)
    reference.reset(seed=3)
    for _ in range(2 * steps):
        reference.step(1e-3)
    shared = batchdyn.Batch(model, 64, dtype=np.float64, threads=2)
    shared.reset(seed=3)
    workers = [threading.Thread(target=lambda: [shared.step(1e-3) for _ in range(steps)]) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    np.testing.assert_array_equal(shared.q, reference.q)
    np.testing.assert_array_equal(shared.v, reference.v)


def test_reconfiguring_a_batch_from_another_thread_during_steps_does_not_crash(models_dir):
    model = load(models_dir, "humanoid.urdf", "free")
    batch = batchdyn.Batch(model, 256, dtype=np.float32, threads=2)
    buffers = [np.tile(model.neutral().astype(np.float32), (256, 1)) for _ in range(2)]
    stop = threading.Event()
    errors = []

    def stepper():
        try:
            while not stop.is_set():
                batch.step(1e-3)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    worker = threading.Thread(target=stepper)
    worker.start()
    try:
        for k in range(60):
            batch.use_buffers(q=buffers[k % 2])
            batch.threads = 1 + k % 2
            batch.set_observed_frames(["torso"] if k % 2 else ["torso", "left_foot"])
            obs = batch.observe()
            assert obs.shape == (256, 1 if k % 2 else 2, 13)
    finally:
        stop.set()
        worker.join()
    assert not errors
    assert np.all(batch.status == 0)
