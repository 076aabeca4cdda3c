"""The vectorised environments: Gymnasium-style shapes, same-step autoreset, determinism."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from batchdyn import vector_env


def test_cartpole_ends_episodes_when_the_pole_falls_and_starts_new_ones_in_the_same_step():
    env = vector_env.CartPole(num_envs=64, threads=1)
    obs, info = env.reset(seed=3)
    assert obs.shape == (64, 4) == env.observation_space.shape and obs.dtype == np.float32
    assert env.single_action_space.shape == (1,) and env.metadata["autoreset_mode"] == vector_env.AutoresetMode.SAME_STEP
    assert np.abs(obs).max() <= 0.05 + 1e-6
    finished = 0
    for _ in range(100):  # no control: the pole falls within ~1 s and the envs reset themselves
        obs, reward, terminated, truncated, info = env.step(np.zeros((64, 1)))
        assert reward.shape == (64,) and terminated.dtype == bool
        if terminated.any():
            finished += int(terminated.sum())
            done = info["_final_obs"]
            final = np.stack(info["final_obs"][done])
            assert ((np.abs(final[:, 1]) > env.theta_threshold) | (np.abs(final[:, 0]) > env.x_threshold)).all()
            assert np.abs(obs[done]).max() <= 0.05 + 1e-6  # the new episode's first observation
            np.testing.assert_array_equal(env.episodes_ended, done)
            assert (env.episode_statistics["l"][done] > 0).all()
            np.testing.assert_array_equal(env.episode_statistics["r"][done], env.episode_statistics["l"][done])  # 1 per step
    assert finished >= 64


def test_a_float64_batch_gives_float64_observations():
    env = vector_env.CartPole(num_envs=4, threads=1, dtype=np.float64)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float64 and env.step(np.zeros((4, 1)))[0].dtype == np.float64


def test_vector_env_rollouts_are_reproducible_for_a_seed_and_any_thread_count():
    trajectories = []
    for threads in (1, 2):
        env = vector_env.CartPole(num_envs=32, threads=threads)
        obs, _ = env.reset(seed=11)
        rng = np.random.default_rng(0)
        out = [obs]
        for _ in range(120):
            obs, *_ = env.step(rng.uniform(-1, 1, size=(32, 1)))
            out.append(obs)
        trajectories.append(np.stack(out))
    np.testing.assert_array_equal(trajectories[0], trajectories[1])


def test_arm_reach_holds_every_sampled_goal_pose_with_its_absolute_targets():
    # The action space is reachable: commanding the joint angles of the goal configuration (the
    # goals are palm positions of random configurations) brings the palm to within a few cm
    # against gravity (PD: 0.2 rad of sag at most, at 41 N m of the 80 N m the URDF allows).
    env = vector_env.ArmReach(num_envs=32, threads=1)
    obs, _ = env.reset(seed=5)
    goal_q = env._goal_batch.q.astype(np.float64)
    for _ in range(100):
        obs, reward, terminated, truncated, info = env.step(goal_q / env.action_scale)
    assert np.isfinite(obs).all() and not terminated.any()
    distance = np.linalg.norm(obs[:, 14:17] - obs[:, 17:20], axis=1)
    np.testing.assert_allclose(info["distance"], distance, rtol=1e-5)
    np.testing.assert_allclose(reward, -distance, rtol=1e-4)  # the action did not change
    assert np.median(distance) < 0.1 and distance.max() < 0.3
    torque = np.abs(env.kp * (env.batch.target - env.batch.q) - env.kd * env.batch.v)
    assert torque.max() < 80


def test_arm_reach_scripted_baseline_brings_the_palm_near_the_goal():
    env = vector_env.ArmReach(num_envs=16, threads=1)
    obs, _ = env.reset(seed=6)
    start = np.linalg.norm(obs[:, 14:17] - obs[:, 17:20], axis=1)
    for _ in range(100):
        obs, reward, *_ = env.step(env.scripted_actions())
    distance = np.linalg.norm(obs[:, 14:17] - obs[:, 17:20], axis=1)
    assert distance.mean() < 0.25 * start.mean()


def test_quadruped_stands_on_its_four_feet_with_zero_action():
    env = vector_env.Quadruped(num_envs=16, threads=1)
    obs, _ = env.reset(seed=2)
    assert obs.shape == (16, 50) == env.observation_space.shape and env.single_action_space.shape == (12,)
    for _ in range(300):  # 6 s: drop from 0.32 m (+- noise), land, sway (kd = 0.5 damps little), settle
        obs, reward, terminated, truncated, info = env.step(np.zeros((16, 12)))
        assert not terminated.any()
    assert (obs[:, 46:50] == 1).all()  # every foot pushes on the ground
    np.testing.assert_allclose(obs[:, 6:9], np.tile([0, 0, -1], (16, 1)), atol=0.05)  # gravity in the base frame
    z = env.batch.q[:, 2]
    assert ((z > 0.2) & (z < 0.3)).all()
    weight = 9.81 * sum(env.batch.body_mass(0, b) for b in range(1, env.model.num_bodies))
    feet_fz = env.batch.contact_forces[:, env.feet, 2].sum(axis=1)
    np.testing.assert_allclose(feet_fz, weight, rtol=0.02)
    assert (env.batch.contact_forces[:, env.trunk] == 0).all()
    assert info["forward_velocity"].shape == (16,) and np.abs(info["forward_velocity"]).max() < 0.01


def test_quadruped_stands_on_rolling_hills_started_anywhere_on_them():
    env = vector_env.Quadruped(num_envs=16, threads=1, terrain_roughness=0.05)
    env.reset(seed=3)
    assert np.ptp(env.terrain) > 0.09  # hills of +-5 cm
    ground = env.terrain_height(env.batch.q[:, 0], env.batch.q[:, 1])
    assert np.ptp(ground) > 0.02  # the environments start at different heights of the hills
    for _ in range(300):
        obs, reward, terminated, truncated, info = env.step(np.zeros((16, 12)))
        assert not terminated.any()
    q = env.batch.q
    above = q[:, 2] - env.terrain_height(q[:, 0], q[:, 1])
    assert ((above > 0.22) & (above < 0.3)).all()  # standing on the hills, not on z = 0
    assert (obs[:, 46:50] == 1).all()
    weight = 9.81 * sum(env.batch.body_mass(0, b) for b in range(1, env.model.num_bodies))
    np.testing.assert_allclose(env.batch.contact_forces[:, env.feet, 2].sum(axis=1), weight, rtol=0.02)


def test_quadruped_rewards_tracking_the_commanded_speed():
    # The same states (same seed) under commands 0 and 1 m/s: standing still earns the full
    # tracking term at 0 m/s and exp(-1 / 0.25) of it at 1 m/s; every other term is the same.
    rewards = []
    for command in (0.0, 1.0):
        env = vector_env.Quadruped(num_envs=8, threads=1, command_range=(command, command))
        env.reset(seed=4)
        for _ in range(60):
            obs, reward, *_ = env.step(np.zeros((8, 12)))
        rewards.append(reward)
    v = env.batch.v.astype(np.float64)  # the same in both runs: the command is not an input of the dynamics
    vx, vy2 = v[:, 0], v[:, 1] ** 2
    expected = env.dt * (np.exp(-(vx ** 2 + vy2) / 0.25) - np.exp(-((vx - 1.0) ** 2 + vy2) / 0.25))
    np.testing.assert_allclose(rewards[0] - rewards[1], expected, rtol=1e-5, atol=1e-7)
    assert (expected > 0.8 * env.dt).all()  # nearly still (a little sway after landing)


def test_quadruped_episode_ends_when_the_trunk_touches_the_ground():
    env = vector_env.Quadruped(num_envs=4, threads=1, noise=0.0, velocity_noise=0.0)
    env.reset(seed=1)
    q = np.tile(env.reference, (4, 1))
    q[1, 2], q[1, 3:7] = 0.06, [1, 0, 0, 0]  # env 1: upside down, on its back (the trunk box is 0.114 m high)
    env.batch.reset_to([0, 1, 2, 3], q, np.zeros((4, env.model.nv)))
    obs, reward, terminated, truncated, info = env.step(np.zeros((4, 12)))
    assert terminated.tolist() == [False, True, False, False]
    assert info["_final_obs"][1] and info["final_obs"][1][8] > 0.9  # it ended upside down: gravity along +z of the base
    np.testing.assert_allclose(env.batch.q[1, 2], 0.32, atol=1e-2)  # autoreset: back at the start height


@pytest.mark.slow
def test_the_ppo_example_runs_two_iterations_and_reports_their_env_steps_and_rates(examples_dir, tmp_path):
    pytest.importorskip("torch")
    script = os.path.join(examples_dir, "train_ppo.py")
    summary = tmp_path / "summary.json"
    out = subprocess.run([sys.executable, script, "--envs", "256", "--iterations", "2", "--plot", "", "--summary", str(summary)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    run = json.loads(summary.read_text())
    assert [i["iteration"] for i in run["iterations"]] == [1, 2]
    steps = run["env_steps"] // 2
    assert run["environments"] == 256 and run["env_steps"] == 2 * steps and steps % 256 == 0
    for i in run["iterations"]:
        assert i["simulation_env_steps_per_s"] > i["loop_env_steps_per_s"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("task", ["Quadruped", "Go2Walk", "H1Walk"])
def test_the_ppo_example_trains_a_walking_robot_and_evaluates_its_walk(examples_dir, tmp_path, task):
    pytest.importorskip("torch")
    script = os.path.join(examples_dir, "train_ppo.py")
    summary = tmp_path / "summary.json"
    video = tmp_path / "walk.gif"
    out = subprocess.run([sys.executable, script, "--task", task, "--envs", "128", "--steps", "8", "--iterations", "2",
                          "--plot", "", "--picture", "", "--summary", str(summary), "--video", str(video)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert video.exists() == (task in ("Go2Walk", "H1Walk"))  # drawn by MuJoCo from the task's MJCF
    run = json.loads(summary.read_text())
    assert run["env_steps"] == 128 * 8 * 2
    assert all(np.isfinite(i["speed_error"]) and i["admm_iterations"] > 0 for i in run["iterations"])
    walk = run["evaluation"]
    assert walk["environments"] == 64 and walk["commanded_speed"] == 0.8 and 0 <= walk["fell"] <= 64
    assert 0 < walk["mean_admm_iterations"] <= walk["largest_admm_iterations"]
    tracking = run["tracking"]  # one whole episode per commanded speed
    assert [s["command"] for s in tracking["speeds"]] == [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert tracking["seconds"] == pytest.approx(19.98) and 0 <= tracking["upright"] <= 1
    for s in tracking["speeds"]:  # two short iterations of PPO do not walk: the upright robots stay where they are
        assert 0 <= s["upright"] <= 1
        if s["upright"] > 0:
            assert abs(s["mean_speed"]) < 0.25 and s["within_0.1"] == 0
            assert s["mean_error"] == pytest.approx(s["command"] - s["mean_speed"], abs=1e-9)


def test_go2walk_builds_from_the_mjcf_keyframe_motors_and_feet():
    env = vector_env.make("Go2Walk", num_envs=8, threads=1)
    home = env.model.keyframes["home"]["q"]
    np.testing.assert_array_equal(env.reference, home)
    np.testing.assert_array_equal(env.default_joint_positions, home[7:])
    limits = np.array(env.batch.effort_limits)
    assert np.isinf(limits[:6]).all()
    np.testing.assert_array_equal(limits[6:], [23.7, 23.7, 45.43] * 4)  # the motors' ctrlrange
    candidates = env.model.info()["contacts"]["candidates"]
    assert [c["geometry"] for c in candidates[env.feet]] == ["FL", "FR", "RL", "RR"]
    assert {c["geometry"] for c in candidates[env.trunk]} == {"base"} and len(candidates) == 12


def test_go2walk_stands_on_its_four_feet_with_zero_action():
    env = vector_env.make("Go2Walk", num_envs=16, threads=1)
    obs, _ = env.reset(seed=5)
    for _ in range(250):  # 5 s
        obs, reward, terminated, truncated, info = env.step(np.zeros((16, 12)))
        assert not terminated.any()
    assert (obs[:, 46:50] == 1).all()
    weight = 9.81 * sum(env.batch.body_mass(0, b) for b in range(1, env.model.num_bodies))
    np.testing.assert_allclose(env.batch.contact_forces[:, env.feet, 2].sum(axis=1), weight, rtol=0.02)
    assert np.abs(env.batch.v).max() < 0.05


def test_go2walk_action_delay_applies_each_action_that_many_steps_late():
    env = vector_env.make("Go2Walk", num_envs=4, threads=1, action_delay=2)
    env.reset(seed=0)
    actions = [np.full((4, 12), a, dtype=np.float32) for a in (0.1, 0.2, 0.3)]
    expected = [0.0, 0.0, 0.1]  # the PD targets' offset from the keyframe after each step
    for action, offset in zip(actions, expected):
        env.step(action)
        np.testing.assert_allclose(env.batch.target[:, 6:] - env.default_joint_positions, env.action_scale * offset, atol=1e-6)
    with pytest.raises(ValueError, match="action_delay"):
        vector_env.make("Go2Walk", num_envs=4, action_delay=-1)


def test_go2walk_randomises_friction_and_payload_per_episode_within_their_ranges_reproducibly():
    def draw(seed):
        env = vector_env.make("Go2Walk", num_envs=32, threads=1, friction_range=(0.4, 1.0), added_mass_range=(-1.0, 3.0))
        env.reset(seed=seed)
        friction = np.array([env.batch.friction(e, 0) for e in range(32)])
        mass = np.array([env.batch.body_mass(e, 1) for e in range(32)]) - env.model.body_inertia(1)[0]
        return friction, mass
    friction, mass = draw(3)
    assert ((friction >= 0.4) & (friction <= 1.0)).all() and np.ptp(friction) > 0.3
    assert ((mass >= -1.0) & (mass <= 3.0)).all() and np.ptp(mass) > 2.0
    again = draw(3)
    np.testing.assert_array_equal(friction, again[0])
    np.testing.assert_array_equal(mass, again[1])


def test_go2walk_randomises_each_motors_strength_per_episode_and_the_pd_torque_follows_it():
    def draw(seed):
        env = vector_env.make("Go2Walk", num_envs=16, threads=1, dtype=np.float64, motor_strength_range=(0.8, 1.2))
        env.reset(seed=seed)
        return env, np.array([[env.batch.motor_strength(e, d) for d in range(env.model.nv)] for e in range(16)])
    env, strength = draw(5)
    assert (strength[:, :6] == 1.0).all()  # the free flyer has no motor
    motors = strength[:, 6:]
    assert ((motors >= 0.8) & (motors <= 1.2)).all() and np.ptp(motors) > 0.3
    assert np.ptp(motors, axis=1).min() > 0.0  # per motor, not one factor per robot
    np.testing.assert_array_equal(draw(5)[1], strength)
    # The actuation torque at a state is the strength times the PD torque, then clamped to the limits.
    env.step(np.full((16, 12), 0.3))
    b = env.batch
    b.forward_dynamics()  # the actuation at the state the step left (a step's torques are its last substep's)
    pd = env.kp * (b.target[:, 6:] - b.q[:, 7:]) - env.kd * b.v[:, 6:]
    limits = np.array(env.model.motor_torque_limits)[6:]
    expected = np.clip(motors * pd, -limits, limits)
    np.testing.assert_allclose(b.actuator_torques[:, 6:], expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="motor_strength_range"):
        vector_env.make("Go2Walk", num_envs=4, motor_strength_range=(1.2, 0.8))
