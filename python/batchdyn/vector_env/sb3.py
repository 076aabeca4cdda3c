"""SB3VecEnv: a batchdyn vector environment as a Stable-Baselines3 VecEnv
(stable_baselines3.common.vec_env.VecEnv), which SB3's algorithms take as it is.

    from stable_baselines3 import PPO
    venv = SB3VecEnv(vector_env.make("CartPole", num_envs=64))
    PPO("MlpPolicy", venv).learn(100_000)

SB3's rules: reset() returns the observations only (seed() and set_options() apply to the next
reset; reset_infos holds the per-environment reset infos); step_wait() returns (obs, rewards,
dones, infos) with infos a list of one dict per environment. An environment that is done was
reset in the same step: its dict has "terminal_observation" (the ended episode's last
observation), "TimeLimit.truncated" (ended by the time limit, not terminated) and "episode"
({"r", "l", "t"}, as SB3's Monitor/VecMonitor write it). Spaces are the single environment's
gymnasium.spaces.Box.
"""
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from .base import AutoresetMode


class SB3VecEnv(VecEnv):
    """Stable-Baselines3's VecEnv over a batchdyn VectorEnv in SAME_STEP autoreset mode."""

    def __init__(self, env):
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(f"SB3VecEnv: SB3 expects same-step autoreset; the env's mode is {env.autoreset_mode}")
        self.env = env
        self._actions = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self):
        """Resets every environment with the seeds (seed(): environment i gets seed + i) and options
        (one dict for all: batchdyn's environments share them) set before; returns the observations."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = [o for o in self._options if o]
        if any(o != options[0] for o in options) or (options and len(options) != self.num_envs):
            raise ValueError("SB3VecEnv.reset: batchdyn's environments take one set of options for all; set_options(dict)")
        obs, _ = self.env.reset(seed=seeds, options=options[0] if options else None)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions):
        self._actions = actions

    def step_wait(self):
        """(obs, rewards float32, dones bool, infos: a dict per environment)."""
        if self._actions is None:
            raise RuntimeError("step_wait: call step_async(actions) first")
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos = [{} for _ in range(self.num_envs)]
        stats = self.env.episode_statistics
        for i in np.flatnonzero(dones):
            infos[i] = {"terminal_observation": info["final_obs"][i],
                        "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                        "episode": {"r": float(stats["r"][i]), "l": int(stats["l"][i]), "t": float(stats["t"][i])}}
        return obs, reward.astype(np.float32), dones, infos

    def close(self):
        self.env.close()

    def get_images(self):
        return [None] * self.num_envs

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return indices

    def get_attr(self, attr_name, indices=None):
        """The vector env's attribute, once per requested environment (they share it)."""
        value = getattr(self.env, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None):
        """Sets the vector env's attribute (shared by every environment: indices must be all or None)."""
        if indices is not None and len(list(self._indices(indices))) != self.num_envs:
            raise ValueError("set_attr: batchdyn environments share their attributes; set them for all (indices=None)")
        setattr(self.env, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        """Calls the vector env's method once; returns its result for each requested environment."""
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]

    def __len__(self):
        return self.num_envs
