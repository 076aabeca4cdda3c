#!/usr/bin/env python3
"""PPO (Schulman et al. 2017) in PyTorch on batchdyn's vectorised environments.

    .venv/bin/python examples/train_ppo.py                 # CartPole (.venv: ./build.sh demo)
    .venv/bin/python examples/train_ppo.py --task ArmReach
    .venv/bin/python examples/train_ppo.py --task Quadruped --minutes 10
    .venv/bin/python examples/train_ppo.py --task QuadrupedHills
    .venv/bin/python examples/train_ppo.py --task Go2Walk --minutes 2
    .venv/bin/python examples/train_ppo.py --task H1Walk --minutes 30

Thousands of environments step in C++ (SIMD lanes x threads, GIL released); observations
reach the networks through torch.from_numpy (no copy). One line per iteration: env-steps/s of
the simulation alone and of the whole loop, the mean return and length of the episodes that
finished. Stops when the mean episode length reaches --target of the limit (cart-pole: 95 % of
500 steps = balanced), after --iterations or within --minutes, and writes the learning curve
(--plot). A walking task (Quadruped, Go2Walk, H1Walk: a robot walking at a commanded forward
speed) then walks with the mean action at --eval-speed for 5 s in 64 fresh environments:
distance, speed and falls are printed and --picture draws the base's path and the feet's
contacts over time; then one whole episode at each commanded speed 0.5, 0.6, ..., 1.0 m/s
measures how well the policy tracks them (evaluate_tracking). A task with a scripted
baseline (ArmReach) is then played by the trained policy's mean action and by the baseline on
the same 256 fresh episodes, and the mean returns compared. --task takes any registered task
(batchdyn.vector_env.registered()), PPO's settings come from the task's `training` dict.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn

from batchdyn import vector_env  # pip install . (or PYTHONPATH=<cmake build>/python)
from distributed import Distributed  # examples/distributed.py, next to this script


# PPO's settings; a task's `training` dict (vector_env/*.py) overrides them, the command line
# overrides both.
DEFAULT_TRAINING = dict(envs=2048, steps=16, iterations=150, hidden=(32, 32), activation="tanh", lr=1e-3, epochs=4,
                        minibatches=16, reward_scale=0.1, log_std=-1.0, entropy=0.0, desired_kl=None, solved_length=None)
ACTIVATIONS = {"tanh": nn.Tanh, "elu": nn.ELU, "relu": nn.ReLU}


def task_settings(name):
    """The registered task's name and PPO settings: DEFAULT_TRAINING updated by its `training`."""
    name = vector_env.registry.lookup(name)
    entry_point, _ = vector_env.registry.entry_point(name)
    return name, {**DEFAULT_TRAINING, **getattr(entry_point, "training", {})}


def walks(name):
    """Whether the registered task is a walking task (Quadruped, QuadrupedHills, Go2Walk, H1Walk)."""
    entry_point, _ = vector_env.registry.entry_point(name)
    return isinstance(entry_point, type) and issubclass(entry_point, vector_env.LeggedTask)


def on_terrain(name):
    """Whether the registered task takes terrain_roughness (the quadruped tasks)."""
    entry_point, _ = vector_env.registry.entry_point(name)
    return isinstance(entry_point, type) and issubclass(entry_point, vector_env.Quadruped)


class ActorCritic(nn.Module):
    """Gaussian policy (state-independent log std) and value function, two MLPs."""

    def __init__(self, obs_dim, act_dim, hidden=(32, 32), activation=nn.Tanh, log_std=-1.0):
        super().__init__()

        def mlp(out):
            layers, width = [], obs_dim
            for h in hidden:
                layers += [nn.Linear(width, h), activation()]
                width = h
            return nn.Sequential(*layers, nn.Linear(width, out))

        self.actor, self.critic = mlp(act_dim), mlp(1)
        self.log_std = nn.Parameter(torch.full((act_dim,), float(log_std)))
        with torch.no_grad():
            self.actor[-1].weight.mul_(0.01)

    # float32 out of the networks whatever their matrix products ran in (--autocast): the
    # log-probabilities, ratios and losses are computed in float32.
    def distribution(self, obs):
        return torch.distributions.Normal(self.actor(obs).float(), self.log_std.exp())

    def value(self, obs):
        return self.critic(obs).squeeze(-1).float()


