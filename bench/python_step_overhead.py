#!/usr/bin/env python3
"""Python call overhead of Batch.step: env-steps/s of `calls` batch.step() calls from a Python
loop against the same number of steps in a C++ loop (Batch.time_steps_in_cpp), alternating in
one process, on the same Batch and state.

    .venv/bin/python bench/python_step_overhead.py [--envs 4096] [--dtype float32]
"""
import argparse
import os
import time

import numpy as np

import batchdyn

parser = argparse.ArgumentParser()
parser.add_argument("--model", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "humanoid.urdf"))
parser.add_argument("--envs", type=int, default=4096)
parser.add_argument("--dtype", default="float32")
parser.add_argument("--calls", type=int, default=200)
parser.add_argument("--rounds", type=int, default=5)
parser.add_argument("--threads", type=int, default=0)
args = parser.parse_args()

model = batchdyn.load(args.model, root="free")
batch = batchdyn.Batch(model, args.envs, dtype=np.dtype(args.dtype), threads=args.threads)
batch.reset(seed=0, noise=0.1)
batch.step(1e-4)
python_times, cpp_times = [], []
for _ in range(args.rounds):
    start = time.perf_counter()
    for _ in range(args.calls):
        batch.step(1e-4)
    python_times.append(time.perf_counter() - start)
    cpp_times.append(batch.time_steps_in_cpp(1e-4, 1, args.calls))
steps = args.calls * args.envs
py_rate, cpp_rate = steps / min(python_times), steps / min(cpp_times)
print(f"{model.name}, {args.envs} envs, {args.dtype}, {batch.threads} threads, best of {args.rounds} x {args.calls} steps:")
print(f"  C++ loop:    {cpp_rate / 1e6:7.3f} M env-steps/s")
print(f"  Python loop: {py_rate / 1e6:7.3f} M env-steps/s = {100 * py_rate / cpp_rate:.1f} % of C++")
