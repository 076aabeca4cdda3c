"""Vectorised environments on a batchdyn Batch: gymnasium.vector.VectorEnv subclasses, with
adapters for Stable-Baselines3 and rsl_rl.

    from batchdyn import vector_env
    env = vector_env.make("CartPole", num_envs=4096)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(actions)

* base.py: VectorEnv, the public base class (autoreset modes, info keys, seeds, reset_mask) and
  how a task subclasses it; AutoresetMode.
* registry.py: make, register, registered: the tasks by name (examples/train_ppo.py reads it).
* cartpole.py, arm_reach.py, quadruped.py, humanoid.py: the shipped tasks (CartPole, ArmReach,
  Quadruped, QuadrupedHills = Quadruped on rolling hills, Go2Walk = the same task on Unitree
  Go2's MJCF, H1Walk = Unitree H1 walking, from its MJCF).
* legged.py: what the walking tasks share (randomisation, action delay, base observation, tracking reward).
* observations.py: joint positions and velocities without the free flyer, base velocities in
  the base frame, projected gravity.
* sb3.py (SB3VecEnv) and rsl_rl_env.py (RslRlVecEnv): Stable-Baselines3's VecEnv and rsl_rl's
  VecEnv; imported when first asked for (they import SB3, rsl_rl and torch).
* seeding.py: per-environment seeds and episode keys.
"""
from . import observations  # noqa: F401
from .arm_reach import ArmReach
from .base import AutoresetMode, VectorEnv
from .cartpole import CartPole
from .humanoid import H1Walk
from .legged import LeggedTask
from .quadruped import Go2Walk, Quadruped
from .registry import make, register, registered

__all__ = ["AutoresetMode", "VectorEnv", "make", "register", "registered", "CartPole", "ArmReach",
           "Quadruped", "Go2Walk", "H1Walk", "LeggedTask", "SB3VecEnv", "RslRlVecEnv", "observations"]

register("CartPole", CartPole)
register("ArmReach", ArmReach)
register("Quadruped", Quadruped)
register("QuadrupedHills", Quadruped, terrain_roughness=0.05)
register("Go2Walk", Go2Walk)
register("H1Walk", H1Walk)


def __getattr__(name):  # the adapters import SB3 and torch: only when asked for
    if name == "RslRlVecEnv":
        from .rsl_rl_env import RslRlVecEnv

        return RslRlVecEnv
    if name == "SB3VecEnv":
        from .sb3 import SB3VecEnv

        return SB3VecEnv
    raise AttributeError(f"module 'batchdyn.vector_env' has no attribute {name!r}")
