"""The RL libraries themselves on batchdyn's environments: Gymnasium's vector wrappers,
Stable-Baselines3's PPO through SB3VecEnv, rsl_rl's OnPolicyRunner through RslRlVecEnv."""
import copy
import os
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.wrappers.vector import DictInfoToList, NormalizeObservation, NumpyToTorch, RecordEpisodeStatistics

from batchdyn import vector_env
from batchdyn.vector_env import AutoresetMode
from conftest import EXAMPLES


def cartpole(n=16, **kwargs):
    return vector_env.make("CartPole", num_envs=n, threads=1, **kwargs)


def test_the_environments_are_gymnasium_vector_envs_with_gymnasium_spaces():
    env = cartpole()
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert isinstance(env.single_observation_space, gymnasium.spaces.Box)
    assert env.observation_space == gymnasium.vector.utils.batch_space(env.single_observation_space, 16)
    assert env.action_space == gymnasium.vector.utils.batch_space(env.single_action_space, 16)
    assert env.metadata["autoreset_mode"] is gymnasium.vector.AutoresetMode.SAME_STEP
    assert env.unwrapped is env


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_gymnasiums_record_episode_statistics_counts_the_episodes_the_env_ends(mode):
    env = RecordEpisodeStatistics(cartpole(autoreset_mode=mode), buffer_length=1000)
    env.reset(seed=0)
    recorded = []
    for _ in range(150):  # no control: every pole falls, many times
        _, _, _, _, info = env.step(np.zeros((16, 1), np.float32))
        if "episode" in info:
            ended = info["_episode"]
            np.testing.assert_array_equal(ended, env.unwrapped.episodes_ended)
            np.testing.assert_array_equal(info["episode"]["l"][ended], env.unwrapped.episode_statistics["l"][ended])
            np.testing.assert_allclose(info["episode"]["r"][ended], env.unwrapped.episode_statistics["r"][ended])
            recorded += list(info["episode"]["l"][ended])
    assert len(recorded) >= 16 and list(env.length_queue) == recorded


def test_gymnasiums_normalize_observation_and_numpy_to_torch_wrap_the_env():
    # NormalizeObservation takes next-step autoreset only (Gymnasium 1.4 refuses same-step).
    env = NumpyToTorch(NormalizeObservation(cartpole(autoreset_mode=AutoresetMode.NEXT_STEP)))
    obs, _ = env.reset(seed=1)
    assert isinstance(obs, torch.Tensor) and obs.shape == (16, 4)
    for _ in range(50):
        obs, reward, terminated, truncated, info = env.step(torch.zeros(16, 1))
    assert isinstance(reward, torch.Tensor) and abs(float(obs.mean())) < 1.0  # normalised


def test_gymnasiums_dict_info_to_list_gives_one_dict_per_environment():
    env = DictInfoToList(cartpole(4))
    env.reset(seed=2)
    for _ in range(80):
        _, _, terminated, _, infos = env.step(np.zeros((4, 1), np.float32))
        assert isinstance(infos, list) and len(infos) == 4
        if terminated.any():
            i = int(np.flatnonzero(terminated)[0])
            assert "final_obs" in infos[i] and infos[i]["final_obs"].shape == (4,)
            return
    pytest.fail("no pole fell in 80 uncontrolled steps")


def test_stable_baselines3_ppo_balances_the_cart_pole_through_sb3_vec_env():
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnv

    class StopWhenBalanced(BaseCallback):
        """Stops once the last 20 episodes average more than 400 of the 500 steps."""

        def __init__(self):
            super().__init__()
            self.mean_length = 0.0

        def _on_rollout_end(self):
            if len(self.model.ep_info_buffer) >= 20:
                self.mean_length = float(np.mean([e["l"] for e in list(self.model.ep_info_buffer)[-20:]]))

        def _on_step(self):
            return self.mean_length <= 400

    torch.manual_seed(0)
    torch.set_num_threads(1)
    venv = vector_env.SB3VecEnv(vector_env.make("CartPole", num_envs=64, threads=1))
    assert isinstance(venv, VecEnv)  # SB3 takes it as it is (no DummyVecEnv around it)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=512, n_epochs=4, learning_rate=1e-3, seed=0,
                policy_kwargs=dict(net_arch=[32, 32]))
    assert model.get_env() is venv
    stop = StopWhenBalanced()
    model.learn(600_000, callback=stop)
    assert stop.mean_length > 400, f"PPO reached a mean episode length of {stop.mean_length:.0f} in 600k steps"


@pytest.mark.slow
def test_rsl_rl_on_policy_runner_raises_the_quadrupeds_reward_through_rsl_rl_vec_env():
    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = vector_env.RslRlVecEnv(vector_env.make("Quadruped", num_envs=512, threads=1))
    sys.path.insert(0, EXAMPLES)
    from train_rsl_rl import TRAIN_CFG  # examples/train_rsl_rl.py's settings (legged_gym's A1)

    train_cfg = copy.deepcopy(TRAIN_CFG)  # the runner writes into its config
    runner = OnPolicyRunner(env, train_cfg, log_dir=None)
    rewards = []
    step = env.step

    def recording_step(actions):
        out = step(actions)
        rewards.append(float(out[1].mean()))
        return out

    env.step = recording_step  # the runner calls env.step: record the mean reward of every step
    iterations = 20
    runner.learn(iterations)
    per_iteration = np.array(rewards).reshape(iterations, 24).mean(axis=1)
    first, last = per_iteration[:5].mean(), per_iteration[-5:].mean()
    assert last > first + 0.004, f"mean reward per step: first iterations {first:.4f}, last {last:.4f}: {per_iteration}"


@pytest.mark.slow
@pytest.mark.parametrize("example, args", [("gymnasium_wrappers.py", []), ("train_sb3.py", ["--steps", "4096"]),
                                           ("train_rsl_rl.py", ["--envs", "64", "--iterations", "2"])])
def test_the_rl_library_examples_run(example, args):
    script = os.path.join(EXAMPLES, example)
    out = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
