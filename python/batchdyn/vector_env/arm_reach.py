"""ArmReach: move the palm of a 7-dof arm (models/arm7.urdf) to a random goal, PD position control."""
import numpy as np

from .. import Batch, load
from .base import AutoresetMode, VectorEnv
from ..models import model_path


class ArmReach(VectorEnv):
    """Move the palm to a goal and hold it there.

    * Action: the joints' PD targets, absolute: target = action x 2.9 rad (the URDF's limits,
      +-2.9 rad), kp = 200 N m/rad, kd = 20 N m s/rad, torques clamped to the URDF's 80 N m.
      Any pose within the limits can be commanded, and held against gravity: the shoulder needs
      up to 41 N m, i.e. a target 0.2 rad beyond the pose. (A target relative to the current
      position, q + 0.1 a, could hold 20 N m at most: half of the goal poses could not be held.)
    * Observation (20): q (7), qd (7), palm position (3), goal (3).
    * Reward per step: -|palm - goal| - 0.01 |action - previous action|^2 (m); 200 steps of
      dt = 0.02 s (4 substeps). No termination.
    * Goals: the palm positions of configurations uniform within the joint limits (reachable).
      Resets: q within +-0.1 rad of the stretched arm, at rest, targets at q.
    * scripted_actions(): the baseline, resolved-rate inverse kinematics (damped least squares on
      the palm's finite-difference Jacobian) tracked by the PD: it knows the kinematics exactly but
      not the dynamics (no gravity compensation)."""

    obs_dim = 20
    act_dim = 7
    max_episode_steps = 200
    kp, kd = 200.0, 20.0
    training = dict(envs=2048, steps=16, iterations=600, hidden=(64, 64), activation="tanh", lr=1e-3, epochs=4,
                    minibatches=16, reward_scale=0.1, log_std=-1.0, entropy=0.0, desired_kl=0.01)

    def __init__(self, num_envs=1024, threads=0, dtype=np.float32, autoreset_mode=AutoresetMode.SAME_STEP, copy=True):
        # Geared actuators: rotor inertia 0.1 kg m^2 and damping 0.5 N m s/rad per joint
        # (models/arm7_actuators.json), which also keeps the stiff PD stable at h = 5 ms.
        model = load(model_path("arm7.urdf"), constraints=model_path("arm7_actuators.json"))
        super().__init__(model, num_envs, 0.02, 4, threads, dtype, autoreset_mode, copy)
        nv = model.nv
        self.batch.set_pd_gains([self.kp] * nv, [self.kd] * nv)
        self.batch.control_mode = "pd"
        self.batch.set_observed_frames(["palm"])
        self.action_scale = np.asarray(model.upper_position_limit, dtype=np.float64)
        self.goal = np.zeros((self.num_envs, 3), dtype=self.batch.q.dtype)
        self._previous_action = np.zeros((self.num_envs, 7), dtype=np.float64)
        self._goal_batch = Batch(model, self.num_envs, dtype=dtype, threads=threads)  # forward kinematics of goals
        self._goal_batch.set_observed_frames(["palm"])
        self._jacobian_batch = None  # scripted_actions' finite differences, made on first use

    def reset_envs(self, envs, keys):
        self.batch.reset(envs, seeds=keys, noise=0.1)
        self.batch.target[envs] = self.batch.q[envs]
        self._previous_action[envs] = self.batch.q[envs] / self.action_scale
        self._goal_batch.reset(envs, seeds=keys ^ np.uint64(0x5EED))  # uniform within the limits
        self.goal[envs] = self._goal_batch.observe()[envs, 0, 0:3]

    def apply_actions(self, actions):
        np.multiply(actions, self.action_scale, out=self.batch.target, casting="unsafe")

    def observe(self, out, envs=None):  # every row (cheap)
        palm = self.batch.observe()[:, 0, 0:3]
        out[:, 0:7] = self.batch.q
        out[:, 7:14] = self.batch.v
        out[:, 14:17] = palm
        out[:, 17:20] = self.goal

    def rewards_and_terminations(self, actions):
        distance = np.linalg.norm((self._obs[:, 14:17] - self.goal).astype(np.float64), axis=1)
        change = actions.astype(np.float64) - self._previous_action
        self._previous_action[:] = actions
        return -distance - 0.01 * np.einsum("ij,ij->i", change, change), np.zeros(self.num_envs, dtype=bool)

    def step_info(self):
        return {"distance": np.linalg.norm((self._obs[:, 14:17] - self.goal).astype(np.float64), axis=1)}

    def scripted_actions(self, damping=0.05, max_step=0.3):
        """The baseline's actions for the current states: target = q + J^T (J J^T + damping^2 I)^-1
        (goal - palm), each joint's change clipped to max_step rad, where J (3 x 7) is the palm
        position's Jacobian by central differences (1e-4 rad) on a second Batch of 14 N states."""
        n, nq = self.num_envs, 7
        if self._jacobian_batch is None:
            self._jacobian_batch = Batch(self.model, 2 * nq * n, dtype=np.float64, threads=self.batch.threads)
            self._jacobian_batch.set_observed_frames(["palm"])
        q = self.batch.q.astype(np.float64)
        eps = 1e-4
        probe = np.repeat(q[:, None, :], 2 * nq, axis=1)  # (n, 14, 7): +eps then -eps per joint
        probe[:, np.arange(nq), np.arange(nq)] += eps
        probe[:, nq + np.arange(nq), np.arange(nq)] -= eps
        self._jacobian_batch.q[:] = probe.reshape(-1, nq)
        palm = self._jacobian_batch.observe()[:, 0, 0:3].reshape(n, 2 * nq, 3)
        jacobian = np.transpose(palm[:, :nq] - palm[:, nq:], (0, 2, 1)) / (2 * eps)  # (n, 3, 7)
        error = (self.goal - self.batch.observe()[:, 0, 0:3]).astype(np.float64)
        jjt = jacobian @ np.transpose(jacobian, (0, 2, 1)) + damping ** 2 * np.eye(3)
        step = np.einsum("nij,nj->ni", np.transpose(jacobian, (0, 2, 1)), np.linalg.solve(jjt, error[:, :, None])[:, :, 0])
        target = q + np.clip(step, -max_step, max_step)
        return np.clip(target / self.action_scale, -1.0, 1.0)
