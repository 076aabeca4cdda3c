"""The H1Walk task: Unitree H1 from its MJCF, its legs under the policy, checked against MuJoCo on
the same file with the same gains."""
import numpy as np
import pytest

from batchdyn import vector_env
from batchdyn.models import model_path

LEGS = [f"{side}_{joint}_joint" for side in ("left", "right") for joint in ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle")]


def test_h1walk_builds_from_the_mjcf_keyframe_motors_and_mesh_feet():
    env = vector_env.make("H1Walk", num_envs=8, threads=1)
    home = np.array(env.model.keyframes["home"]["q"])
    np.testing.assert_array_equal(env.reference, home)
    assert env.observation_space.shape == (8, 44) and env.action_space.shape == (8, 10)
    names = env.model.joint_names
    assert [names[k - 5] for k in env.legs] == LEGS  # v index 6 + (joint - 1)
    np.testing.assert_array_equal(env.default_joint_positions, [0, 0, -0.4, 0.8, -0.4] * 2)
    limits = np.array(env.batch.effort_limits)
    np.testing.assert_array_equal(limits[env.legs], [200, 200, 200, 300, 40] * 2)  # the motors' ctrlrange
    candidates = env.model.info()["contacts"]["candidates"]
    for slots, foot in zip(env.foot_slots, ("left_ankle_link", "right_ankle_link")):
        assert len(slots) == 4 and all(candidates[k]["geometry"].startswith(foot + "/") for k in slots)  # a hull's 4 slots
    assert len(env.not_feet) == len(candidates) - 8


def test_h1walk_actions_move_only_the_leg_targets_around_the_keyframe():
    env = vector_env.make("H1Walk", num_envs=4, threads=1)
    env.reset(seed=1)
    action = np.linspace(-1, 1, 10, dtype=np.float32)
    env.step(np.tile(action, (4, 1)))
    target = env.batch.target.astype(np.float64)
    np.testing.assert_allclose(target[:, env.legs], np.tile(env.default_joint_positions + 0.25 * action, (4, 1)), atol=1e-6)
    others = np.setdiff1d(np.arange(6, env.model.nv), env.legs)
    np.testing.assert_allclose(target[:, others], np.tile(env.reference[1 + others], (4, 1)), atol=1e-7)  # torso and arms hold


def test_h1walk_observes_the_gait_phase_with_the_right_leg_half_a_period_behind():
    env = vector_env.make("H1Walk", num_envs=2, threads=1, noise=0.0, velocity_noise=0.0)
    obs, _ = env.reset(seed=0)
    np.testing.assert_allclose(obs[:, 40:42], [[0.0, 1.0]] * 2, atol=1e-7)  # phase 0
    np.testing.assert_array_equal(obs[:, 42:44], 0.0)  # no contact force before a step
    for _ in range(10):  # 0.2 s: a quarter of the 0.8 s period
        obs, *_ = env.step(np.zeros((2, 10)))
    np.testing.assert_allclose(env.phase(), [[0.25, 0.75]] * 2, atol=1e-9)
    np.testing.assert_allclose(obs[:, 40:42], [[1.0, 0.0]] * 2, atol=1e-6)
    np.testing.assert_array_equal(obs[:, 42:44], 1.0)  # both feet on the ground


def test_h1walk_under_zero_action_pitches_forward_and_falls_as_mujoco_s_h1_does_with_the_same_gains():
    # The task's gains (unitree_rl_gym's) do not hold the keyframe's crouch without a policy: the
    # robot sags, pitches forward and falls within 1.5 s. MuJoCo, on the same file with the same
    # PD (clamped to ctrlrange) at the same 5 ms step, does the same: through 1 s the pelvis heights
    # agree to 3 mm and the pitches to 7 mrad.
    mujoco = pytest.importorskip("mujoco")
    env = vector_env.make("H1Walk", num_envs=1, threads=1, noise=0.0, velocity_noise=0.0, dtype=np.float64)
    env.reset(seed=0)
    spec = mujoco.MjSpec.from_file(model_path("unitree_h1/scene.xml"))
    spec.compiler.discardvisual = True  # as batchdyn loads it: the visual meshes are not shipped
    m = spec.compile()
    m.opt.timestep = env.dt / env.substeps
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
    gains = vector_env.humanoid._GAINS
    pd = []  # per actuator: qpos address, dof address, kp, kd
    for a in range(m.nu):
        joint = m.actuator_trnid[a, 0]
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, joint)
        kp, kd = next((g for part, g in gains.items() if part in name), (0.0, 0.0))
        pd.append((m.jnt_qposadr[joint], m.jnt_dofadr[joint], kp, kd))
    home = d.qpos.copy()
    fell_at = None
    for step in range(1, 101):  # 2 s
        for _ in range(env.substeps):
            for a, (qa, va, kp, kd) in enumerate(pd):
                d.ctrl[a] = kp * (home[qa] - d.qpos[qa]) - kd * d.qvel[va]
            mujoco.mj_step(m, d)
        _, _, terminated, _, _ = env.step(np.zeros((1, 10)))
        if terminated[0]:
            fell_at = step
            break
        pitch_batchdyn = np.arcsin(np.clip(env._obs[0, 6], -1, 1))  # gravity in the base frame: (sin pitch, ., -cos pitch)
        w, x, y, z = d.qpos[3:7]
        pitch_mujoco = np.arcsin(np.clip(2 * (w * y - x * z), -1, 1))
        if step * env.dt <= 1.0 + 1e-9:
            assert env.batch.q[0, 2] == pytest.approx(d.qpos[2], abs=0.01)
            assert pitch_batchdyn == pytest.approx(pitch_mujoco, abs=0.02)
    assert fell_at is not None and 1.0 < fell_at * env.dt < 1.5
    assert d.qpos[2] < 0.7  # MuJoCo's is falling too


def test_h1walk_draws_motor_strength_for_the_legs_only():
    env = vector_env.make("H1Walk", num_envs=16, threads=1, motor_strength_range=(0.8, 1.2))
    env.reset(seed=2)
    strength = np.array([[env.batch.motor_strength(e, k) for k in range(env.model.nv)] for e in range(16)])
    assert ((strength[:, env.legs] >= 0.8) & (strength[:, env.legs] <= 1.2)).all() and np.ptp(strength[:, env.legs]) > 0.2
    others = np.setdiff1d(np.arange(env.model.nv), env.legs)
    np.testing.assert_array_equal(strength[:, others], 1.0)


def test_h1walk_solves_contacts_by_pgs_which_follows_admm_s_trajectory():
    # The task picks PGS for speed; both solve each substep to the same tolerance, so over 0.5 s
    # of the keyframe's sag the two trajectories agree to 1e-5 (3e-7 measured).
    runs = {}
    for solver in ("pgs", "admm"):
        env = vector_env.make("H1Walk", num_envs=8, threads=1, noise=0.0, velocity_noise=0.0, dtype=np.float64)
        assert env.batch.contact_solver == "pgs"
        env.batch.contact_solver = solver
        env.reset(seed=0)
        for _ in range(25):
            env.step(np.full((8, 10), 0.2))
        runs[solver] = env.batch.q.copy()
    np.testing.assert_allclose(runs["pgs"], runs["admm"], atol=1e-5)
