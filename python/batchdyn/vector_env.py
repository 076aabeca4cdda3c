"""Vectorised environments on a batchdyn Batch, following Gymnasium's VectorEnv conventions
without importing Gymnasium (Debian does not ship it):

    env = batchdyn.vector_env.CartPole(num_envs=4096, seed=0)
    obs, info = env.reset(seed=0)                               # (N, obs_dim) float32
    obs, reward, terminated, truncated, info = env.step(actions)  # actions (N, act_dim) in [-1, 1]

* Autoreset, "same-step" mode: an environment that terminates or is truncated is reset inside
  the same step() call; the returned obs row is the first observation of its new episode and
  info["final_obs"] holds the last observation of the finished one (rows where
  info["done"] is True). info["episode_return"] / info["episode_length"] give the finished
  episodes' totals (NaN / 0 elsewhere).
* single_observation_space / single_action_space / observation_space / action_space are Box
  descriptions (low, high, shape, dtype) with Gymnasium's field names.
* Resets are reproducible: reset(seed=s) seeds a counter (one draw per environment and reset
  number, batch/counter_rng.hpp), so results do not depend on the thread count.

Everything is vectorised with NumPy over the Batch's zero-copy views; the physics runs in C++
with the GIL released.
"""
import os

import numpy as np

from . import Batch, load

__all__ = ["Box", "CartPole", "ArmReach", "Quadruped"]


def _models_dir():
    """The shipped models: $BATCHDYN_MODELS, the source tree, or the install's share/."""
    from ._config import MODELS_DIRS  # written by CMake: the source tree's and the install's models/

    candidates = [os.environ.get("BATCHDYN_MODELS", "")] + list(MODELS_DIRS)
    for c in candidates:
        if c and os.path.exists(os.path.join(c, "cartpole.urdf")):
            return os.path.abspath(c)
    raise FileNotFoundError("batchdyn models not found: set BATCHDYN_MODELS to the repository's models/ folder")


class Box:
    """A box-shaped space, as gymnasium.spaces.Box: low, high, shape, dtype."""

    def __init__(self, low, high, shape, dtype=np.float32):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape)
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape)

    def __repr__(self):
        return f"Box(shape={self.shape}, dtype={self.dtype})"


class _VectorEnv:
    """Shared machinery: the Batch, episode bookkeeping, autoreset, spaces."""

    obs_dim = 0
    act_dim = 0
    max_episode_steps = 0

    def __init__(self, model, num_envs, dt, substeps, threads, dtype):
        self.num_envs = int(num_envs)
        self.model = model
        self.batch = Batch(model, self.num_envs, dtype=dtype, threads=threads)
        self.dt, self.substeps = float(dt), int(substeps)
        self.single_observation_space = Box(-np.inf, np.inf, (self.obs_dim,))
        self.single_action_space = Box(-1.0, 1.0, (self.act_dim,))
        self.observation_space = Box(-np.inf, np.inf, (self.num_envs, self.obs_dim))
        self.action_space = Box(-1.0, 1.0, (self.num_envs, self.act_dim))
        self.metadata = {"autoreset_mode": "same-step"}
        self.episode_length = np.zeros(self.num_envs, dtype=np.int64)
        self.episode_return = np.zeros(self.num_envs, dtype=np.float64)
        self._obs = np.zeros((self.num_envs, self.obs_dim), dtype=np.float32)
        self._seed = 0
        self._resets = 0  # reset rounds drawn so far: each draw uses its own counter seed

    # --- to be provided by a task ---
    def _reset_envs(self, envs, seed):
        raise NotImplementedError

    def _apply_action(self, actions):
        raise NotImplementedError

    def _observe(self, out):
        raise NotImplementedError

    def _reward_and_termination(self, actions):
        raise NotImplementedError

    _step_info = {}  # a task's extra entries of the info dict of step()

    # --- Gymnasium-style API ---
    def reset(self, seed=None, options=None):
        """Resets every environment; returns (obs, info)."""
        if seed is not None:
            self._seed, self._resets = int(seed), 0
        self._reset_envs(np.arange(self.num_envs, dtype=np.int32), self._next_seed())
        self.episode_length[:] = 0
        self.episode_return[:] = 0
        self._observe(self._obs)
        return self._obs.copy(), {}

    def step(self, actions):
        """Applies actions (N, act_dim) in [-1, 1], steps the physics, returns (obs, reward,
        terminated, truncated, info) with same-step autoreset."""
        actions = np.asarray(actions, dtype=np.float32).reshape(self.num_envs, self.act_dim)
        actions = np.clip(actions, -1.0, 1.0)
        self._apply_action(actions)
        self.batch.step(self.dt, self.substeps)
        self._observe(self._obs)
        reward, terminated = self._reward_and_termination(actions)
        failed = self.batch.status != 0  # a diverged environment ends its episode
        terminated = terminated | failed
        self.episode_length += 1
        self.episode_return += reward
        truncated = (self.episode_length >= self.max_episode_steps) & ~terminated
        done = terminated | truncated
        info = {"done": done, **self._step_info}
        if done.any():
            envs = np.flatnonzero(done).astype(np.int32)
            info["final_obs"] = self._obs.copy()
            info["episode_return"] = np.where(done, self.episode_return, np.nan)
            info["episode_length"] = np.where(done, self.episode_length, 0)
            self._reset_envs(envs, self._next_seed())
            self.episode_length[envs] = 0
            self.episode_return[envs] = 0
            self._observe(self._obs)
        return self._obs.copy(), reward.astype(np.float32), terminated, truncated, info

    def _next_seed(self):
        self._resets += 1
        return (self._seed * 1_000_003 + self._resets) & 0xFFFFFFFFFFFFFFFF


