"""Contact from Python: the model's collision geometry and ground in Model.info(), contact files,
and the dense reference contact step (batchdyn.dense_contact_step)."""
import json
import os
import re

import numpy as np
import pytest

import batchdyn


def test_the_shipped_quadruped_lists_its_collision_geometry_and_ground(models_dir):
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free")
    contacts = model.info()["contacts"]
    assert contacts["ground"] == {"height": 0.0, "normal": [0.0, 0.0, 1.0]}
    assert len(contacts["geometries"]) == 5 and len(contacts["candidates"]) == 12


def test_a_contact_file_replaces_the_geometry_and_a_bad_one_names_the_entry(models_dir, tmp_path):
    feet = tmp_path / "feet.json"
    feet.write_text(json.dumps({"file_collisions": False, "friction": 0.7,
                                "geometries": [{"name": "FL", "link": "FL_FOOT", "sphere": {"radius": 0.02}}]}))
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free", contacts=feet)
    assert [g["friction"] for g in model.info()["contacts"]["geometries"]] == [0.7]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"geometries": [{"name": "FL", "link": "FL_PAW", "sphere": {"radius": 0.02}}]}))
    with pytest.raises(batchdyn.Error, match="on link 'FL_PAW': the model has no such link"):
        batchdyn.load(f"{models_dir}/quadruped.urdf", root="free", contacts=bad)


