"""VectorEnv: the base class of batchdyn's vectorised environments, a gymnasium.vector.VectorEnv.

    env = batchdyn.vector_env.make("CartPole", num_envs=4096)
    obs, info = env.reset(seed=0)                                   # (N, obs_dim), the Batch's dtype
    obs, reward, terminated, truncated, info = env.step(actions)    # actions (N, act_dim) in [-1, 1]
    env.close()

The rules it follows (gymnasium/vector/vector_env.py and sync_vector_env.py, Gymnasium 1.4):

* metadata["autoreset_mode"] is a gymnasium.vector.AutoresetMode. SAME_STEP (batchdyn's default, as Isaac Lab, rsl_rl and SB3 expect): an episode
  that ends is reset inside the same step; the returned observation starts the new episode,
  info["final_obs"] (an object array of rows, None elsewhere) and info["final_info"] hold the
  ended episode's last observation and step info, info["_final_obs"] / info["_final_info"] say
  which environments have them. NEXT_STEP (Gymnasium's default): the step after the end resets
  the environment instead of stepping it (its action is ignored, reward 0, terminated and
  truncated False). DISABLED: never reset automatically; stepping an ended environment raises,
  reset it with reset(options={"reset_mask": mask}).
* Infos are dicts of arrays, each key k with a boolean mask "_k" of the environments that have it.
  Episode statistics are left to Gymnasium's RecordEpisodeStatistics wrapper (info["episode"]),
  as for Gymnasium's own environments; the env keeps them too, for the adapters and training
  loops that read them directly: after a step, episodes_ended (N,) marks the environments whose
  episode ended in it, and episode_statistics = {"r", "l", "t"} (return, length, seconds since
  the episode began) holds each environment's last ended episode.
* reset(seed=None | int | list, options=None): an int s seeds environment i with s + i, a list
  gives one seed each (None: fresh entropy), None continues the environments' streams.
  options["reset_mask"] (bool array of shape (N,), some True) resets only those environments.
* Spaces: single_observation_space / single_action_space and their batched versions are
  gymnasium.spaces.Box. Observations have the Batch's dtype (float32 or float64).
* close() releases the Batch; step() or reset() afterwards raise.

Episode randomness is keyed per environment and episode (vector_env/seeding.py): results do not
depend on the thread count or on which environments end together.

A task subclasses VectorEnv and provides:
    obs_dim, act_dim, max_episode_steps        class attributes
    reset_envs(envs, keys)                     new episodes for the listed environments: write
                                               their Batch state (e.g. self.batch.reset(envs,
                                               seeds=keys, noise=...)) and task state; keys are
                                               the episodes' uint64 keys (self.uniform draws more)
    apply_actions(actions)                     (N, act_dim) in [-1, 1] -> Batch inputs
    observe(out, envs=None)                    the (N, obs_dim) observations into out: every row, or
                                               (envs given, after resets) at least those rows
    rewards_and_terminations(actions)          -> (reward (N,) float64, terminated (N,) bool)
    step_info()                                optional: a dict of (N,) arrays for info
and optionally `training`, a dict of suggested PPO settings that examples/train_ppo.py reads.
"""
import time

import gymnasium
import numpy as np
from gymnasium.spaces import Box
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .. import STATUS_REPORTS, Batch
from . import seeding

# Batch.status values that end an episode: the state is not finite or not valid. The others are
# reports (a solver hit its cap, loops drifted, a contact went deep) on a state that was stepped.
_FAILED_STATUSES = np.array([code != 0 and code not in STATUS_REPORTS for code in range(256)])


