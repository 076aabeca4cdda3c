#!/usr/bin/env python3
"""rsl_rl's PPO (OnPolicyRunner, as legged_gym and Isaac Lab use it) on batchdyn's quadruped.

    .venv/bin/python examples/train_rsl_rl.py [--envs 4096] [--iterations 300] [--log-dir runs/quadruped]

RslRlVecEnv is an rsl_rl VecEnv; the runner takes it as it is. The settings are those of
legged_gym's flat-terrain A1 (128-128 ELU networks here, as examples/train_ppo.py's quadruped).
With --log-dir the runner writes TensorBoard logs and checkpoints there; the last lines compare
the mean reward per step of the first and last iterations.
"""
import argparse
import time

import numpy as np
import torch
from rsl_rl.runners import OnPolicyRunner

from batchdyn import vector_env

TRAIN_CFG = {
    "num_steps_per_env": 24,
    "save_interval": 50,
    "obs_groups": {"actor": ["policy"], "critic": ["policy"]},  # RslRlVecEnv's one group
    "algorithm": {"class_name": "PPO", "num_learning_epochs": 5, "num_mini_batches": 4, "learning_rate": 1e-3,
                  "schedule": "adaptive", "desired_kl": 0.01, "entropy_coef": 0.01, "gamma": 0.99, "lam": 0.95},
    "actor": {"class_name": "MLPModel", "hidden_dims": [128, 128], "activation": "elu", "obs_normalization": True,
              "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 0.5}},
    "critic": {"class_name": "MLPModel", "hidden_dims": [128, 128], "activation": "elu", "obs_normalization": True},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=4096)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--log-dir", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    env = vector_env.RslRlVecEnv(vector_env.make("Quadruped", num_envs=args.envs))
    runner = OnPolicyRunner(env, TRAIN_CFG, log_dir=args.log_dir)
    rewards, step = [], env.step

    def recording_step(actions):  # the mean reward of every step the runner takes
        out = step(actions)
        rewards.append(float(out[1].mean()))
        return out

    env.step = recording_step
    start = time.perf_counter()
    runner.learn(args.iterations)
    seconds = time.perf_counter() - start
    per_iteration = np.array(rewards).reshape(args.iterations, TRAIN_CFG["num_steps_per_env"]).mean(axis=1)
    steps = args.iterations * TRAIN_CFG["num_steps_per_env"] * args.envs
    print(f"{steps} env-steps in {seconds:.0f} s ({steps / seconds / 1e6:.3f} M env-steps/s, whole loop); mean reward "
          f"per step: {per_iteration[:5].mean():.4f} in the first 5 iterations, {per_iteration[-5:].mean():.4f} in the last 5")


if __name__ == "__main__":
    main()