class CartPole(_VectorEnv):
    """Balance a pole on a cart (models/cartpole.urdf). Action: cart force in [-1, 1] x
    force_scale N. Observation: [x, theta, x_dot, theta_dot]. Reward 1 per step while
    |x| <= 2.4 m and |theta| <= 12 degrees (Gymnasium's thresholds); episodes last at most
    max_episode_steps = 500 steps of dt = 0.02 s (2 substeps). Resets: q, v uniform in +-0.05."""

    obs_dim = 4
    act_dim = 1
    max_episode_steps = 500
    x_threshold = 2.4
    theta_threshold = 12 * np.pi / 180

    def __init__(self, num_envs=4096, threads=0, force_scale=10.0, dtype=np.float32):
        super().__init__(load(os.path.join(_models_dir(), "cartpole.urdf")), num_envs, 0.02, 2, threads, dtype)
        self.force_scale = float(force_scale)

    def _reset_envs(self, envs, seed):
        self.batch.reset(envs, seed=seed, noise=0.05, velocity_noise=0.05)

    def _apply_action(self, actions):
        tau = self.batch.tau
        tau[:, 0] = actions[:, 0] * self.force_scale
        tau[:, 1] = 0.0

    def _observe(self, out):
        out[:, 0:2] = self.batch.q
        out[:, 2:4] = self.batch.v

    def _reward_and_termination(self, actions):
        x, theta = self._obs[:, 0], self._obs[:, 1]
        terminated = (np.abs(x) > self.x_threshold) | (np.abs(theta) > self.theta_threshold)
        return np.ones(self.num_envs, dtype=np.float64), terminated


