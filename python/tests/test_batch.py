"""The Python module: zero-copy views, buffer checks, parity with the C++ reference, thread-count
determinism, GIL release, NaN isolation, per-environment parameters, observations."""
import os
import threading
import time

import numpy as np
import pytest

import batchdyn


def humanoid(models_dir):
    return batchdyn.load(os.path.join(models_dir, "humanoid.urdf"), root="free")


def random_states(batch, seed=0):
    rng = np.random.default_rng(seed)
    n = batch.num_envs
    batch.remove_effort_limits()
    batch.reset(seed=seed)  # q uniform within the limits
    batch.v[:] = rng.normal(size=batch.v.shape)
    batch.tau[:] = 5 * rng.normal(size=batch.tau.shape)
    return n


def test_buffers_are_views_of_engine_memory_in_both_directions(models_dir):
    model = humanoid(models_dir)
    batch = batchdyn.Batch(model, 10, dtype=np.float64, threads=1)
    q = batch.q
    assert q.shape == (10, model.nq) and batch.qdd.shape == (10, model.nv)
    assert not q.flags["OWNDATA"] and q.base is not None
    random_states(batch)
    q[3, 7] = 0.25  # a write through an old view reaches the engine...
    batch.forward_dynamics()
    expected = batchdyn.aba(model, batch.q[3], batch.v[3], batch.tau[3])
    np.testing.assert_allclose(batch.qdd[3], expected, rtol=0, atol=1e-10 * max(1, np.abs(expected).max()))
    assert batch.q[3, 7] == 0.25
    qdd = batch.qdd
    before = qdd.copy()
    batch.tau[:] += 1.0
    batch.forward_dynamics()  # ...and the engine's writes show in a view taken before
    assert not np.array_equal(before, qdd)
    np.testing.assert_array_equal(qdd, batch.qdd)


def test_torch_from_numpy_shares_the_engine_memory(models_dir):
    torch = pytest.importorskip("torch")
    batch = batchdyn.Batch(humanoid(models_dir), 8, dtype=np.float32)
    tau = torch.from_numpy(batch.tau)
    tau[2, 6] = 3.5
    assert batch.tau[2, 6] == np.float32(3.5)
    batch.step(1e-3)
    assert torch.equal(torch.from_numpy(batch.qdd), torch.from_numpy(batch.qdd.copy()))
    assert torch.from_numpy(batch.q).data_ptr() == batch.q.__array_interface__["data"][0]