def test_the_quadruped_dropped_on_its_feet_lands_and_the_forces_hold_it(models_dir):
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free")
    q = model.neutral()
    q[2] = 0.53  # straight legs: the feet 1 cm above the plane
    v, tau = np.zeros(model.nv), np.zeros(model.nv)
    for _ in range(100):  # 45 ms of free fall, then on the feet
        out = batchdyn.dense_contact_step(model, q, v, tau, 1e-3)
        assert out["converged"]
        q, v = out["q"], out["v"]
    assert out["forces"].shape == (len(out["active"]), 3) and len(out["active"]) == 4
    assert np.all(out["forces"][:, 2] >= 0) and out["forces"][:, 2].sum() > 0  # the ground pushes, never pulls
    assert min(out["gaps"]) > -1e-3
    # The straight knees (0 rad) lie above their upper limit (-0.9): the limit rows push them back.
    assert {side for _, side, _, _ in out["limits"]} == {"upper"}
    assert all(impulse >= 0 for *_, impulse in out["limits"])
    with pytest.raises(batchdyn.Error, match="h must be finite and > 0"):
        batchdyn.dense_contact_step(model, q, v, tau, 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_step_lands_the_quadruped_and_its_contact_views_report_forces_that_carry_its_weight(models_dir, dtype):
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free")
    batch = batchdyn.Batch(model, 8, dtype=dtype, threads=1)
    assert batch.contacts and batch.contact_candidates == 12
    forces, gaps, flags = batch.contact_forces, batch.contact_gaps, batch.contact_flags
    assert forces.shape == (8, 12, 3) and gaps.shape == (8, 12) and flags.shape == (8, 12)
    # Crouched inside the joint limits (hip flexion 0.8, knee -1.6 rad), feet 1 cm above the
    # plane, held in that pose by PD.
    joints = {j["name"]: j for j in model.info()["joints"]}
    q = batch.q
    q[:, 2] = 0.5 * np.cos(0.8) + 0.03
    for leg in ("FL", "FR", "HL", "HR"):
        for joint, angle in ((f"{leg}_hip_flexion", 0.8), (f"{leg}_knee", -1.6)):
            q[:, joints[joint]["idx_q"]] = angle
            batch.target[:, joints[joint]["idx_v"]] = angle
    batch.control_mode = "pd"
    gains = np.zeros(model.nv)
    gains[6:] = 80.0
    batch.set_pd_gains(list(gains), list(gains / 40.0))
    for _ in range(5000):  # 10 s: the PD sag settles in about 8 s
        batch.step(2e-3)
    assert np.all(batch.status == 0)
    mass = sum(float(m) for m in re.findall(r'<mass value="([^"]+)"', open(f"{models_dir}/quadruped.urdf").read()))
    # The views are the engine's memory: they see the last step without being fetched again.
    assert np.shares_memory(forces, batch.contact_forces)
    np.testing.assert_allclose(forces[:, :, 2].sum(axis=1), mass * 9.81, rtol=2e-3)
    assert flags.dtype == np.bool_ and np.shares_memory(flags, batch.contact_flags)  # a byte per flag, the engine's own
    assert np.all(flags[:, 8:]) and not np.any(flags[:, :8])  # on its four feet, the trunk in the air
    assert np.all(np.abs(gaps[:, 8:]) < 1e-3)
    iterations = batch.contact_iterations  # per environment, an int32 array
    assert isinstance(iterations, np.ndarray) and iterations.dtype == np.int32 and iterations.shape == (batch.num_envs,)
    assert iterations.max() <= 20


def _free_ball(tmp_path):
    """A 1 kg ball of radius 0.1 m with a free-flyer root (its collision sphere: one candidate)."""
    ball = tmp_path / "ball.urdf"
    ball.write_text('<robot name="ball"><link name="ball"><inertial><mass value="1"/><inertia ixx="0.004" ixy="0" ixz="0" '
                    'iyy="0.004" iyz="0" izz="0.004"/></inertial><collision><geometry><sphere radius="0.1"/></geometry>'
                    '</collision></link></robot>')
    return batchdyn.load(str(ball), root="free")


def test_per_environment_ground_and_friction_change_only_their_environments(models_dir, tmp_path):
    model = _free_ball(tmp_path)
    batch = batchdyn.Batch(model, 2, dtype=np.float64, threads=1)
    batch.set_ground([1], 0.25)
    batch.q[:, 2] = 0.5
    for _ in range(1000):
        batch.step(1e-3)
    np.testing.assert_allclose(batch.q[:, 2], [0.1, 0.35], atol=1e-4)
    with pytest.raises(batchdyn.Error, match="mu must be finite"):
        batch.set_friction([0], float("nan"))
    batch.contacts = False
    z = batch.q[:, 2].copy()
    batch.step(1e-2)
    assert np.all(batch.q[:, 2] < z)  # falls through: contacts are off


def test_a_terrain_shared_or_per_environment_holds_each_ball_at_its_own_height(tmp_path):
    model = _free_ball(tmp_path)
    batch = batchdyn.Batch(model, 3, dtype=np.float64, threads=1)
    x, y = np.meshgrid(np.linspace(-1, 1, 21), np.linspace(-1, 1, 11))  # (ny, nx) = (11, 21), spacing 0.1
    batch.set_terrain(0.1 + 0.0 * x, spacing=0.1, origin=(-1.0, -1.0))  # a raised flat field for all
    assert batch.terrain_shape == (11, 21)
    batch.set_terrain_heights([1, 2], np.stack([np.full((11, 21), 0.3), np.full((11, 21), 0.5)]))
    batch.q[:, 2] = 0.8
    for _ in range(1500):
        batch.step(1e-3)
    np.testing.assert_allclose(batch.q[:, 2], [0.2, 0.4, 0.6], atol=1e-4)
    np.testing.assert_allclose(batch.contact_forces[:, 0, 2], 9.81, rtol=1e-3)
    with pytest.raises(batchdyn.Error, match=r"heights must be \(ny, nx\) = \(11, 21\)"):
        batch.set_terrain_heights([0], np.zeros((21, 11)))
    batch.clear_terrain()
    assert batch.terrain_shape == (0, 0)


def test_the_shipped_box_stack_stands_and_each_pair_carries_the_weight_above_it(models_dir):
    """models/scenes/box_stack.json: a brick and a ball on a crate, paired in the scene's contacts."""
    model = batchdyn.load(f"{models_dir}/scenes/box_stack.json")
    contacts = model.info()["contacts"]
    assert [p["name"] for p in contacts["pairs"]] == ["brick-crate", "ball-crate", "ball-brick"]
    kinds = [c["kind"] for c in contacts["candidates"]]
    assert kinds.count("ground") == 17 and kinds.count("point-box") == 2  # the ball on each box: 1
    assert kinds.count("convex") == 4  # box-box: the deepest point and three corners
    batch = batchdyn.Batch(model, 4, threads=1)
    assert batch.contacts
    q0 = batch.q.copy()
    # 2 s at rest. One step's impulses carry float32's solver noise (a pair's force moves by up
    # to ~0.7 % from step to step over redundant corners); at rest the momentum balance holds on
    # average, so the forces are averaged over the last 200 steps.
    forces = []
    for step in range(2000):
        batch.step(1e-3)
        if step >= 1800:
            forces.append(batch.contact_forces.copy())  # on each candidate's first geometry
    forces = np.mean(forces, axis=0)
    assert np.all(batch.status == 0)
    np.testing.assert_allclose(batch.q, q0, atol=2e-4)  # nothing sinks, slides or tips
    pair = [c.get("pair") for c in contacts["candidates"]]
    on_ground = forces[:, [k for k, p in enumerate(pair) if p is None and contacts["candidates"][k]["geometry"] == "crate"], 2].sum(axis=1)
    np.testing.assert_allclose(on_ground, (4.0 + 1.0 + 0.3) * 9.81, rtol=1e-3)
    for name, mass in (("brick-crate", 1.0), ("ball-crate", 0.3)):
        rows = [k for k, p in enumerate(pair) if p == name]
        np.testing.assert_allclose(forces[:, rows, 2].sum(axis=1), mass * 9.81, rtol=1e-3)


def test_a_compliant_ball_rests_at_its_static_deflection_with_every_contact_solver(tmp_path):
    model = _free_ball(tmp_path)
    soft = tmp_path / "soft.json"
    soft.write_text('{"stiffness": 20000, "damping": 200}')  # a spring-damper ground contact, N/m and N s/m
    ball = batchdyn.load(str(tmp_path / "ball.urdf"), root="free", contacts=str(soft))
    assert ball.info()["contacts"]["geometries"][0]["stiffness"] == 20000
    for solver, linear_solve in (("admm", "cholesky"), ("admm", "pv-soft"), ("pgs", "cholesky")):
        batch = batchdyn.Batch(ball, 2, dtype=np.float64, threads=1)
        assert (batch.contact_solver, batch.admm_linear_solve) == ("admm", "cholesky")  # the defaults
        batch.contact_solver = solver
        batch.admm_linear_solve = linear_solve  # ADMM on the formed G, or on the tree (PV-soft)
        batch.contact_tolerance = 1e-10
        batch.q[:, 2] = 0.1
        for _ in range(2000):
            batch.step(1e-3)
        assert np.all(batch.status == 0)
        np.testing.assert_allclose(batch.q[:, 2], 0.1 - 9.81 / 20000, rtol=1e-8)  # m g / k below the surface
        np.testing.assert_allclose(batch.contact_forces[:, 0, 2], 9.81, rtol=1e-8)
    assert model.info()["contacts"]["geometries"][0]["stiffness"] == 0  # rigid by default
    with pytest.raises(batchdyn.Error, match="contact_solver must be admm or pgs, got 'newton'"):
        batch.contact_solver = "newton"


def test_admm_polish_is_on_by_default_switchable_and_lands_the_quadruped_as_plain_admm_does(models_dir):
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free")
    joints = {j["name"]: j for j in model.info()["joints"]}
    gains = np.zeros(model.nv)
    gains[6:] = 80.0
    results = {}
    for polish in (True, False):
        batch = batchdyn.Batch(model, 4, dtype=np.float64, threads=1)
        assert batch.admm_polish is True  # the default
        batch.admm_polish = polish
        assert batch.admm_polish is polish
        q = batch.q
        q[:, 2] = 0.5 * np.cos(0.8) + 0.03  # crouched, feet 3 cm above the plane, held by PD
        for leg in ("FL", "FR", "HL", "HR"):
            for joint, angle in ((f"{leg}_hip_flexion", 0.8), (f"{leg}_knee", -1.6)):
                q[:, joints[joint]["idx_q"]] = angle
                batch.target[:, joints[joint]["idx_v"]] = angle
        q[:, 0] += np.arange(4) * 1e-3  # four environments, four positions on the plane
        batch.control_mode = "pd"
        batch.set_pd_gains(list(gains), list(gains / 40.0))
        for _ in range(500):  # the landing and 0.9 s of stance
            batch.step(2e-3)
            assert np.all(batch.status == 0)  # every solve met the tolerance
        results[polish] = batch.q.copy()
    # Both meet the same tolerance (1e-6): the trajectories agree to about it.
    np.testing.assert_allclose(results[True], results[False], atol=1e-5)


def test_observe_reports_each_chosen_geometry_in_contact_and_the_force_on_it(models_dir):
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free")
    geometries = [g["name"] for g in model.info()["contacts"]["geometries"]]
    feet = [name for name in geometries if "FOOT" in name]
    assert len(feet) == 4
    batch = batchdyn.Batch(model, 3, dtype=np.float64, threads=1)
    with pytest.raises(batchdyn.Error, match="no collision geometry named 'paw'"):
        batch.set_observed_contacts(["paw"])
    batch.set_observed_contacts(feet + [geometries[0]])  # the feet and the trunk box
    joints = {j["name"]: j for j in model.info()["joints"]}
    batch.q[:, 2] = 0.5 * np.cos(0.8) + 0.02
    for leg in ("FL", "FR", "HL", "HR"):
        for joint, angle in ((f"{leg}_hip_flexion", 0.8), (f"{leg}_knee", -1.6)):
            batch.q[:, joints[joint]["idx_q"]] = angle
    for _ in range(300):
        batch.step(1e-3)
    contacts = batch.observe()  # no frames chosen: observe() returns the contact observations
    assert contacts.shape == (3, 5, 4) and contacts is batch.contact_observations
    np.testing.assert_array_equal(contacts[:, :4, 0], 1.0)  # every foot on the ground
    assert np.all(contacts[:, 4, :] == 0.0)                   # the trunk in the air
    # Each foot's force is the sum over its candidates, and the feet carry the whole contact force.
    np.testing.assert_allclose(contacts[:, :4, 1:].sum(axis=1), batch.contact_forces.sum(axis=1), rtol=1e-12, atol=1e-12)
    batch.set_observed_frames(["trunk"])
    frames = batch.observe()  # frames chosen: observe() returns them, and fills the contacts too
    assert frames.shape == (3, 1, 13) and batch.contact_observations.shape == (3, 5, 4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_get_state_and_set_state_restore_a_bitwise_continuation_warm_starts_included(models_dir, dtype):
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free")
    batch = batchdyn.Batch(model, 3, dtype=dtype, threads=1)
    batch.reset(seed=3, noise=0.05)
    batch.q[:, 2] = 0.5  # dropped on the feet
    for _ in range(60):
        batch.step(1e-3)
    saved = batch.get_state()
    assert saved.shape == (3, batch.state_size) and batch.state_size > model.nq + model.nv
    trajectory = []
    for _ in range(50):
        batch.step(1e-3)
        trajectory.append(batch.q.copy())
    batch.set_state(saved)
    for expected in trajectory:
        batch.step(1e-3)
        np.testing.assert_array_equal(batch.q, expected)
    with pytest.raises(batchdyn.Error, match="Batch::set_state"):
        batch.set_state(saved[:, :-1])


def test_body_index_resolves_a_link_merged_by_a_fixed_joint(models_dir):
    model = batchdyn.load(f"{models_dir}/a1.urdf", root="free")
    assert model.body_index("trunk") == model.body_index("base")


def test_a_free_robot_with_mesh_collisions_only_warns_at_load_that_it_will_fall_through_the_ground(robots_dir):
    robots = robots_dir
    with pytest.warns(UserWarning, match="no collision candidate: it will fall through the ground.*mesh"):
        model = batchdyn.load(os.path.join(robots, "go2.urdf"), root="free")
    assert "fall through" in model.info()["contacts"]["warning"]
    assert batchdyn.load(os.path.join(robots, "go2.urdf"), root="fixed").contact_warning == ""
