#!/usr/bin/env python3
"""Stable-Baselines3's PPO on batchdyn's cart-pole: 64 environments in one SB3 VecEnv.

    .venv/bin/python examples/train_sb3.py [--steps 300000]

SB3VecEnv is an SB3 VecEnv, so PPO takes it as it is; the episodes' statistics reach SB3's
logger (rollout/ep_len_mean) through the per-environment infos. Balanced is 500 steps.
"""
import argparse
import time

import numpy as np
import torch
from stable_baselines3 import PPO

from batchdyn import vector_env


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300_000)
    args = parser.parse_args()
    torch.set_num_threads(1)  # small networks: one thread is fastest and leaves the others to the simulation
    venv = vector_env.SB3VecEnv(vector_env.make("CartPole", num_envs=64))
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=512, n_epochs=4, learning_rate=1e-3, seed=0,
                policy_kwargs=dict(net_arch=[32, 32]), verbose=1)
    start = time.perf_counter()
    model.learn(args.steps)
    lengths = [e["l"] for e in model.ep_info_buffer]
    print(f"{args.steps} steps in {time.perf_counter() - start:.1f} s; mean length of the last "
          f"{len(lengths)} episodes: {np.mean(lengths):.0f} of 500")
    venv.close()


if __name__ == "__main__":
    main()