def test_use_buffers_checks_dtype_shape_and_contiguity_with_value_errors(models_dir):
    model = humanoid(models_dir)
    n = 6
    batch = batchdyn.Batch(model, n, dtype=np.float32)
    assert issubclass(batchdyn.Error, ValueError)
    with pytest.raises(ValueError, match="float32"):
        batch.use_buffers(q=np.zeros((n, model.nq), dtype=np.float64))
    with pytest.raises(ValueError, match=r"shape \(6, %d\)" % model.nq):
        batch.use_buffers(q=np.zeros((n, model.nq + 1), dtype=np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        batch.use_buffers(v=np.zeros((model.nv, n), dtype=np.float32).T)
    with pytest.raises(batchdyn.Error, match="dtype"):
        batchdyn.Batch(model, 2, dtype=np.int32)
    # Accepted user arrays are used in place.
    qdd = np.zeros((n, model.nv), dtype=np.float32)
    q = np.tile(model.neutral().astype(np.float32), (n, 1))
    batch.use_buffers(q=q, qdd=qdd)
    batch.forward_dynamics()
    assert np.abs(qdd).max() > 0
    q[0, 0] = 9.0
    assert batch.q[0, 0] == np.float32(9.0)


def test_batched_results_equal_the_scalar_reference_functions(models_dir):
    model = humanoid(models_dir)
    batch = batchdyn.Batch(model, 13, dtype=np.float64, threads=2)
    random_states(batch, 3)
    batch.forward_dynamics()
    for e in range(batch.num_envs):
        expected = batchdyn.aba(model, batch.q[e], batch.v[e], batch.tau[e])
        assert np.abs(batch.qdd[e] - expected).max() <= 1e-10 * max(1.0, np.abs(expected).max())
        tau = batchdyn.rnea(model, batch.q[e], batch.v[e], batch.qdd[e])
        assert np.abs(tau - batch.tau[e]).max() <= 1e-8 * max(1.0, np.abs(batch.tau[e]).max())
    M = batchdyn.crba(model, batch.q[0])
    assert M.shape == (model.nv, model.nv) and np.allclose(M, M.T)


def test_a_constrained_model_steps_with_lcaba_or_the_dense_constrained_solver(models_dir):
    model = batchdyn.load(os.path.join(models_dir, "four_bar.urdf"))
    assert model.constraint_rows > 0
    batch = batchdyn.Batch(model, 5, dtype=np.float64)
    assert batch.constraint_solver == "lcaba"
    random_states(batch, 4)
    batch.forward_dynamics()
    mu = batch.constraint_mu
    for e in range(5):
        ref = batchdyn.constrained_forward_dynamics(model, batch.q[e], batch.v[e], batch.tau[e], mu=mu)
        np.testing.assert_allclose(batch.qdd[e], ref["qdd"], rtol=1e-8, atol=1e-8)
    assert batch.constraint_forces.shape == (5, model.constraint_rows)
    batch.constraint_solver = "dense"
    batch.forward_dynamics()
    for e in range(5):
        ref = batchdyn.constrained_forward_dynamics(model, batch.q[e], batch.v[e], batch.tau[e], mu=mu)
        np.testing.assert_allclose(batch.qdd[e], ref["qdd"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(batch.constraint_forces[e], ref["lambda"], rtol=1e-12, atol=1e-12)
        assert batch.constraint_iterations[e] == ref["iterations"]
    batch.constraint_solver = "proxbbo"
    batch.forward_dynamics()
    for e in range(5):
        ref = batchdyn.constrained_forward_dynamics(model, batch.q[e], batch.v[e], batch.tau[e], mu=mu)
        np.testing.assert_allclose(batch.qdd[e], ref["qdd"], rtol=1e-8, atol=1e-8)
    with pytest.raises(ValueError, match="lcaba, proxbbo or constrained"):
        batch.constraint_solver = "qr"
    assert batchdyn.delassus(model, batch.q[0]).shape == (model.constraint_rows,) * 2


def test_resets_and_steps_are_bitwise_identical_for_any_thread_count(models_dir):
    model = humanoid(models_dir)
    runs = []
    for threads in (1, 2):
        batch = batchdyn.Batch(model, 100, dtype=np.float32, threads=threads)
        batch.reset(seed=42, noise=0.2, velocity_noise=0.5)
        kp = np.r_[np.zeros(6), np.full(model.nv - 6, 80.0)]
        batch.set_pd_gains(kp, kp / 10)
        batch.control_mode = "pd"
        batch.target[:] = 0.1
        for _ in range(5):
            batch.step(1e-3, substeps=2)
        runs.append((batch.q.copy(), batch.v.copy()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    # A reset of a subset draws what the same environments drew in a full reset.
    a = batchdyn.Batch(model, 100, dtype=np.float64)
    b = batchdyn.Batch(model, 100, dtype=np.float64)
    a.reset(seed=7)
    b.reset([5, 70], seed=7)
    np.testing.assert_array_equal(a.q[[5, 70]], b.q[[5, 70]])


def test_resets_take_numpy_index_and_seed_arrays_and_check_indices_before_narrowing(models_dir):
    model = humanoid(models_dir)
    batch = batchdyn.Batch(model, 4, dtype=np.float64)
    batch.reset(np.array([0, 2], dtype=np.int64), seeds=np.array([9, 9], dtype=np.uint64), noise=0.1)
    np.testing.assert_array_equal(batch.q[0], batch.q[2])  # a seed per environment: the same draw
    batch.reset([1, 3], seeds=[9, 10], noise=0.1)
    np.testing.assert_array_equal(batch.q[1], batch.q[0])
    for bad in (np.array([2 ** 32], dtype=np.int64), np.array([-1], dtype=np.int32), np.array([4], dtype=np.int16)):
        with pytest.raises(batchdyn.Error, match="out of range"):
            batch.reset(bad, seed=1)
    with pytest.raises(batchdyn.Error, match="expected environment indices"):
        batch.reset([0.5], seed=1)
    with pytest.raises(batchdyn.Error, match=r"seeds: expected one integer in \[0, 2\^64\)"):
        batch.reset([0], seeds=[-1])
    with pytest.raises(batchdyn.Error, match="not both"):
        batch.reset([0], seed=1, seeds=[1])
    with pytest.raises(batchdyn.Error, match="1 seeds for 2 environments"):
        batch.reset([0, 1], seeds=np.array([1], dtype=np.uint64))


def test_the_gil_is_released_while_the_engine_steps(models_dir):
    batch = batchdyn.Batch(humanoid(models_dir), 4096, dtype=np.float64, threads=1)
    batch.step(1e-3)
    substeps = 4
    while True:  # one call of >= 0.3 s, found by doubling (a single timing misleads on a loaded machine)
        start = time.perf_counter()
        batch.step(1e-3, substeps=substeps)
        if time.perf_counter() - start >= 0.3:
            break
        substeps *= 2
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    worker = threading.Thread(target=count)
    worker.start()
    time.sleep(0.02)
    begin = time.perf_counter()
    batch.step(1e-3, substeps=substeps)
    end = time.perf_counter()
    stop.set()
    worker.join()
    during = [t for t in ticks if begin < t < end]
    assert end - begin > 0.1
    assert len(during) >= 10, f"the Python thread ticked {len(during)} times during a {end - begin:.2f} s step"


def test_a_nan_environment_is_isolated_and_reported_in_status(models_dir):
    model = humanoid(models_dir)
    batch = batchdyn.Batch(model, 20, dtype=np.float32)
    batch.v[7, 3] = np.nan
    batch.step(1e-3)
    status = batch.status
    assert status.dtype == np.uint8 and status[7] == 1
    assert batchdyn.STATUS_NAMES[int(status[7])] == "non-finite state"
    assert np.count_nonzero(status) == 1 and batch.failed_count == 1
    assert np.isnan(batch.qdd[7]).all() and np.isfinite(np.delete(batch.qdd, 7, axis=0)).all()
    assert "environment 7" in batch.status_message(7)
    batch.reset([7])
    assert batch.status[7] == 0


def test_per_environment_parameters_change_only_their_environments(models_dir):
    model = humanoid(models_dir)
    batch = batchdyn.Batch(model, 20, dtype=np.float64)
    random_states(batch, 5)
    batch.q[:] = batch.q[0]
    batch.v[:] = batch.v[0]
    batch.tau[:] = batch.tau[0]  # every environment in the same state
    body = model.body_index(model.body_names[3])
    batch.set_body_inertia([4, 17], body, mass=[10.0, 0.1], com=np.zeros((2, 3)), inertia=np.tile(np.eye(3) * 0.05, (2, 1, 1)))
    batch.set_gravity([9], [[0.0, 0.0, -1.62]])
    batch.forward_dynamics()
    assert batch.per_env_parameters and batch.body_mass(4, body) == 10.0
    changed = [e for e in range(20) if not np.array_equal(batch.qdd[e], batch.qdd[0])]
    assert changed == [4, 9, 17]
    np.testing.assert_allclose(batch.qdd[0], batchdyn.aba(model, batch.q[0], batch.v[0], batch.tau[0]), atol=1e-9)
    with pytest.raises(batchdyn.Error, match="environment 3"):
        batch.set_body_inertia([3], body, mass=[-1.0], com=[[0, 0, 0]], inertia=[np.eye(3)])


def test_observations_are_world_poses_and_velocities_of_the_chosen_frames(models_dir):
    model = humanoid(models_dir)
    batch = batchdyn.Batch(model, 9, dtype=np.float32)
    batch.reset(seed=1, noise=0.3)
    names = model.body_names[1:4]
    batch.set_observed_frames(names)
    obs = batch.observe()
    assert obs.shape == (9, 3, 13) and obs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(obs[:, :, 3:7], axis=2), 1.0, atol=1e-6)
    assert (obs[:, :, 6] >= 0).all()
    np.testing.assert_array_equal(obs[:, 0, 0:3], batch.q[:, 0:3])  # the free-flyer body: its position is q
    with pytest.raises(batchdyn.Error, match="no_such_frame"):
        batch.set_observed_frames(["no_such_frame"])


def test_model_loading_info_and_errors(models_dir):
    model = humanoid(models_dir)
    info = model.info()
    assert info["nq"] == model.nq == 37 and info["nv"] == 36
    assert len(info["joints"]) == model.num_bodies - 1
    with pytest.raises(batchdyn.Error, match="missing.urdf"):
        batchdyn.load("missing.urdf")
    with pytest.raises(ValueError, match="root"):
        batchdyn.load(os.path.join(models_dir, "humanoid.urdf"), root="floating")
    with pytest.raises(batchdyn.Error, match="'q' has 3 values"):
        batchdyn.aba(model, np.zeros(3), np.zeros(model.nv), np.zeros(model.nv))


def test_sdf_with_loops_loads_as_pinocchio_does_or_with_cut_joints(models_dir):
    path = os.path.join(models_dir, "cassie_v2.sdf")
    cassie = batchdyn.load(path, root="free")
    assert (cassie.nq, cassie.nv, cassie.constraint_rows) == (45, 40, 24)
    cut = batchdyn.load(path, root="free", closure="cut")
    assert (cut.nq, cut.nv, cut.constraint_rows) == (29, 28, 12)
    with pytest.raises(batchdyn.Error, match="duplicate"):
        batchdyn.load(path, closure="weld")
    # A stepped batch of Cassies: the loops hold (LCABA, the engine's default solver).
    batch = batchdyn.Batch(cassie, 16, dtype=np.float64, threads=1)
    batch.step(1e-3)
    assert batch.failed_count == 0


def test_lcaba_reference_function_matches_the_dense_solver(models_dir):
    model = batchdyn.load(os.path.join(models_dir, "four_bar.urdf"))
    rng = np.random.default_rng(3)
    q, v, tau = rng.uniform(-1, 1, model.nq), rng.normal(size=model.nv), rng.normal(size=model.nv)
    ref = batchdyn.constrained_forward_dynamics(model, q, v, tau, mu=1e4)
    for out in (batchdyn.lcaba(model, q, v, tau), batchdyn.proxbbo(model, q, v, tau, mu=1e4)):
        np.testing.assert_allclose(out["qdd"], ref["qdd"], rtol=1e-8, atol=1e-8)
        assert out["iterations"] >= 1 and out["residual"] <= 1e-8


def test_project_to_constraints_closes_the_loop(models_dir):
    model = batchdyn.load(os.path.join(models_dir, "four_bar.urdf"))
    q0 = np.array([0.3, -0.2, 0.4])
    q, info = batchdyn.project_to_constraints(model, q0)
    assert info["converged"] and info["residual"] <= 1e-10
    assert not np.allclose(q, q0)
    with pytest.raises(ValueError, match="'q' has 4 values"):
        batchdyn.project_to_constraints(model, np.zeros(model.nq + 1))


def test_passive_forces_apply_the_model_damping_and_springs_in_the_engine_but_not_in_the_reference_functions(models_dir):
    model = batchdyn.load(os.path.join(models_dir, "cassie_v2.sdf"), root="free")
    damping, stiffness = np.asarray(model.damping), np.asarray(model.spring_stiffness)
    reference = np.asarray(model.spring_reference)
    assert damping.max() > 0 and stiffness.max() > 0  # Cassie's knee and heel springs
    one_dof = [(j["idx_q"], j["idx_v"]) for j in model.info()["joints"] if j["nv"] == 1]
    batch = batchdyn.Batch(model, 3, dtype=np.float64, threads=1)
    assert batch.passive_forces  # on by default, as simulators do
    batch.use_constraints = False
    random_states(batch, seed=4)
    batch.forward_dynamics()
    for e in range(3):
        q, v, tau = batch.q[e], batch.v[e], batch.tau[e]
        springs = np.zeros(model.nv)
        for iq, iv in one_dof:
            springs[iv] = -stiffness[iv] * (q[iq] - reference[iv])
        np.testing.assert_allclose(batch.qdd[e], batchdyn.aba(model, q, v, tau - damping * v + springs), rtol=1e-10, atol=1e-10)
    batch.passive_forces = False
    batch.forward_dynamics()
    for e in range(3):
        np.testing.assert_allclose(batch.qdd[e], batchdyn.aba(model, batch.q[e], batch.v[e], batch.tau[e]), rtol=1e-10, atol=1e-10)


def test_load_options_for_inertias_that_violate_the_triangle_inequality(models_dir, robots_dir):
    robots = robots_dir
    cassie = os.path.join(robots, "cassie.sdf")
    model = batchdyn.load(cassie, root="free")
    assert len(model.inertia_warnings) == 2 and "triangle inequality" in model.inertia_warnings[0]
    assert batchdyn.load(cassie, root="free", balance_inertia=True).inertia_warnings == []
    with pytest.raises(batchdyn.Error, match="triangle inequality"):
        batchdyn.load(cassie, root="free", strict_inertia=True)


def test_the_integrator_is_chosen_from_python_and_rk4_follows_a_passive_pendulum_far_closer_than_euler(models_dir):
    model = batchdyn.load(os.path.join(models_dir, "double_pendulum.urdf"))

    def after_one_second(integrator, dt):
        batch = batchdyn.Batch(model, 1, dtype=np.float64, threads=1)
        assert batch.integrator == "euler"  # the default, as MuJoCo's
        batch.integrator = integrator
        assert batch.integrator == integrator
        batch.passive_forces = False
        batch.joint_limits = False
        batch.q[0] = [1.0, -0.5]
        for _ in range(round(1.0 / dt)):
            batch.step(dt)
        assert batch.failed_count == 0
        return np.concatenate([batch.q[0], batch.v[0]])

    exact = after_one_second("rk4", 1.25e-4)
    assert np.abs(after_one_second("rk4", 4e-3) - exact).max() < 1e-4
    assert np.abs(after_one_second("euler", 4e-3) - exact).max() > 1e-3
    batch = batchdyn.Batch(model, 1, dtype=np.float32)
    with pytest.raises(batchdyn.Error, match="integrator must be euler or rk4, got 'rk45'"):
        batch.integrator = "rk45"


def test_loop_stabilisation_settings_and_reports_reach_python(models_dir):
    model = batchdyn.load(os.path.join(models_dir, "humanoid.urdf"), root="free", constraints=os.path.join(models_dir, "humanoid_feet.json"))
    batch = batchdyn.Batch(model, 3, dtype=np.float64, threads=1)
    assert batch.loop_time_constant == 0.02 and batch.loop_damping_ratio == 1.0 and batch.loop_drift_tolerance == 0.01
    assert batch.loop_velocity_level is True  # with the default Euler integrator: J v+ = -e/T
    assert batch.loop_plateau_tolerance == 1e-9  # step()'s loop solves stop on plateaus within 1e-9 of the terms
    batch.loop_plateau_tolerance = 0.0
    assert batch.loop_plateau_tolerance == 0.0
    batch.loop_plateau_tolerance = 1e-9
    batch.loop_velocity_level = False
    assert batch.loop_velocity_level is False
    batch.loop_velocity_level = True
    batch.reset([0, 1, 2])
    batch.q[1, 2] += 0.05  # environment 1's base 5 cm up: its welded soles 5 cm off
    batch.step(1e-3)
    assert list(batch.status) == [0, 6, 0]
    assert batchdyn.STATUS_NAMES[6].startswith("off its loop constraints")
    assert batch.loop_drift[1] == pytest.approx(0.05, rel=1e-3) and batch.loop_drift[0] < 1e-9
    assert batch.constraint_converged.dtype == np.bool_ and batch.constraint_converged.all()
    batch.loop_drift_tolerance = float("inf")
    batch.step(1e-3)
    assert batch.failed_count == 0 and np.all(batch.loop_drift == 0)
    batch.constraint_max_iterations = 1  # the cap ends the solves that the first pass does not meet: reported
    batch.v[:] = np.random.default_rng(1).normal(size=batch.v.shape)
    batch.step(1e-3)
    assert not batch.constraint_converged.all()
    assert np.array_equal(batch.status == 5, ~batch.constraint_converged)


def test_forward_dynamics_without_the_simulator_stages_is_the_reference_beyond_effort_limits(models_dir, robots_dir):
    # tiago's hand dofs have 2 N m limits: torques of a few N m are beyond them.
    robots = robots_dir
    model = batchdyn.load(os.path.join(robots, "tiago.urdf"))
    batch = batchdyn.Batch(model, 5, dtype=np.float64, threads=1)
    rng = np.random.default_rng(55)
    batch.reset(seed=55)
    batch.tau[:] = rng.uniform(-5, 5, size=batch.tau.shape)
    limits = np.array(batch.effort_limits)
    assert (np.abs(batch.tau) > limits).any()
    batch.passive_forces = False
    batch.forward_dynamics()
    clamped = batch.qdd.copy()
    batch.effort_clamp = False
    assert batch.effort_limits == list(limits)  # the limits are kept, only not applied
    batch.forward_dynamics()
    for e in range(5):
        expected = batchdyn.aba(model, batch.q[e], batch.v[e], batch.tau[e])
        np.testing.assert_allclose(batch.qdd[e], expected, rtol=0, atol=1e-10 * max(1, np.abs(expected).max()))
    assert not np.allclose(clamped, batch.qdd)
