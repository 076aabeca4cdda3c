"""CartPole: balance a pole on a cart (models/cartpole.urdf), Gymnasium's CartPole-v1 task on the
engine's dynamics with a continuous force."""
import numpy as np

from .. import load
from .base import AutoresetMode, VectorEnv
from ..models import model_path


class CartPole(VectorEnv):
    """Action: the cart's force in [-1, 1] x force_scale N. Observation: [x, theta, x_dot,
    theta_dot]. Reward 1 per step while |x| <= 2.4 m and |theta| <= 12 degrees (Gymnasium's
    thresholds); episodes last at most max_episode_steps = 500 steps of dt = 0.02 s (2 substeps).
    Resets: q, v uniform in +-0.05."""

    obs_dim = 4
    act_dim = 1
    max_episode_steps = 500
    x_threshold = 2.4
    theta_threshold = 12 * np.pi / 180
    training = dict(envs=2048, steps=16, iterations=150, hidden=(32, 32), activation="tanh", lr=1e-3, epochs=4,
                    minibatches=16, reward_scale=0.1, log_std=-1.0, entropy=0.0, desired_kl=None,
                    solved_length=0.95)

    def __init__(self, num_envs=4096, threads=0, force_scale=10.0, dtype=np.float32,
                 autoreset_mode=AutoresetMode.SAME_STEP, copy=True):
        super().__init__(load(model_path("cartpole.urdf")), num_envs, 0.02, 2, threads, dtype, autoreset_mode, copy)
        self.force_scale = float(force_scale)
        self._reward = np.ones(self.num_envs, dtype=np.float64)

    def reset_envs(self, envs, keys):
        self.batch.reset(envs, seeds=keys, noise=0.05, velocity_noise=0.05)

    def apply_actions(self, actions):
        tau = self.batch.tau
        np.multiply(actions[:, 0], self.force_scale, out=tau[:, 0])
        tau[:, 1] = 0.0

    def observe(self, out, envs=None):  # every row (cheap)
        q, v = self.batch.q, self.batch.v
        for k in range(2):  # a column at a time: NumPy copies a 2-wide (N, 2) slice row by row, 6x slower
            out[:, k] = q[:, k]
            out[:, 2 + k] = v[:, k]

    def rewards_and_terminations(self, actions):
        x, theta = self._obs[:, 0], self._obs[:, 1]
        terminated = (np.abs(x) > self.x_threshold) | (np.abs(theta) > self.theta_threshold)
        return self._reward.copy(), terminated
