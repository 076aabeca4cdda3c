"""The adapters (Stable-Baselines3's VecEnv, rsl_rl's VecEnv) and the observation helpers."""
import numpy as np
import pytest

from batchdyn import vector_env
from batchdyn.vector_env import AutoresetMode, SB3VecEnv, observations


def short_cartpole(n=8, **kwargs):
    env = vector_env.make("CartPole", num_envs=n, threads=1, **kwargs)
    env.max_episode_steps = 6  # time limits within a few steps (instance attribute)
    return env


def test_sb3_vec_env_returns_per_env_infos_with_terminal_observation_and_time_limit():
    venv = SB3VecEnv(short_cartpole())
    venv.seed(2)
    obs = venv.reset()
    assert obs.shape == (8, 4) and venv.num_envs == 8 and len(venv.reset_infos) == 8
    assert venv.observation_space.shape == (4,) and venv.action_space.shape == (1,)
    for step in range(6):
        venv.step_async(np.zeros((8, 1)))
        obs, rewards, dones, infos = venv.step_wait()
        assert rewards.dtype == np.float32 and dones.dtype == bool and len(infos) == 8
    assert dones.all()  # the time limit, at step 6
    for info in infos:
        assert info["TimeLimit.truncated"] is True and info["terminal_observation"].shape == (4,)
        assert info["episode"]["l"] == 6 and info["episode"]["r"] == 6.0
    assert np.abs(obs).max() <= 0.05 + 1e-6  # the new episodes' first observations


def test_sb3_vec_env_seed_makes_resets_reproducible_and_attributes_are_shared():
    first, second = SB3VecEnv(short_cartpole()), SB3VecEnv(short_cartpole())
    first.seed(11)
    second.seed(11)
    np.testing.assert_array_equal(first.reset(), second.reset())
    assert first.get_attr("max_episode_steps") == [6] * 8 and first.get_attr("dt", indices=[0, 3]) == [0.02, 0.02]
    assert first.env_is_wrapped(object) == [False] * 8
    first.set_attr("force_scale", 5.0)
    assert first.env.force_scale == 5.0
    with pytest.raises(ValueError, match="set them for all"):
        first.set_attr("force_scale", 1.0, indices=[0])
    with pytest.raises(ValueError, match="same-step"):
        SB3VecEnv(short_cartpole(autoreset_mode=AutoresetMode.NEXT_STEP))


def test_rsl_rl_vec_env_steps_tensordicts_and_marks_time_outs():
    import torch
    from rsl_rl.env import VecEnv

    env = vector_env.RslRlVecEnv(short_cartpole())
    assert isinstance(env, VecEnv) and env.num_actions == 1 and env.max_episode_length == 6
    obs = env.get_observations()
    assert obs["policy"].shape == (8, 4) and obs["policy"].dtype == torch.float32
    for _ in range(5):
        obs, rewards, dones, extras = env.step(torch.zeros(8, 1))
        assert not dones.any() and not extras["time_outs"].any() and "log" not in extras
    assert env.episode_length_buf.tolist() == [5] * 8  # the env's own counters
    obs, rewards, dones, extras = env.step(torch.zeros(8, 1))
    assert rewards.dtype == torch.float32 and rewards.shape == (8,) and dones.dtype == torch.bool
    assert dones.all() and extras["time_outs"].all() and extras["log"]["/episode_length"] == 6
    assert env.episode_length_buf.tolist() == [0] * 8  # new episodes
    env.episode_length_buf = torch.full((8,), 3)  # what the runner's init_at_random_ep_len does
    assert env.env.episode_length.tolist() == [3] * 8


def test_rsl_rl_vec_env_refuses_float64_observations_and_next_step_autoreset():
    with pytest.raises(ValueError, match="float32"):
        vector_env.RslRlVecEnv(vector_env.make("CartPole", num_envs=2, threads=1, dtype=np.float64))
    with pytest.raises(ValueError, match="same-step"):
        vector_env.RslRlVecEnv(vector_env.make("CartPole", num_envs=2, threads=1, autoreset_mode=AutoresetMode.NEXT_STEP))


def test_observation_helpers_read_joints_base_velocities_and_gravity_in_the_base_frame():
    env = vector_env.make("Quadruped", num_envs=2, threads=1, noise=0.0, velocity_noise=0.0)
    env.reset(seed=0)
    assert observations.has_free_root(env.model)
    np.testing.assert_allclose(observations.joint_positions(env.batch, True), np.tile(env.default_joint_positions, (2, 1)),
                               atol=1e-6)
    assert observations.joint_velocities(env.batch, True).shape == (2, 12)
    q, v = env.batch.q, env.batch.v
    v[0, 0:6] = [1, 2, 3, 4, 5, 6]
    np.testing.assert_array_equal(observations.base_linear_velocity(env.batch)[0], [1, 2, 3])
    np.testing.assert_array_equal(observations.base_angular_velocity(env.batch)[0], [4, 5, 6])
    q[1, 3:7] = [np.sin(np.pi / 4), 0, 0, np.cos(np.pi / 4)]  # rolled 90 degrees about x
    gravity = observations.projected_gravity(env.batch)
    np.testing.assert_allclose(gravity[0], [0, 0, -1], atol=1e-6)
    rotation = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]])  # base axes in the world
    np.testing.assert_allclose(gravity[1], rotation.T @ [0, 0, -1], atol=1e-6)
    out = np.zeros((2, 3), dtype=np.float32)
    assert observations.projected_gravity(env.batch, out=out) is out
    general = observations.rotate_into_base(q[:, 3:7].astype(np.float64), np.array([0.0, 0.0, -1.0]))
    np.testing.assert_allclose(general, gravity, atol=1e-6)  # the written-out formula and the general rotation agree