class VectorEnv(gymnasium.vector.VectorEnv):
    """N environments of one task on a batchdyn Batch (see the module's docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    render_mode = None
    spec = None
    obs_dim = 0
    act_dim = 0
    max_episode_steps = 0
    training = {}  # suggested PPO settings (examples/train_ppo.py)

    def __init__(self, model, num_envs, dt, substeps, threads=0, dtype=np.float32,
                 autoreset_mode=AutoresetMode.SAME_STEP, copy=True):
        """model: a batchdyn.Model; dt: the control step (s), simulated in `substeps` engine steps;
        threads: the Batch's threads (0 = all cores); dtype: float32 or float64 (the observations'
        too); copy: return copies of the observations (False: the env's own buffer, overwritten
        by the next call)."""
        if not isinstance(autoreset_mode, AutoresetMode):
            try:
                autoreset_mode = AutoresetMode(autoreset_mode)
            except ValueError:
                raise ValueError(f"autoreset_mode must be an AutoresetMode or one of "
                                 f"{[m.value for m in AutoresetMode]}, got {autoreset_mode!r}") from None
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = int(num_envs)
        self.model = model
        self.batch = Batch(model, self.num_envs, dtype=dtype, threads=threads)
        self.dt, self.substeps = float(dt), int(substeps)
        self.copy = bool(copy)
        self.metadata = {**type(self).metadata, "autoreset_mode": autoreset_mode}
        self.autoreset_mode = autoreset_mode
        dtype = self.batch.q.dtype
        self.single_observation_space = Box(-np.inf, np.inf, (self.obs_dim,), dtype)
        self.single_action_space = Box(-1.0, 1.0, (self.act_dim,), dtype)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n = self.num_envs
        self.episode_length = np.zeros(n, dtype=np.int64)
        self.episode_return = np.zeros(n, dtype=np.float64)
        self._episode_start = np.zeros(n, dtype=np.float64)
        self._obs = np.zeros((n, self.obs_dim), dtype=dtype)
        self._actions = np.zeros((n, self.act_dim), dtype=dtype)
        self._env_seeds = seeding.seed_list(None, n)
        self._episodes = np.zeros(n, dtype=np.uint64)
        self._seeded = False
        self._np_random, self._np_random_seed = None, None
        self._ended = np.zeros(n, dtype=bool)  # NEXT_STEP: reset at the next step; DISABLED: must be reset
        self._truncated = np.zeros(n, dtype=bool)
        self._everywhere = np.ones(n, dtype=bool)  # the mask of info entries every environment has
        self._everywhere.flags.writeable = False
        self.episodes_ended = np.zeros(n, dtype=bool)  # whose episode ended in the last step()
        self.episode_statistics = {"r": np.zeros(n), "l": np.zeros(n, dtype=np.int64), "t": np.zeros(n)}  # the last ended ones
        self.physics_seconds = 0.0  # time spent in Batch.step by step(): the rest is the wrapper's
        self.closed = False

    # --- Gymnasium's VectorEnv API ---
    def reset(self, *, seed=None, options=None):
        """Starts new episodes: every environment, or those of options["reset_mask"]. Returns
        (obs, info) with obs (N, obs_dim); info is empty (the tasks have no reset info)."""
        self._check_open("reset")
        mask = None
        options = dict(options or {})
        if "reset_mask" in options:
            mask = np.asarray(options.pop("reset_mask"))
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError(f"reset: options['reset_mask'] must be a bool array of shape ({self.num_envs},), "
                                 f"got {mask.dtype} {mask.shape}")
            if not mask.any():
                raise ValueError("reset: options['reset_mask'] selects no environment (Gymnasium requires at least one)")
        if options:
            raise ValueError(f"reset: unknown options {sorted(options)} (known: 'reset_mask')")
        if seed is not None or not self._seeded:
            seeds = seeding.seed_list(seed, self.num_envs)
            chosen = slice(None) if mask is None else mask
            self._env_seeds[chosen] = seeds[chosen]
            self._episodes[chosen] = 0
            self._seeded = True
            if isinstance(seed, (int, np.integer)):
                self._np_random, self._np_random_seed = np.random.default_rng(int(seed)), int(seed)
        envs = np.arange(self.num_envs, dtype=np.int32) if mask is None else np.flatnonzero(mask).astype(np.int32)
        self._begin_episodes(envs)
        self._ended[envs] = False
        self.observe(self._obs, None if mask is None else envs)
        return self._out(self._obs), {}

    def step(self, actions):
        """Applies actions (N, act_dim), clipped to [-1, 1], steps the physics (dt in `substeps`
        engine steps) and returns (obs, reward, terminated, truncated, info); see the module's
        docstring for the autoreset modes and the info keys. An environment whose state stops
        being valid (Batch.status: non-finite, bad quaternion) terminates; solver reports do not."""
        self._check_open("step")
        actions = self._take_actions(actions)
        mode, pending = self.autoreset_mode, None
        if self._ended.any():
            if mode == AutoresetMode.DISABLED:
                ended = np.flatnonzero(self._ended)
                raise ValueError(f"step: environments {ended[:10].tolist()}{'...' if len(ended) > 10 else ''} ended and "
                                 "autoreset_mode is DISABLED: reset them with reset(options={'reset_mask': mask})")
            pending = self._ended.copy()  # NEXT_STEP: these are reset instead of stepped
        self.apply_actions(actions)
        start = time.perf_counter()
        self.batch.step(self.dt, self.substeps)
        self.physics_seconds += time.perf_counter() - start
        self.observe(self._obs)
        reward, terminated = self.rewards_and_terminations(actions)
        status = self.batch.status
        if status.any():  # rare: a failed state ends its episode, a solver's report does not
            terminated |= _FAILED_STATUSES[status]
        self.episode_length += 1
        self.episode_return += reward
        truncated = np.greater_equal(self.episode_length, self.max_episode_steps, out=self._truncated)
        if terminated.any():
            truncated &= ~terminated
        step_info = self.step_info()
        if pending is not None:  # NEXT_STEP: the first observation of the new episode, reward 0
            envs = np.flatnonzero(pending).astype(np.int32)
            self._begin_episodes(envs)
            self.observe(self._obs, envs)
            reward[pending], terminated[pending], truncated[pending] = 0.0, False, False
        done = terminated | truncated
        info = {}
        for key, value in step_info.items():
            info[key], info["_" + key] = value, self._everywhere
        np.copyto(self.episodes_ended, done)
        if done.any():
            stats = self.episode_statistics
            stats["r"][done], stats["l"][done] = self.episode_return[done], self.episode_length[done]
            stats["t"][done] = np.round(time.perf_counter() - self._episode_start[done], 6)
            if mode == AutoresetMode.SAME_STEP:
                envs = np.flatnonzero(done).astype(np.int32)
                final_obs = np.full(self.num_envs, None, dtype=object)
                final_obs[envs] = list(self._obs[envs])  # rows of a copy (the buffer is overwritten below)
                final_info = {}
                for key, value in step_info.items():
                    final_info[key], final_info["_" + key] = value, done
                    info["_" + key] = ~done  # the new episodes have no step info yet
                info["final_obs"], info["_final_obs"] = final_obs, done
                info["final_info"], info["_final_info"] = final_info, done
                self._begin_episodes(envs)
                self.observe(self._obs, envs)
            else:
                self._ended |= done
        if pending is not None:
            self._ended[pending] = False
        return self._out(self._obs), reward, terminated, truncated.copy(), info

    def close(self, **kwargs):
        """Releases the Batch (its memory); later calls of step() or reset() raise. Idempotent."""
        if self.closed:
            return
        self.close_extras(**kwargs)
        self.batch = None
        self.closed = True

    def close_extras(self, **kwargs):
        """A task's own clean-up (Gymnasium's hook)."""

    def render(self):
        """No rendering (render_mode is None)."""
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if not getattr(self, "closed", True):
            self.close()

    def __repr__(self):
        return f"{type(self).__name__}(num_envs={self.num_envs})"

    # --- for tasks ---
    def uniform(self, keys, stream, count):
        """(len(keys), count) numbers uniform in [0, 1) from the episodes' keys: a task's own random
        quantities (goals, commands), one stream number per quantity."""
        return seeding.uniform(keys, stream, count)

    def step_info(self):
        """A task's extra info entries after a step: a dict of (N,) arrays."""
        return {}

    # --- machinery ---
    def _begin_episodes(self, envs):
        keys = seeding.episode_keys(self._env_seeds[envs], self._episodes[envs])
        self._episodes[envs] += np.uint64(1)
        self.reset_envs(envs, keys)
        self.episode_length[envs] = 0
        self.episode_return[envs] = 0.0
        self._episode_start[envs] = time.perf_counter()

    def _take_actions(self, actions):
        a = np.asarray(actions)
        if a.shape != (self.num_envs, self.act_dim):
            if a.size == self.num_envs * self.act_dim and a.ndim <= 2:
                a = a.reshape(self.num_envs, self.act_dim)
            else:
                raise ValueError(f"step: actions must have shape ({self.num_envs}, {self.act_dim}), got {a.shape}")
        np.copyto(self._actions, a, casting="unsafe")
        np.minimum(self._actions, 1.0, out=self._actions)  # clip to the space (np.clip with out= is slower)
        np.maximum(self._actions, -1.0, out=self._actions)
        if not np.isfinite(self._actions.sum()):  # clipped to [-1, 1]: only a NaN makes the sum not finite
            bad = np.flatnonzero(~np.isfinite(self._actions).all(axis=1))
            raise ValueError(f"step: actions of environments {bad[:10].tolist()} are not finite")
        return self._actions

    def _out(self, obs):
        return obs.copy() if self.copy else obs

    def _check_open(self, what):
        if self.closed:
            raise RuntimeError(f"{what}: the environment is closed")
