#!/usr/bin/env python3
"""What the vector environments cost on top of the physics: per task, the time of env.step()
(actions in, observations, rewards, autoreset, infos out) split into the time inside Batch.step
(env.physics_seconds) and the rest, the wrapper's. Best of several rounds, with copy=True
(Gymnasium's default: observations returned as a copy) and copy=False (the env's own buffer).
Measuring inside one env.step, not against a separate Batch.step loop, keeps the states (and so
the contact solver's work) the same for both parts.

    .venv/bin/python bench/vector_env_overhead.py [--threads 1] [--steps 100]
        [--actions random|zero]

--actions zero with --steps 30 measures the steady state without episode ends (each round
starts from reset(seed=0); the poles take about 50 steps to fall); random actions end
CartPole's episodes after about 26 steps (about 155 of 4096 environments end per step).
"""
import argparse
import time

import numpy as np

from batchdyn import vector_env

parser = argparse.ArgumentParser()
parser.add_argument("--tasks", default="CartPole:4096,ArmReach:2048,Quadruped:4096")
parser.add_argument("--steps", type=int, default=100)
parser.add_argument("--rounds", type=int, default=5)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--actions", choices=("random", "zero"), default="random")
args = parser.parse_args()

print(f"best of {args.rounds} rounds x {args.steps} steps from reset(seed=0), {args.actions} actions, threads={args.threads}; "
      "overhead = wrapper / Batch.step")
print(f"{'task':<10} {'envs':>5} {'copy':>5} {'Batch.step':>12} {'wrapper':>10} {'overhead':>9} {'ends/step':>10}")
for entry in args.tasks.split(","):
    name, envs = entry.split(":")
    env = vector_env.make(name, num_envs=int(envs), threads=args.threads)
    # a fresh random action per step, drawn beforehand (a policy's exploration, not the RNG's cost)
    actions = np.random.default_rng(0).uniform(-1, 1, size=(args.steps, env.num_envs, env.act_dim)).astype(np.float32)
    if args.actions == "zero":
        actions[:] = 0.0
    for copy in (True, False):
        env.copy = copy
        best = None
        for _ in range(args.rounds):
            env.reset(seed=0)
            physics, start = env.physics_seconds, time.perf_counter()
            ends = 0
            for k in range(args.steps):
                _, _, terminated, truncated, _ = env.step(actions[k])
                ends += int(terminated.sum() + truncated.sum())
            total, physics = time.perf_counter() - start, env.physics_seconds - physics
            if best is None or total - physics < best[1]:
                best = (physics / args.steps * 1e6, (total - physics) / args.steps * 1e6, ends / args.steps)
        print(f"{name:<10} {env.num_envs:>5} {str(copy):>5} {best[0]:>10.1f}us {best[1]:>8.1f}us {100 * best[1] / best[0]:>8.1f}% "
              f"{best[2]:>10.1f}")
    env.close()