class ArmReach(_VectorEnv):
    """Move the palm of the 7-dof arm (models/arm7.urdf) to a random goal. PD position control
    (kp = 200 N m/rad, kd = 20 N m s/rad, geared joints): the action moves each joint's target by up to 0.1 rad per step
    from the current position. Observation: [q (7), qd (7), palm position (3), goal (3)].
    Reward: -|palm - goal| - 0.01 |action|^2; 200 steps of dt = 0.02 s (4 substeps). Goals are
    the palm positions of random configurations within the joint limits (always reachable)."""

    obs_dim = 20
    act_dim = 7
    max_episode_steps = 200

    def __init__(self, num_envs=1024, threads=0, dtype=np.float32):
        # Geared actuators: rotor inertia 0.1 kg m^2 and damping 0.5 N m s/rad per joint
        # (models/arm7_actuators.json), which also keeps the stiff PD stable at h = 5 ms.
        model = load(os.path.join(_models_dir(), "arm7.urdf"), constraints=os.path.join(_models_dir(), "arm7_actuators.json"))
        super().__init__(model, num_envs, 0.02, 4, threads, dtype)
        nv = model.nv
        self.batch.set_pd_gains([200.0] * nv, [20.0] * nv)
        self.batch.control_mode = "pd"
        self.batch.set_observed_frames(["palm"])
        self.goal = np.zeros((self.num_envs, 3), dtype=np.float32)
        self._goal_batch = Batch(model, self.num_envs, dtype=dtype, threads=threads)  # forward kinematics of goals
        self._goal_batch.set_observed_frames(["palm"])

    def _reset_envs(self, envs, seed):
        self.batch.reset(envs, seed=seed, noise=0.1)
        self.batch.target[envs] = self.batch.q[envs]
        self._goal_batch.reset(envs, seed=seed ^ 0x5EED)  # uniform within the limits
        self.goal[envs] = self._goal_batch.observe()[envs, 0, 0:3]

    def _apply_action(self, actions):
        self.batch.target[:] = self.batch.q + 0.1 * actions

    def _observe(self, out):
        palm = self.batch.observe()[:, 0, 0:3]
        out[:, 0:7] = self.batch.q
        out[:, 7:14] = self.batch.v
        out[:, 14:17] = palm
        out[:, 17:20] = self.goal

    def _reward_and_termination(self, actions):
        distance = np.linalg.norm(self._obs[:, 14:17] - self.goal, axis=1)
        reward = -distance - 0.01 * np.sum(actions.astype(np.float64) ** 2, axis=1)
        return reward, np.zeros(self.num_envs, dtype=bool)


def _rotate_into_body(quat_xyzw, vec):
    """R^T vec for unit quaternions (x, y, z, w) of shape (N, 4) and vectors (N, 3): a world
    vector in the body frame."""
    u, w = -quat_xyzw[:, 0:3], quat_xyzw[:, 3:4]  # the conjugate rotates world -> body
    t = 2.0 * np.cross(u, vec)
    return vec + w * t + np.cross(u, t)


