"""The vectorised environments: Gymnasium-style shapes, same-step autoreset, determinism."""
import numpy as np

from batchdyn import vector_env


def test_cartpole_follows_the_vector_env_conventions():
    env = vector_env.CartPole(num_envs=64, threads=1)
    obs, info = env.reset(seed=3)
    assert obs.shape == (64, 4) == env.observation_space.shape and obs.dtype == np.float32
    assert env.single_action_space.shape == (1,) and env.metadata["autoreset_mode"] == "same-step"
    assert np.abs(obs).max() <= 0.05 + 1e-6
    finished = 0
    for _ in range(100):  # no control: the pole falls within ~1 s and the envs reset themselves
        obs, reward, terminated, truncated, info = env.step(np.zeros((64, 1)))
        assert reward.shape == (64,) and terminated.dtype == bool
        if terminated.any():
            finished += int(terminated.sum())
            done = info["done"]
            assert (np.abs(info["final_obs"][done, 1]) > env.theta_threshold).all() or (
                np.abs(info["final_obs"][done, 0]) > env.x_threshold).any()
            assert np.abs(obs[done]).max() <= 0.05 + 1e-6  # the new episode's first observation
            assert (info["episode_length"][done] > 0).all()
    assert finished >= 64


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


def test_arm_reach_runs_with_pd_targets_and_rewards_closeness_to_the_goal():
    env = vector_env.ArmReach(num_envs=16, threads=1)
    obs, _ = env.reset(seed=5)
    assert obs.shape == (16, 20)
    goal = obs[:, 17:20].copy()
    assert np.linalg.norm(goal, axis=1).max() < 2.0
    for _ in range(20):
        obs, reward, terminated, truncated, info = env.step(np.zeros((16, 7)))
    assert np.isfinite(obs).all() and not terminated.any()
    distance = np.linalg.norm(obs[:, 14:17] - obs[:, 17:20], axis=1)
    np.testing.assert_allclose(reward, -distance, rtol=1e-5)


def test_the_ppo_example_runs_and_reports_its_rates():
    import os
    import subprocess
    import sys

    pytest = __import__("pytest")
    pytest.importorskip("torch")
    script = os.path.join(os.environ.get("BATCHDYN_EXAMPLES", os.path.join(os.path.dirname(__file__), "..", "..", "examples")),
                          "train_ppo.py")
    out = subprocess.run([sys.executable, script, "--envs", "256", "--iterations", "2", "--plot", ""],
                         capture_output=True, text=True, timeout=120)
    assert "iter    2" in out.stdout and "env-steps/s" in out.stdout, out.stdout + out.stderr
