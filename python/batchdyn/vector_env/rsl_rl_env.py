"""RslRlVecEnv: a batchdyn vector environment as an rsl_rl VecEnv (rsl_rl.env.VecEnv of
rsl-rl-lib 5, the PPO of legged_gym and Isaac Lab), which rsl_rl's OnPolicyRunner takes as it is:

    from rsl_rl.runners import OnPolicyRunner
    env = RslRlVecEnv(vector_env.make("Quadruped", num_envs=4096))
    OnPolicyRunner(env, train_cfg, log_dir=None).learn(100)     # examples/train_rsl_rl.py

rsl_rl's rules: observations are a TensorDict of groups; the environment's observation is the
group "policy" (point the runner's obs_groups at it: {"actor": ["policy"], "critic": ["policy"]}).
step(actions) returns (observations, rewards (N,) float32, dones (N,) bool, extras) after a
same-step autoreset: a done environment's observation starts its new episode.
extras["time_outs"] marks the episodes cut by the time limit (value bootstrapping);
extras["log"] has the mean return and length of the episodes that ended ("/episode_return",
"/episode_length"), which the runner's logger writes. On the CPU the tensors share memory with
the environment's arrays where they can (torch.from_numpy); another `device` copies them there.
episode_length_buf is the environment's own counter (setting it, as the runner's
init_at_random_ep_len does, writes the environment's).
"""
import numpy as np
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from .base import AutoresetMode


class RslRlVecEnv(VecEnv):
    """rsl_rl's VecEnv over a batchdyn VectorEnv in SAME_STEP autoreset mode."""

    def __init__(self, env, device="cpu"):
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(f"RslRlVecEnv: rsl_rl expects same-step autoreset; the env's mode is {env.autoreset_mode}")
        if env.single_observation_space.dtype != np.float32:
            raise ValueError(f"RslRlVecEnv: rsl_rl's networks take float32; the env's observations are "
                             f"{env.single_observation_space.dtype} (make the env with dtype=np.float32)")
        self.env = env
        self.device = torch.device(device)
        self.num_envs, self.num_actions = env.num_envs, env.act_dim
        self.max_episode_length = env.max_episode_steps
        self.cfg = {"task": type(env).__name__, "num_envs": env.num_envs, "dt": env.dt}
        self._episode_length = torch.from_numpy(env.episode_length)  # int64, shares the env's counters
        self._obs = None

    @property
    def episode_length_buf(self):
        """The environment's episode lengths (N,), int64."""
        return self._episode_length.to(self.device)

    @episode_length_buf.setter
    def episode_length_buf(self, value):
        self._episode_length.copy_(torch.as_tensor(value).to("cpu", torch.int64))

    def _observations(self, obs):
        return TensorDict({"policy": torch.from_numpy(obs).to(self.device)}, batch_size=[self.num_envs], device=self.device)

    def reset(self):
        """Resets every environment; returns the observations."""
        obs, _ = self.env.reset()
        self._obs = self._observations(obs)
        return self._obs

    def get_observations(self):
        """The current observations (the first call resets the environments)."""
        if self._obs is None:
            return self.reset()
        return self._obs

    def step(self, actions):
        """actions: (N, num_actions). Returns (observations, rewards, dones, extras); see the module's docstring."""
        obs, reward, terminated, truncated, info = self.env.step(actions.detach().to("cpu").numpy())
        done = terminated | truncated
        extras = {"time_outs": torch.from_numpy(truncated).to(self.device)}
        if done.any():
            stats = self.env.episode_statistics
            extras["log"] = {"/episode_return": float(stats["r"][done].mean()), "/episode_length": float(stats["l"][done].mean())}
        self._obs = self._observations(obs)
        return (self._obs, torch.from_numpy(reward.astype(np.float32)).to(self.device), torch.from_numpy(done).to(self.device),
                extras)

    def close(self):
        self.env.close()