class Quadruped(_VectorEnv):
    """Walk forward at a commanded speed: Unitree A1 (models/a1.urdf, 12 joints, 13.7 kg) on
    flat ground with frictional contact (models/a1_contacts.json: four 2 cm sphere feet and
    the trunk box, mu = 1), in the spirit of legged_gym's A1 flat task (Rudin et al. 2022).

    * Control: PD position targets, kp = 20 N m/rad, kd = 0.5 N m s/rad, torques clamped to
      the URDF's 33.5 N m; target = default pose + action_scale x action (action in [-1, 1]^12).
      dt = 0.02 s per step in 4 substeps of 5 ms (contact and PD every substep).
    * Command: forward speed v_cmd ~ U[command_range] m/s in the base frame, drawn per episode;
      the sideways speed and the yaw rate are commanded to 0.
    * Observation (50): base linear velocity x 2 and angular velocity x 0.25 (base frame),
      gravity in the base frame, v_cmd x 2, joint positions - default, joint velocities x 0.05,
      the previous action, foot contacts (normal force > 1 N) as 0/1.
    * Reward per step (x dt, legged_gym's terms and weights): exp(-|v_xy - (v_cmd, 0)|^2 / 0.25)
      + 0.5 exp(-w_z^2 / 0.25) - 2 v_z^2 - 0.05 |w_xy|^2 - |g_xy|^2 - 2e-4 |tau|^2
      - 2.5e-7 |qdd|^2 - 0.01 |a - a_prev|^2 + sum over feet touching down of (air time - 0.5 s)
      (only when v_cmd > 0.1).
    * Termination: the trunk within the contact margin of the ground (a fall), or a failed
      environment; episodes last at most 1000 steps (20 s).
    * Resets: the default pose 0.32 m above the ground, perturbed by +-noise (positions,
      orientation, joints) and +-velocity_noise.
    * terrain_roughness > 0: rolling hills (a height field shared by every environment, heights
      within +-terrain_roughness m, kernels/terrain.hpp) instead of the flat ground; each episode
      starts at a random place on them. The observation does not include the terrain.

    Extra info after each step: info["forward_velocity"], info["command"] and
    info["contact_iterations"] (the ADMM's iterations in the step's last substep), each (N,)."""

    obs_dim = 50
    act_dim = 12
    max_episode_steps = 1000
    # FL, FR, RL, RR: hip, thigh, calf (the URDF's depth-first joint order), legged_gym's defaults
    default_joint_positions = np.array([0.1, 0.8, -1.5, -0.1, 0.8, -1.5, 0.1, 1.0, -1.5, -0.1, 1.0, -1.5])
    kp, kd = 20.0, 0.5
    feet = slice(0, 4)    # contact candidates of the feet (models/a1_contacts.json order)
    trunk = slice(4, 12)  # the trunk box's 8 corners

    def __init__(self, num_envs=4096, threads=0, dtype=np.float32, action_scale=0.5, command_range=(0.0, 1.0),
                 noise=0.05, velocity_noise=0.1, terrain_roughness=0.0):
        d = _models_dir()
        model = load(os.path.join(d, "a1.urdf"), root="free", contacts=os.path.join(d, "a1_contacts.json"))
        super().__init__(model, num_envs, 0.02, 4, threads, dtype)
        self.action_scale, self.command_range = float(action_scale), tuple(command_range)
        self.terrain_roughness = float(terrain_roughness)
        if self.terrain_roughness > 0:
            self._make_hills(self.terrain_roughness)
        self.noise, self.velocity_noise = float(noise), float(velocity_noise)
        self.reference = np.zeros(model.nq)
        self.reference[2], self.reference[6], self.reference[7:] = 0.32, 1.0, self.default_joint_positions
        self.batch.set_reference_configuration(self.reference)
        self.batch.set_pd_gains([0.0] * 6 + [self.kp] * 12, [0.0] * 6 + [self.kd] * 12)
        self.batch.control_mode = "pd"
        self.effort = np.asarray(self.batch.effort_limits[6:], dtype=np.float64)
        self.command = np.zeros(self.num_envs, dtype=np.float32)
        self.last_action = np.zeros((self.num_envs, 12), dtype=np.float32)
        self.air_time = np.zeros((self.num_envs, 4))
        self._tau = np.zeros((self.num_envs, 12))
        self._previous_action = np.zeros((self.num_envs, 12), dtype=np.float32)
        self._rng = np.random.default_rng(0)

    def _make_hills(self, roughness):
        """Rolling hills shared by every environment: a 40 m x 40 m grid (0.1 m spacing) around the
        origin, a sum of random sines of 1-4 m wavelength, heights within +-roughness m."""
        rng = np.random.default_rng(12345)
        self.terrain_spacing, self.terrain_origin, points = 0.1, (-20.0, -20.0), 401
        x, y = np.meshgrid(np.arange(points) * 0.1 - 20.0, np.arange(points) * 0.1 - 20.0)  # (ny, nx)
        h = np.zeros_like(x)
        for _ in range(8):
            k = rng.uniform(2 * np.pi / 4.0, 2 * np.pi / 1.0, size=2) * rng.choice([-1, 1], size=2)
            h += np.sin(k[0] * x + k[1] * y + rng.uniform(0, 2 * np.pi))
        self.terrain = roughness * h / np.abs(h).max()
        self.batch.set_terrain(self.terrain, self.terrain_spacing, self.terrain_origin)

    def terrain_height(self, x, y):
        """The ground's height under world points (x, y): the hills' (bilinear, as the engine's) or 0."""
        if self.terrain_roughness <= 0:
            return np.zeros(np.broadcast(x, y).shape)
        u = np.clip((np.asarray(x) - self.terrain_origin[0]) / self.terrain_spacing, 0, self.terrain.shape[1] - 1)
        w = np.clip((np.asarray(y) - self.terrain_origin[1]) / self.terrain_spacing, 0, self.terrain.shape[0] - 1)
        i, j = np.minimum(u.astype(int), self.terrain.shape[1] - 2), np.minimum(w.astype(int), self.terrain.shape[0] - 2)
        a, b, t = u - i, w - j, self.terrain
        return (1 - b) * ((1 - a) * t[j, i] + a * t[j, i + 1]) + b * ((1 - a) * t[j + 1, i] + a * t[j + 1, i + 1])

    def _reset_envs(self, envs, seed):
        self.batch.reset(envs, seed=seed, noise=self.noise, velocity_noise=self.velocity_noise)
        self.batch.target[envs] = 0.0
        self.batch.target[envs, 6:] = self.default_joint_positions
        self._rng = np.random.default_rng(seed)
        if self.terrain_roughness > 0:  # start anywhere on the hills, the reference height above them
            start = self._rng.uniform(-15.0, 15.0, size=(len(envs), 2))
            self.batch.q[envs, 0:2] = start
            self.batch.q[envs, 2] += self.terrain_height(start[:, 0], start[:, 1]).astype(self.batch.q.dtype)
        self.command[envs] = self._rng.uniform(*self.command_range, size=len(envs))
        self.last_action[envs] = 0.0
        self.air_time[envs] = 0.0

    def _apply_action(self, actions):
        self._previous_action[:] = self.last_action
        self.last_action[:] = actions
        self.batch.target[:, 6:] = self.default_joint_positions + self.action_scale * actions
        # the PD torque of the first substep, for the torque penalty (the engine computes its own)
        q, v = self.batch.q[:, 7:], self.batch.v[:, 6:]
        self._tau[:] = np.clip(self.kp * (self.batch.target[:, 6:] - q) - self.kd * v, -self.effort, self.effort)

    def _observe(self, out):
        q, v = self.batch.q, self.batch.v
        gravity = _rotate_into_body(q[:, 3:7].astype(np.float64), np.broadcast_to([0.0, 0.0, -1.0], (self.num_envs, 3)))
        out[:, 0:3] = 2.0 * v[:, 0:3]    # the free-flyer's v is in the base frame (Pinocchio's convention)
        out[:, 3:6] = 0.25 * v[:, 3:6]
        out[:, 6:9] = gravity
        out[:, 9] = 2.0 * self.command
        out[:, 10:22] = q[:, 7:] - self.default_joint_positions
        out[:, 22:34] = 0.05 * v[:, 6:]
        out[:, 34:46] = self.last_action
        out[:, 46:50] = self.batch.contact_forces[:, self.feet, 2] > 1.0

    def _reward_and_termination(self, actions):
        v = self.batch.v.astype(np.float64)
        gravity = self._obs[:, 6:9].astype(np.float64)
        command = self.command.astype(np.float64)
        contact = self.batch.contact_forces[:, self.feet, 2] > 1.0
        first_contact = contact & (self.air_time > 0)
        self.air_time += self.dt
        air_reward = np.sum((self.air_time - 0.5) * first_contact, axis=1) * (command > 0.1)
        self.air_time[contact] = 0.0
        velocity_error = (v[:, 0] - command) ** 2 + v[:, 1] ** 2
        reward = (np.exp(-velocity_error / 0.25)
                  + 0.5 * np.exp(-v[:, 5] ** 2 / 0.25)
                  - 2.0 * v[:, 2] ** 2
                  - 0.05 * np.sum(v[:, 3:5] ** 2, axis=1)
                  - np.sum(gravity[:, 0:2] ** 2, axis=1)
                  - 2e-4 * np.sum(self._tau ** 2, axis=1)
                  - 2.5e-7 * np.sum(self.batch.qdd[:, 6:].astype(np.float64) ** 2, axis=1)
                  - 0.01 * np.sum((actions - self._previous_action).astype(np.float64) ** 2, axis=1)
                  + air_reward) * self.dt
        terminated = np.any(self.batch.contact_flags[:, self.trunk] > 0, axis=1)
        self._step_info = {"forward_velocity": v[:, 0].copy(), "command": self.command.copy(),
                           "contact_iterations": np.asarray(self.batch.contact_iterations)}
        return reward, terminated
