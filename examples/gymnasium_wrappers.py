#!/usr/bin/env python3
"""Gymnasium's own vector wrappers on a batchdyn environment: episode statistics, observation
normalisation and torch tensors, as on any gymnasium.vector.VectorEnv.

    .venv/bin/python examples/gymnasium_wrappers.py
"""
import numpy as np
import torch
from gymnasium.wrappers.vector import NormalizeObservation, NumpyToTorch, RecordEpisodeStatistics

from batchdyn import vector_env


def main():
    # Gymnasium's NormalizeObservation takes next-step autoreset (its default); batchdyn's default is same-step.
    env = vector_env.make("CartPole", num_envs=256, autoreset_mode=vector_env.AutoresetMode.NEXT_STEP)
    env = NumpyToTorch(NormalizeObservation(RecordEpisodeStatistics(env)))
    obs, _ = env.reset(seed=0)
    lengths = []
    for _ in range(500):
        action = torch.sign(obs[:, 1:2] + 0.5 * obs[:, 3:4])  # obs = [x, theta, x_dot, theta_dot]: push the cart under the pole
        obs, reward, terminated, truncated, info = env.step(action)
        if "episode" in info:
            lengths += info["episode"]["l"][info["_episode"]].tolist()
    print(f"{len(lengths)} episodes ended; mean length {np.mean(lengths):.0f} steps (500 = balanced to the time limit)")
    env.close()


if __name__ == "__main__":
    main()
