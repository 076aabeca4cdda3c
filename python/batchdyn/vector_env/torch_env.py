"""TorchVecEnv: a batchdyn vector environment for torch-tensor training loops, in the style of
rsl_rl's VecEnv and rl_games' vecenv (Isaac Gym / Isaac Lab / legged_gym conventions):

    env = TorchVecEnv(vector_env.make("Quadruped", num_envs=4096))
    obs, extras = env.reset()
    obs, rewards, dones, extras = env.step(actions)     # torch tensors in, torch tensors out
    bootstrap = extras["time_outs"]                      # ended by the time limit, not terminated

Same-step autoreset: obs of a done environment starts its new episode; extras["time_outs"]
marks the episodes cut by the time limit (value bootstrapping), extras["final_obs"] holds the
ended episodes' last observations (a tensor, rows of done environments valid), and
extras["episode"] the finished episodes' mean return and length (when some finished).
Observations, rewards and dones share memory with the environment's NumPy arrays on the CPU
(torch.from_numpy, no copy); another `device` copies them there.
"""
import numpy as np
import torch

from .base import AutoresetMode


class TorchVecEnv:
    """rsl_rl-style VecEnv over a batchdyn VectorEnv in SAME_STEP autoreset mode."""

    def __init__(self, env, device="cpu"):
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(f"TorchVecEnv: expects same-step autoreset; the env's mode is {env.autoreset_mode}")
        self.env = env
        self.device = torch.device(device)
        self.num_envs, self.num_obs, self.num_actions = env.num_envs, env.obs_dim, env.act_dim
        self.num_privileged_obs = None
        self.max_episode_length = env.max_episode_steps
        self.episode_length_buf = torch.from_numpy(env.episode_length)  # shares the env's counters
        self._obs = None
        self._final_obs = torch.from_numpy(np.zeros((self.num_envs, self.num_obs), dtype=env.observation_space.dtype))

    def _tensor(self, array):
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device)

    def reset(self):
        """Resets every environment: (obs (N, num_obs), extras)."""
        obs, _ = self.env.reset()
        self._obs = self._tensor(obs)
        return self._obs, {"observations": {}}

    def get_observations(self):
        """The last observations and extras (rsl_rl 2.x's get_observations)."""
        if self._obs is None:
            return self.reset()
        return self._obs, {"observations": {}}

    def step(self, actions):
        """actions: a (N, num_actions) tensor. Returns (obs, rewards (N,) float32, dones (N,) long,
        extras with "time_outs" (N,) bool, "final_obs" and, when episodes ended, "episode")."""
        obs, reward, terminated, truncated, info = self.env.step(actions.detach().to("cpu").numpy())
        done = terminated | truncated
        extras = {"time_outs": self._tensor(truncated), "observations": {}}
        if done.any():
            final = np.stack(info["final_obs"][done])
            self._final_obs[torch.from_numpy(done)] = torch.from_numpy(final)
            extras["episode"] = {"return": torch.tensor(float(info["episode"]["r"][done].mean())),
                                 "length": torch.tensor(float(info["episode"]["l"][done].mean()))}
        extras["final_obs"] = self._final_obs.to(self.device)
        self._obs = self._tensor(obs)
        return self._obs, self._tensor(reward.astype(np.float32)), self._tensor(done.astype(np.int64)), extras

    def close(self):
        self.env.close()
