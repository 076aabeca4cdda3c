#!/usr/bin/python3
"""PPO (Schulman et al. 2017) in PyTorch on batchdyn's vectorised environments.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/train_ppo.py                 # cart-pole
    PYTHONPATH=build/release/python /usr/bin/python3 examples/train_ppo.py --task arm --iterations 60

Thousands of environments step in C++ (SIMD lanes x threads, GIL released); observations
reach the networks through torch.from_numpy (no copy). One line per iteration: env-steps/s of
the simulation alone and of the whole loop, the mean return and length of the episodes that
finished. Stops when the mean episode length reaches --target of the limit (cart-pole: 95 % of
500 steps = balanced) and writes the learning curve (--plot).
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
from torch import nn

try:
    from batchdyn import vector_env
except ImportError:  # not installed and no PYTHONPATH: the build tree of ./build.sh demo
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "release", "python"))
    from batchdyn import vector_env


class ActorCritic(nn.Module):
    """Gaussian policy (state-independent log std) and value function, two 32-unit tanh MLPs."""

    def __init__(self, obs_dim, act_dim, hidden=32):
        super().__init__()

        def mlp(out):
            return nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, out))

        self.actor, self.critic = mlp(act_dim), mlp(1)
        self.log_std = nn.Parameter(torch.full((act_dim,), -1.0))
        with torch.no_grad():
            self.actor[-1].weight.mul_(0.01)

    def distribution(self, obs):
        return torch.distributions.Normal(self.actor(obs), self.log_std.exp())

    def value(self, obs):
        return self.critic(obs).squeeze(-1)


class RunningNorm:
    """Observation normalisation with running mean and variance (Welford, batched)."""

    def __init__(self, dim):
        self.mean, self.var, self.count = torch.zeros(dim), torch.ones(dim), 1e-4

    def update(self, x):
        batch_mean, batch_var, n = x.mean(0), x.var(0, unbiased=False), x.shape[0]
        delta, total = batch_mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + batch_var * n + delta ** 2 * self.count * n / total) / total
        self.count = total

    def __call__(self, x):
        return ((x - self.mean) / torch.sqrt(self.var + 1e-8)).clamp(-10, 10)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=["cartpole", "arm"], default="cartpole")
    parser.add_argument("--envs", type=int, default=2048)
    parser.add_argument("--steps", type=int, default=16, help="rollout length per iteration")
    parser.add_argument("--iterations", type=int, default=150, help="at most")
    parser.add_argument("--target", type=float, default=0.95, help="stop at this fraction of the episode limit")
    parser.add_argument("--threads", type=int, default=0, help="simulation threads (0 = all cores)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--plot", default="ppo_learning_curve.png")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: one thread is faster than two fighting the simulation for 2 cores
    env = vector_env.CartPole(args.envs, threads=args.threads) if args.task == "cartpole" else \
        vector_env.ArmReach(args.envs, threads=args.threads)
    n, obs_dim, act_dim, T = env.num_envs, env.obs_dim, env.act_dim, args.steps
    model = ActorCritic(obs_dim, act_dim)
    optimiser = torch.optim.Adam(model.parameters(), lr=args.lr)
    norm = RunningNorm(obs_dim)
    reward_scale = 0.1  # values of order 10, not 100: an easier regression for the critic
    gamma, lam, clip, epochs, minibatches = 0.99, 0.95, 0.2, 4, 16

    obs_buf = torch.zeros(T, n, obs_dim)
    act_buf = torch.zeros(T, n, act_dim)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros(T, n) for _ in range(4))
    obs_np, _ = env.reset(seed=args.seed)
    obs = torch.from_numpy(obs_np)  # shares the array env.reset returned
    history = []  # (env steps, mean return, mean length, wall time)
    start, total_steps, limit = time.perf_counter(), 0, env.max_episode_steps
    print(f"PPO on {args.task}: {n} environments x {T} steps per iteration, threads={env.batch.threads}, "
          f"episode limit {limit} steps; target mean length {args.target * limit:.0f}")
    solved_at = None
    for iteration in range(1, args.iterations + 1):
        iteration_start, sim_time = time.perf_counter(), 0.0
        returns, lengths = [], []
        with torch.no_grad():
            for t in range(T):
                norm.update(obs)
                x = norm(obs)
                dist = model.distribution(x)
                action = dist.sample()
                obs_buf[t], act_buf[t] = x, action
                logp_buf[t], val_buf[t] = dist.log_prob(action).sum(-1), model.value(x)
                sim_start = time.perf_counter()
                obs_np, reward, terminated, truncated, info = env.step(action.numpy())
                sim_time += time.perf_counter() - sim_start
                reward = torch.from_numpy(reward).double()
                if truncated.any():  # bootstrap the cut-off episodes from their last observation
                    final = norm(torch.from_numpy(info["final_obs"][truncated]))
                    reward[torch.from_numpy(truncated)] += gamma * model.value(final).double() / reward_scale
                rew_buf[t] = reward.float() * reward_scale
                done_buf[t] = torch.from_numpy(terminated | truncated).float()
                if info["done"].any():
                    returns += list(info["episode_return"][info["done"]])
                    lengths += list(info["episode_length"][info["done"]])
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
        b_adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)
        size = T * n // minibatches
        for _ in range(epochs):
            order = torch.randperm(T * n)
            for k in range(minibatches):
                idx = order[k * size:(k + 1) * size]
                dist = model.distribution(b_obs[idx])
                ratio = (dist.log_prob(b_act[idx]).sum(-1) - b_logp[idx]).exp()
                policy_loss = -torch.min(ratio * b_adv[idx], ratio.clamp(1 - clip, 1 + clip) * b_adv[idx]).mean()
                value_loss = 0.5 * (model.value(b_obs[idx]) - b_ret[idx]).pow(2).mean()
                loss = policy_loss + 0.5 * value_loss - 0.0 * dist.entropy().mean()
                optimiser.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimiser.step()

        total_steps += T * n
        wall = time.perf_counter() - start
        mean_return = float(np.mean(returns)) if returns else float("nan")
        mean_length = float(np.mean(lengths)) if lengths else float("nan")
        history.append((total_steps, mean_return, mean_length, wall))
        loop_rate = T * n / (time.perf_counter() - iteration_start)
        print(f"iter {iteration:4d}  steps {total_steps:9d}  sim {T * n / sim_time / 1e6:6.2f} M env-steps/s  "
              f"loop {loop_rate / 1e6:5.2f} M env-steps/s  episodes {len(lengths):5d}  "
              f"mean return {mean_return:8.2f}  mean length {mean_length:6.1f}  wall {wall:6.1f} s", flush=True)
        if args.task == "cartpole" and len(lengths) >= 50 and mean_length >= args.target * limit:
            solved_at = (iteration, total_steps, wall)
            break

    if solved_at:
        print(f"balanced: mean episode length {history[-1][2]:.1f} >= {args.target * limit:.0f} after "
              f"{solved_at[0]} iterations, {solved_at[1]} env-steps, {solved_at[2]:.1f} s")
    elif args.task == "cartpole":
        print("not balanced within the iteration limit")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        steps, rets, lens, _ = map(np.array, zip(*history))
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(steps / 1e6, lens if args.task == "cartpole" else rets, marker=".")
        if args.task == "cartpole":
            ax.axhline(args.target * limit, color="gray", linestyle="--", label=f"target {args.target * limit:.0f}")
            ax.set_ylabel("mean episode length (steps)")
            ax.legend()
        else:
            ax.set_ylabel("mean episode return")
        ax.set_xlabel("environment steps (millions)")
        ax.set_title(f"PPO on batchdyn {args.task}, {n} environments")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    return 0 if (solved_at or args.task != "cartpole") else 1


if __name__ == "__main__":
    sys.exit(main())