class RunningNorm:
    """Observation normalisation with running mean and variance (Welford, batched); with several
    ranks, over the observations of all of them."""

    def __init__(self, dim, group):
        self.mean, self.var, self.count, self.group = torch.zeros(dim), torch.ones(dim), 1e-4, group

    def update(self, x):
        dim = x.shape[1]
        sums = self.group.sum(torch.cat([x.sum(0), (x.double() ** 2).sum(0).float(), torch.tensor([float(x.shape[0])])]))
        n = sums[-1].item()
        batch_mean = (sums[:dim] / n).float()
        batch_var = (sums[dim:2 * dim] / n).float() - batch_mean ** 2
        delta, total = batch_mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + batch_var * n + delta ** 2 * self.count * n / total) / total
        self.count = total

    def __call__(self, x):
        return ((x - self.mean) / torch.sqrt(self.var + 1e-8)).clamp(-10, 10)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="CartPole",
                        help="a registered task (case-insensitive): " + ", ".join(vector_env.registered()))
    parser.add_argument("--envs", type=int, help="default: the task's (4096 for the quadruped, else 2048)")
    parser.add_argument("--steps", type=int, help="rollout length per iteration (default: the task's)")
    parser.add_argument("--iterations", type=int, help="at most (default: the task's)")
    parser.add_argument("--hidden", type=int, nargs="+", help="the actor's and the critic's hidden layer widths (default: the task's)")
    parser.add_argument("--epochs", type=int, help="PPO epochs over each rollout (default: the task's)")
    parser.add_argument("--minibatches", type=int, help="minibatches per epoch (default: the task's)")
    parser.add_argument("--minutes", type=float, default=0.0,
                        help="a wall-clock budget for the training (0: none): no iteration starts that would end past it, "
                             "at the pace of the last one")
    parser.add_argument("--target", type=float, default=0.95, help="stop at this fraction of the episode limit")
    parser.add_argument("--threads", type=int, default=0, help="simulation threads (0 = all cores)")
    parser.add_argument("--update-threads", type=int, default=0,
                        help="torch threads of the PPO update (0: the process's share of the cores); the rollout uses 1")
    parser.add_argument("--adam", choices=("fused", "plain"), default="fused", help="torch.optim.Adam's implementation")
    parser.add_argument("--autocast", choices=("off", "bf16"), default="off",
                        help="bf16: the networks' matrix products in bfloat16 (torch.autocast), in the rollout and the update "
                             "alike; parameters, optimiser, log-probabilities and losses stay float32. For CPUs with native "
                             "bfloat16 (AVX512-BF16, AMX)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, help="initial learning rate (default: the task's)")
    parser.add_argument("--plot", default="ppo_learning_curve.png")
    parser.add_argument("--picture", default="quadruped_walk.png", help="a walking task: the evaluation's picture")
    parser.add_argument("--video", default="",
                        help="a walking robot from an MJCF (Go2Walk, H1Walk): a GIF of the evaluation's environment 0, drawn by MuJoCo")
    parser.add_argument("--page", default="",
                        help="a walking robot from an MJCF (Go2Walk, H1Walk): the evaluation's first 16 environments as a web page "
                             "(batchdyn.viewer.write_html: time slider, contact forces)")
    parser.add_argument("--eval-speed", type=float, default=0.8, help="a walking task: commanded speed of the evaluation")
    parser.add_argument("--roughness", type=float, default=0.0,
                        help="quadruped: rolling hills of +-this many m instead of flat ground (a height field)")
    parser.add_argument("--distributed", action="store_true",
                        help="one of several processes launched by torchrun (examples/distributed.py): --envs is the "
                             "total, split between the ranks; threads default to the machine's cores / its processes")
    parser.add_argument("--summary", default="",
                        help="write the run as JSON to this file: per iteration its env-steps, rates, returns and lengths; "
                             "the evaluation's results")
    parser.add_argument("--save-parameters", default="",
                        help="write the final parameters to this path (+ .rank<r> when distributed)")
    args = parser.parse_args()
    try:
        args.task, task = task_settings(args.task)
    except KeyError as e:
        parser.error(str(e))
    for key in ("envs", "steps", "iterations", "lr", "hidden", "epochs", "minibatches"):
        if getattr(args, key) is None:
            setattr(args, key, task[key])

    group = Distributed(args.distributed)
    if args.envs % group.world:
        parser.error(f"--envs {args.envs} does not split evenly between {group.world} processes")
    if group.enabled and args.threads == 0:
        args.threads = max(1, (os.cpu_count() or 1) // group.local_world)
    log = print if group.is_main else (lambda *a, **k: None)  # rank 0 logs and writes the pictures
    torch.manual_seed(args.seed)
    # The rollout's inference: one thread, faster than two fighting the simulation's threads
    # for 2 cores (measured, also for the quadruped's 128-128 networks). The update runs while
    # the simulation is idle: it gets the process's share of the cores (--update-threads).
    torch.set_num_threads(1)
    update_threads = args.update_threads or max(1, (os.cpu_count() or 1) // group.local_world)
    options = {}
    if args.roughness:
        if not on_terrain(args.task):
            parser.error("--roughness is for the quadruped tasks")
        options["terrain_roughness"] = args.roughness
    # copy=False: the observations are the env's own buffer, read before the next step
    env = vector_env.make(args.task, num_envs=args.envs // group.world, threads=args.threads, copy=False, **options)
    n, obs_dim, act_dim, T = env.num_envs, env.obs_dim, env.act_dim, args.steps
    model = ActorCritic(obs_dim, act_dim, tuple(args.hidden), ACTIVATIONS[task["activation"]], task["log_std"])
    group.broadcast_parameters(model)
    torch.manual_seed(args.seed + 7919 * group.rank)  # each rank its own exploration noise and minibatches
    # fused: one kernel for all parameters' Adam step (torch 2's CPU fused Adam)
    optimiser = torch.optim.Adam(model.parameters(), lr=args.lr, fused=args.adam == "fused")
    # The same autocast in the rollout and the update: the rollout's log-probabilities come from the
    # same bfloat16 products as the update's, not from float32 ones that would start each ratio off 1.
    precision = lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.autocast == "bf16")  # noqa: E731
    norm = RunningNorm(obs_dim, group)
    reward_scale = task["reward_scale"]  # cart-pole: values of order 10, not 100, an easier regression for the critic
    gamma, lam, clip, epochs, minibatches = 0.99, 0.95, 0.2, args.epochs, args.minibatches
    entropy_coefficient, desired_kl, lr = task["entropy"], task["desired_kl"], args.lr

    obs_buf = torch.zeros(T, n, obs_dim)
    act_buf = torch.zeros(T, n, act_dim)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros(T, n) for _ in range(4))
    # environment i of rank r is environment r n + i of a single process: the same seed
    obs_np, _ = env.reset(seed=[args.seed + group.rank * n + i for i in range(n)])
    obs = torch.from_numpy(obs_np)  # shares the array env.reset returned
    history = []  # (env steps, mean return, mean length, wall time)
    summary = {"task": args.task, "iterations": []}  # --summary
    start, total_steps, limit = time.perf_counter(), 0, env.max_episode_steps
    log(f"PPO on {args.task}: {n * group.world} environments"
        + (f" ({group.world} processes x {n})" if group.enabled else "")
        + f" x {T} steps per iteration, threads={env.batch.threads}, "
        f"episode limit {limit} steps; target mean length {args.target * limit:.0f}")
    solved_at = None
    for iteration in range(1, args.iterations + 1):
        iteration_start, sim_time, policy_time = time.perf_counter(), 0.0, 0.0
        returns, lengths, tracking = [], [], []
        with torch.no_grad(), precision():
            for t in range(T):
                policy_start = time.perf_counter()
                norm.update(obs)
                x = norm(obs)
                dist = model.distribution(x)
                action = dist.sample()
                obs_buf[t], act_buf[t] = x, action
                logp_buf[t], val_buf[t] = dist.log_prob(action).sum(-1), model.value(x)
                sim_start = time.perf_counter()
                policy_time += sim_start - policy_start
                obs_np, reward, terminated, truncated, info = env.step(action.numpy())
                sim_time += time.perf_counter() - sim_start
                reward = torch.from_numpy(reward).double()
                if truncated.any():  # bootstrap the cut-off episodes from their last observation
                    final = norm(torch.from_numpy(np.stack(info["final_obs"][truncated])))
                    reward[torch.from_numpy(truncated)] += gamma * model.value(final).double() / reward_scale
                rew_buf[t] = reward.float() * reward_scale
                done_buf[t] = torch.from_numpy(terminated | truncated).float()
                if env.episodes_ended.any():  # the episodes that ended in this step
                    returns += list(env.episode_statistics["r"][env.episodes_ended])
                    lengths += list(env.episode_statistics["l"][env.episodes_ended])
                if "forward_velocity" in info:
                    going = info["_forward_velocity"]  # not the environments that were just reset
                    tracking.append((info["forward_velocity"][going], info["command"][going], info["contact_iterations"].mean()))
                obs = torch.from_numpy(obs_np)
            next_value = model.value(norm(obs))
            advantages = torch.zeros(T, n)
            gae = torch.zeros(n)
            for t in reversed(range(T)):  # GAE(lambda)
                following = next_value if t == T - 1 else val_buf[t + 1]
                nonterminal = 1.0 - done_buf[t]
                delta = rew_buf[t] + gamma * following * nonterminal - val_buf[t]
                gae = delta + gamma * lam * nonterminal * gae
                advantages[t] = gae
            targets = advantages + val_buf

        flat = lambda x: x.reshape(T * n, *x.shape[2:])  # noqa: E731
        b_obs, b_act, b_logp, b_adv, b_ret = map(flat, (obs_buf, act_buf, logp_buf, advantages, targets))
        if desired_kl:
            with torch.no_grad(), precision():  # the rollout policy's means and std, for the KL of each update
                b_mean, b_std = model.actor(b_obs).float(), model.log_std.exp()
        moments = group.sum(torch.stack([b_adv.sum(), (b_adv.double() ** 2).sum(), torch.tensor(float(b_adv.numel()))]))
        adv_mean = moments[0] / moments[2]
        adv_std = torch.sqrt((moments[1] - moments[2] * adv_mean ** 2) / (moments[2] - 1))
        b_adv = (b_adv - adv_mean.float()) / (adv_std.float() + 1e-8)
        size = T * n // minibatches
        update_start = time.perf_counter()
        torch.set_num_threads(update_threads)  # the simulation is idle while the networks learn
        for _ in range(epochs):
            order = torch.randperm(T * n)
            for k in range(minibatches):
                idx = order[k * size:(k + 1) * size]
                with precision():
                    dist = model.distribution(b_obs[idx])
                    values = model.value(b_obs[idx])
                if desired_kl:  # rsl_rl's adaptive step: keep the policy's change near desired_kl
                    with torch.no_grad():
                        old_mean = b_mean[idx]
                        old_std = b_std
                        kl = (torch.log(dist.stddev / old_std) + (old_std ** 2 + (old_mean - dist.mean) ** 2)
                              / (2 * dist.stddev ** 2) - 0.5).sum(-1).mean()
                        kl = (group.sum(kl) / group.world).item()  # the same step size on every rank
                    lr = max(1e-5, lr / 1.5) if kl > 2 * desired_kl else min(1e-2, lr * 1.5) if kl < desired_kl / 2 else lr
                    for param_group in optimiser.param_groups:
                        param_group["lr"] = lr
                ratio = (dist.log_prob(b_act[idx]).sum(-1) - b_logp[idx]).exp()
                policy_loss = -torch.min(ratio * b_adv[idx], ratio.clamp(1 - clip, 1 + clip) * b_adv[idx]).mean()
                value_loss = 0.5 * (values - b_ret[idx]).pow(2).mean()
                loss = policy_loss + 0.5 * value_loss - entropy_coefficient * dist.entropy().sum(-1).mean()
                optimiser.zero_grad()
                loss.backward()
                group.average_gradients(model.parameters())
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimiser.step()
        torch.set_num_threads(1)  # the rollout's small batches of inference: one thread, the others simulate
        update_time = time.perf_counter() - update_start
        iteration_time = time.perf_counter() - iteration_start

        wall = time.perf_counter() - start
        speed_error = admm_iterations = 0.0
        if tracking:  # mean |v_x - v_cmd| and ADMM iterations over the rollout (a walking task)
            speed_error = float(np.mean([np.abs(v - c).mean() for v, c, _ in tracking]))
            admm_iterations = float(np.mean([k for _, _, k in tracking]))
        # one all-reduce: the episodes of every rank, the rates, and rank 0's clock for --minutes
        totals = group.sum(torch.tensor([float(np.sum(returns)), float(np.sum(lengths)), float(len(lengths)), T * n / sim_time,
                                         T * n / (time.perf_counter() - iteration_start), speed_error, admm_iterations,
                                         wall if group.is_main else 0.0, float(T * n),
                                         iteration_time if group.is_main else 0.0]))
        episodes = int(totals[2])
        mean_return = float(totals[0] / episodes) if episodes else float("nan")
        mean_length = float(totals[1] / episodes) if episodes else float("nan")
        sim_rate, loop_rate = float(totals[3]), float(totals[4])
        speed_error, admm_iterations = float(totals[5]) / group.world, float(totals[6]) / group.world
        wall, total_steps, pace = float(totals[7]), total_steps + int(totals[8]), float(totals[9])  # rank 0's clock for all
        if not tracking:
            speed_error = admm_iterations = float("nan")
        history.append((total_steps, mean_return, mean_length, wall, speed_error))
        summary["iterations"].append({"iteration": iteration, "env_steps": total_steps, "simulation_env_steps_per_s": sim_rate,
                                      "seconds": {"simulation": sim_time, "policy": policy_time, "update": update_time,
                                                  "other": iteration_time - sim_time - policy_time - update_time},
                                      "loop_env_steps_per_s": loop_rate, "wall_seconds": wall, "episodes": episodes, "mean_return": mean_return,
                                      "mean_length": mean_length, "speed_error": speed_error, "admm_iterations": admm_iterations})
        log(f"iter {iteration:4d}  steps {total_steps:9d}  sim {sim_rate / 1e6:6.2f} M env-steps/s  "
              f"loop {loop_rate / 1e6:5.2f} M env-steps/s  episodes {episodes:5d}  "
              f"mean return {mean_return:8.2f}  mean length {mean_length:6.1f}"
              + (f"  |v_x - v_cmd| {speed_error:5.3f} m/s  ADMM {admm_iterations:4.1f} it" if tracking else "")
              + f"  wall {wall:6.1f} s", flush=True)
        if args.minutes and wall + pace > 60 * args.minutes:  # the next iteration would end past the budget
            break
        if task["solved_length"] and episodes >= 50 and mean_length >= args.target * limit:
            solved_at = (iteration, total_steps, wall)
            break

    if args.save_parameters:
        path = args.save_parameters + (f".rank{group.rank}" if group.enabled else "")
        torch.save({name: p.detach().clone() for name, p in model.state_dict().items()}, path)
    log(f"env-steps: {total_steps} over {group.world} process{'es' if group.world > 1 else ''}")
    summary.update(env_steps=total_steps, processes=group.world, environments=n * group.world)
    group.close()
    if not group.is_main:
        return 0
    summary["solved"] = {"iteration": solved_at[0], "env_steps": solved_at[1], "seconds": solved_at[2]} if solved_at else None
    if solved_at:
        print(f"balanced: mean episode length {history[-1][2]:.1f} >= {args.target * limit:.0f} after "
              f"{solved_at[0]} iterations, {solved_at[1]} env-steps, {solved_at[2]:.1f} s")
    elif task["solved_length"]:
        print("not balanced within the iteration limit")
    scripted_return = compare_with_scripted(model, norm, args, summary) if hasattr(env, "scripted_actions") else None
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        steps, rets, lens, _, errors = map(np.array, zip(*history))
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(steps / 1e6, lens if task["solved_length"] else rets, marker=".")
        if walks(args.task):
            twin = ax.twinx()
            twin.plot(steps / 1e6, errors, color="tab:orange", marker=".")
            twin.set_ylabel("mean |v_x - v_cmd| (m/s)", color="tab:orange")
        if task["solved_length"]:
            ax.axhline(args.target * limit, color="gray", linestyle="--", label=f"target {args.target * limit:.0f}")
            ax.set_ylabel("mean episode length (steps)")
            ax.legend()
        else:
            ax.set_ylabel("mean episode return")
        if scripted_return is not None:
            ax.axhline(scripted_return, color="gray", linestyle="--", label=f"scripted baseline {scripted_return:.1f}")
            ax.legend()
        ax.set_xlabel("environment steps (millions)")
        ax.set_title(f"PPO on batchdyn {args.task}, {n * group.world} environments")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    if walks(args.task):
        summary["evaluation"] = evaluate_walk(model, norm, args)
        summary["tracking"] = evaluate_tracking(model, norm, args)
    if args.summary:
        with open(args.summary, "w") as out:
            json.dump(summary, out, indent=1)
    return 0


def compare_with_scripted(model, norm, args, summary, envs=256):
    """The trained policy (its mean action) and the task's scripted baseline, each for one episode
    of `envs` fresh environments with the same seeds: mean return, and the final distance where
    the task reports one; returns the baseline's mean return."""
    results = {}
    for name in ("PPO", "scripted"):
        env = vector_env.make(args.task, num_envs=envs, threads=args.threads)
        obs, _ = env.reset(seed=args.seed + 54321)
        total, final = np.zeros(envs), None
        with torch.no_grad():
            for _ in range(env.max_episode_steps):
                action = env.scripted_actions() if name == "scripted" else model.actor(norm(torch.from_numpy(obs))).numpy()
                obs, reward, _, _, info = env.step(action)
                total += reward
                if "final_info" in info and "distance" in info["final_info"]:
                    final = info["final_info"]["distance"][info["_final_info"]]
        results[name] = (total.mean(), final.mean() if final is not None else float("nan"))
        env.close()
    (ppo, ppo_distance), (scripted, scripted_distance) = results["PPO"], results["scripted"]
    print(f"evaluation against the scripted baseline, {envs} environments, one episode: mean return PPO {ppo:.2f}, "
          f"scripted {scripted:.2f} ({'PPO better' if ppo > scripted else 'scripted better'}); final distance "
          f"PPO {ppo_distance:.3f} m, scripted {scripted_distance:.3f} m")
    summary["scripted_comparison"] = {"environments": envs, "ppo_return": float(ppo), "scripted_return": float(scripted),
                                      "ppo_distance": float(ppo_distance), "scripted_distance": float(scripted_distance)}
    return scripted


def evaluate_tracking(model, norm, args, speeds=(0.5, 0.6, 0.7, 0.8, 0.9, 1.0), per_speed=32, settle=1.0):
    """The trained policy (its mean action) through one whole episode (20 s for the walking tasks)
    of per_speed fresh environments at each commanded speed: the share of them upright at the end
    (no termination), and of the upright ones their mean forward speed after the first `settle`
    seconds (the base frame's v_x, info["forward_velocity"]), |mean speed - command| and the share
    within 0.1 m/s of the command. Prints a table; returns the results as a dict."""
    options = {"terrain_roughness": args.roughness} if args.roughness else {}
    envs = per_speed * len(speeds)
    env = vector_env.make(args.task, envs, threads=args.threads, command_range=(min(speeds), max(speeds)), **options)
    obs, _ = env.reset(seed=args.seed + 23456)
    commanded = np.repeat(np.asarray(speeds, dtype=np.float64), per_speed)
    env.command[:] = commanded  # a grid of commands instead of the reset's draws
    env.observe(obs)  # the first observation with those commands
    steps, skip = env.max_episode_steps - 1, int(round(settle / env.dt))  # the last step would truncate and reset
    fallen, speed_sum = np.zeros(envs, dtype=bool), np.zeros(envs)
    with torch.no_grad():
        for t in range(steps):
            obs, _, terminated, _, info = env.step(model.actor(norm(torch.from_numpy(obs))).numpy())
            fallen |= terminated
            if t >= skip:
                speed_sum += info["forward_velocity"]
    env.close()
    mean_speed = speed_sum / (steps - skip)
    error = np.abs(mean_speed - commanded)
    rows, results = [], {"seconds": steps * env.dt, "settle_seconds": settle, "environments_per_speed": per_speed, "speeds": []}
    for k, speed in enumerate(speeds):
        mine = slice(k * per_speed, (k + 1) * per_speed)
        upright = ~fallen[mine]
        row = {"command": float(speed), "upright": float(upright.mean()),
               "mean_speed": float(mean_speed[mine][upright].mean()) if upright.any() else float("nan"),
               "mean_error": float(error[mine][upright].mean()) if upright.any() else float("nan"),
               "within_0.1": float((error[mine][upright] <= 0.1).sum() / per_speed)}
        results["speeds"].append(row)
        rows.append(f"  {speed:4.2f} m/s: {100 * row['upright']:5.1f} % upright, mean speed {row['mean_speed']:5.2f} m/s, "
                    f"|speed - command| {row['mean_error']:5.3f} m/s, {100 * row['within_0.1']:5.1f} % within 0.1 m/s")
    results["upright"] = float((~fallen).mean())
    results["within_0.1"] = float(np.mean([r["within_0.1"] for r in results["speeds"]]))
    results["largest_mean_error"] = float(np.nanmax([r["mean_error"] for r in results["speeds"]]))
    print(f"tracking: {per_speed} environments per command, {steps * env.dt:.2f} s each, mean speed after the first {settle:.0f} s:")
    print("\n".join(rows))
    print(f"  all: {100 * results['upright']:.1f} % upright, {100 * results['within_0.1']:.1f} % within 0.1 m/s of their command, "
          f"largest mean |speed - command| {results['largest_mean_error']:.3f} m/s")
    return results


def evaluate_walk(model, norm, args, envs=64, seconds=5.0):
    """The trained robot walks with its mean action at args.eval_speed in fresh environments:
    prints the distance, the speed and the falls; draws environment 0's base path and its feet's
    contacts over time (args.picture); returns those results as a dict."""
    options = {"terrain_roughness": args.roughness} if args.roughness else {}
    env = vector_env.make(args.task, envs, threads=args.threads, command_range=(args.eval_speed, args.eval_speed), **options)
    obs, _ = env.reset(seed=args.seed + 12345)
    start = env.batch.q[:, 0:3].astype(np.float64).copy()
    steps = int(round(seconds / env.dt))
    path, feet, fallen, iterations = [], [], np.zeros(envs, dtype=bool), []
    recorded, forces = [], []  # the first 16 environments' states and contact forces, for --page
    with torch.no_grad():
        for _ in range(steps):
            action = model.actor(norm(torch.from_numpy(obs))).numpy()
            path.append(env.batch.q[0].astype(np.float64).copy())
            if args.page:
                recorded.append(env.batch.q[:16].copy()), forces.append(env.batch.contact_forces[:16].copy())
            obs, _, terminated, _, info = env.step(action)
            feet.append(obs[0, env.feet_observed].copy())
            iterations.append(info["contact_iterations"])
            fallen |= terminated
    # environments that fell were reset: measure those that did not
    final, upright = env.batch.q[:, 0:3].astype(np.float64), ~fallen
    distance = final[upright, 0] - start[upright, 0]
    walked = (f"the others walked {distance.mean():.2f} m forward on average (min {distance.min():.2f} m), mean speed "
              f"{distance.mean() / seconds:.2f} m/s, sideways drift {np.abs(final[upright, 1] - start[upright, 1]).mean():.2f} m"
              if upright.any() else "none walked")
    print(f"evaluation: {envs} environments, commanded {args.eval_speed:.2f} m/s for {seconds:.0f} s: {int(fallen.sum())} fell; "
          f"{walked}; ADMM iterations per substep while walking: mean {np.mean(iterations):.1f}, max {np.max(iterations)}")
    path = np.array(path)  # environment 0's q before each step
    robot_file = getattr(env, "robot_file", None)
    if (args.video or args.page) and robot_file is None:
        print(f"--video, --page: {args.task} is not loaded from an MJCF: nothing drawn")
    elif args.video or args.page:
        from batchdyn import viewer

        if args.video:
            every = max(1, round(0.04 / env.dt))  # 25 frames per second of simulated time, 320 x 240: a small GIF
            print(f"wrote {viewer.record(robot_file, path[::every], args.video, fps=round(1 / (every * env.dt)), width=320, height=240)}")
        if args.page:
            print(f"wrote {viewer.write_html(robot_file, recorded, args.page, dt=env.dt, contact_forces=forces, model=env.model, title=f'{args.task}, commanded {args.eval_speed:.2f} m/s')}")
    if args.picture:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        feet = np.array(feet)
        t = np.arange(steps) * env.dt
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4.5), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
        top.plot(t, path[:, 0], label="x (forward)")
        top.plot(t, path[:, 1], label="y (sideways)")
        top.plot(t, path[:, 2], label="z (height)")
        top.plot(t, args.eval_speed * t + path[0, 0], color="gray", linestyle="--", label=f"{args.eval_speed:.1f} m/s")
        top.set_ylabel("base position (m)")
        top.legend(loc="upper left", fontsize=8)
        top.set_title(f"{args.task} walking with the trained policy (environment 0)")
        for k, name in enumerate(env.foot_names):
            down = feet[:, k] > 0.5
            bottom.fill_between(t, k - 0.4, k + 0.4, where=down, step="post", color="black", linewidth=0)
        bottom.set_yticks(range(len(env.foot_names)), env.foot_names)
        bottom.set_ylabel("foot on ground")
        bottom.set_xlabel("time (s)")
        fig.tight_layout()
        fig.savefig(args.picture, dpi=110)
        print(f"wrote {args.picture}")
    return {"environments": envs, "commanded_speed": args.eval_speed, "seconds": seconds, "fell": int(fallen.sum()),
            "mean_distance": float(distance.mean()) if upright.any() else float("nan"),
            "mean_admm_iterations": float(np.mean(iterations)), "largest_admm_iterations": int(np.max(iterations))}


if __name__ == "__main__":
    code = main()
    if "--distributed" in sys.argv:
        # A torchrun rank ends here without the interpreter's teardown: about one run in five
        # aborted in C++ static destructors after the work was done ("terminate called without an
        # active exception", no Python frame), which torchrun reports as a failed rank. Everything
        # is written and the process group destroyed by now.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 0)
    sys.exit(code)
