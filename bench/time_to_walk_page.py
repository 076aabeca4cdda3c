#!/usr/bin/env python3
"""Writes docs/time_to_walk.md: how long examples/train_ppo.py takes to teach Unitree Go2 (from its
MJCF, flat ground) to walk at commanded speeds, on this machine, with three seeds.

    .venv/bin/python bench/time_to_walk_page.py                        # trains 3 seeds, then writes the page
    .venv/bin/python bench/time_to_walk_page.py --json build/time_to_walk.json   # from saved runs

Each seed runs `train_ppo.py --task Go2Walk --minutes M` (the wall clock counts from the first
rollout, after the environments are made; no iteration starts that would end past M minutes),
then train_ppo.py's evaluation of the trained policy's mean action: one whole 20 s episode of 32
fresh environments at each commanded speed 0.5, 0.6, ..., 1.0 m/s. A seed walks when at least
95 % of those environments stay upright and every speed's upright environments hold their mean
forward speed (after the first second) within 0.1 m/s of the command on average. The first
seed's policy also draws docs/go2_walk.gif (MuJoCo's renderer, commanded 0.8 m/s). The learning
curves (the rollouts' mean |v_x - v_cmd| against the wall clock) go to docs/go2_time_to_walk.png.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

from benchmarks_page import cpu_model, table  # bench/, next to this script

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DOCS = os.path.join(ROOT, "docs")
UPRIGHT, TOLERANCE = 0.95, 0.1  # the bar: >= 95 % upright, speeds within 0.1 m/s


def train(seed, minutes, video):
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "summary.json")
        command = [sys.executable, os.path.join(ROOT, "examples", "train_ppo.py"), "--task", "Go2Walk", "--minutes", str(minutes),
                   "--seed", str(seed), "--plot", "", "--picture", "", "--summary", summary]
        if video:
            command += ["--video", video]
        print("running:", " ".join(command), file=sys.stderr)
        subprocess.run(command, check=True, stdout=sys.stderr)
        return json.load(open(summary))


def walks(tracking):
    return tracking["upright"] >= UPRIGHT and tracking["largest_mean_error"] <= TOLERANCE


def first_below(run, error):
    """The wall clock (s) and env-steps of the first iteration whose rollouts' mean |v_x - v_cmd| is
    below `error`, or None."""
    return next(((i["wall_seconds"], i["env_steps"]) for i in run["iterations"] if i["speed_error"] < error), None)


def seed_row(seed, run):
    last, tracking, below = run["iterations"][-1], run["tracking"], first_below(run, TOLERANCE)
    return [seed, len(run["iterations"]), f"{run['env_steps'] / 1e6:.1f} M", f"{last['wall_seconds']:.0f}",
            f"{below[0]:.0f} s, {below[1] / 1e6:.1f} M" if below else "–", f"{last['speed_error']:.3f}",
            f"{100 * tracking['upright']:.1f} %", f"{tracking['largest_mean_error']:.3f}", f"{100 * tracking['within_0.1']:.0f} %",
            "yes" if walks(tracking) else "no"]


def speed_rows(runs):
    rows = []
    for seed, run in runs:
        for s in run["tracking"]["speeds"]:
            rows.append([seed, f"{s['command']:.1f}", f"{100 * s['upright']:.0f} %", f"{s['mean_speed']:.2f}", f"{s['mean_error']:.3f}",
                         f"{100 * s['within_0.1']:.0f} %"])
    return rows


def plot(runs, cpus, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for seed, run in runs:
        its = run["iterations"]
        ax.plot([i["wall_seconds"] for i in its], [i["speed_error"] for i in its], marker=".", label=f"seed {seed}")
    ax.axhline(TOLERANCE, color="gray", linestyle="--", label=f"{TOLERANCE} m/s")
    ax.set_xlabel("wall clock (s)")
    ax.set_ylabel("rollouts' mean |v_x - v_cmd| (m/s)")
    ax.set_title(f"PPO on batchdyn Go2Walk, {runs[0][1]['environments']} environments, {cpus} CPU cores")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--json", help="saved runs (this script's build/time_to_walk.json) instead of training")
    args = parser.parse_args()
    if args.json:
        saved = json.load(open(args.json))
    else:
        runs = [[seed, train(seed, args.minutes, os.path.join(DOCS, "go2_walk.gif") if k == 0 else "")] for k, seed in enumerate(args.seeds)]
        saved = {"minutes": args.minutes, "torch": torch.__version__, "cpus": os.cpu_count(), "host": cpu_model(), "runs": runs}
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        json.dump(saved, open(os.path.join(ROOT, "build", "time_to_walk.json"), "w"))
    runs = saved["runs"]
    plot(runs, saved["cpus"], os.path.join(DOCS, "go2_time_to_walk.png"))
    walked = sum(walks(run["tracking"]) for _, run in runs)
    first = runs[0][1]
    page = [
        "# Time to walk",
        "",
        "Generated by `bench/time_to_walk_page.py` from runs of `examples/train_ppo.py --task Go2Walk` made one after the other "
        "on one machine; do not edit by hand.",
        "",
        f"- host: {saved['host']}, {saved['cpus']} cores; torch {saved['torch']} (CPU); the simulation on all cores, float32",
        f"- task: `Go2Walk` (Unitree Go2 from its MJCF, flat ground; [python.md](python.md)), "
        f"{first['environments']} environments; PPO as `train_ppo.py` sets it for the task",
        f"- budget: {saved['minutes']:g} minutes of wall clock from the first rollout (`--minutes {saved['minutes']:g}`: no "
        "iteration starts that would end past it)",
        "- evaluation: the trained policy's mean action through one 20 s episode of 32 fresh environments at each commanded "
        "speed 0.5, 0.6, ..., 1.0 m/s; each environment's mean forward speed after its first second",
        f"- a seed walks when ≥ {100 * UPRIGHT:.0f} % of the environments stay upright and at every speed the upright ones' mean "
        f"|speed − command| is ≤ {TOLERANCE} m/s",
        "- reproduce: `.venv/bin/python bench/time_to_walk_page.py` (about 3 minutes per seed)",
        "",
        f"**{walked} of {len(runs)} seeds walk** after {saved['minutes']:g} minutes:",
        "",
        table(["seed", "iterations", "env-steps", "wall (s)", f"rollouts' mean abs(v_x − v_cmd) first < {TOLERANCE} m/s at",
               "last rollout's mean abs(v_x − v_cmd) (m/s)", "upright over 20 s",
               "largest mean abs(speed − command) (m/s)", "environments within 0.1 m/s", "walks"],
              [seed_row(seed, run) for seed, run in runs]),
        "",
        "![learning curves](go2_time_to_walk.png)",
        "",
        "The rollouts' speed error against the wall clock. Its spikes are the 20 s episode limit: the environments start "
        "together, so most of their episodes end in the same step and restart from rest.",
        "",
        "Per commanded speed (m/s):",
        "",
        table(["seed", "command", "upright", "mean speed", "mean abs(speed − command)", "within 0.1 m/s"], speed_rows(runs)),
        "",
        "The first seed's policy commanded 0.8 m/s (`--video`, drawn by MuJoCo from the same MJCF):",
        "",
        "![Go2 walking](go2_walk.gif)",
        "",
    ]
    out = os.path.join(DOCS, "time_to_walk.md")
    open(out, "w").write("\n".join(page))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
