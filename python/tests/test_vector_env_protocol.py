"""Conformance with Gymnasium 1.x's VectorEnv protocol, written from its published rules
(gymnasium/vector/vector_env.py, sync_vector_env.py and the "Autoreset Mode" page): spaces,
reset with seeds and reset_mask, the three autoreset modes and their info keys, episode
statistics, close. A countdown task with known episode ends drives the autoreset cases."""
import numpy as np
import pytest

from batchdyn import load, vector_env
from batchdyn.vector_env import AutoresetMode, VectorEnv
from batchdyn.models import model_path


class Countdown(VectorEnv):
    """Odd environments terminate at their 3rd step, even ones run to the time limit (5 steps).
    Observation: [steps taken in the episode, cart position]; reward: the step's number."""

    obs_dim, act_dim, max_episode_steps = 2, 1, 5

    def __init__(self, num_envs=4, autoreset_mode=AutoresetMode.SAME_STEP, dtype=np.float32, threads=1):
        super().__init__(load(model_path("cartpole.urdf")), num_envs, 0.01, 1, threads, dtype, autoreset_mode)
        self.counter = np.zeros(self.num_envs)

    def reset_envs(self, envs, keys):
        self.batch.reset(envs, seeds=keys, noise=0.05)
        self.counter[envs] = 0

    def apply_actions(self, actions):
        self.batch.tau[:] = 0.0
        self.counter += 1

    def observe(self, out, envs=None):  # every row (cheap)
        out[:, 0] = self.counter
        out[:, 1] = self.batch.q[:, 0]

    def rewards_and_terminations(self, actions):
        odd = np.arange(self.num_envs) % 2 == 1
        return self.counter.copy(), odd & (self.counter == 3)

    def step_info(self):
        return {"counter": self.counter.copy()}


def step_zero(env):
    return env.step(np.zeros((env.num_envs, env.act_dim)))


def test_spaces_are_boxes_of_the_batch_dtype_with_sample_and_contains():
    for dtype in (np.float32, np.float64):
        env = Countdown(dtype=dtype)
        assert env.single_observation_space.shape == (2,) and env.observation_space.shape == (4, 2)
        assert env.single_action_space.shape == (1,) and env.action_space.shape == (4, 1)
        assert env.observation_space.dtype == dtype == env.action_space.dtype
        obs, info = env.reset(seed=0)
        assert obs.dtype == dtype and env.observation_space.contains(obs) and info == {}
        env.action_space.seed(3)
        a = env.action_space.sample()
        assert a in env.action_space and a.shape == (4, 1) and np.abs(a).max() <= 1
        env.action_space.seed(3)
        np.testing.assert_array_equal(a, env.action_space.sample())
        assert not env.action_space.contains(np.full((4, 1), 2.0, dtype=dtype))
        assert not env.action_space.contains(np.zeros((3, 1), dtype=dtype))
        assert env.single_observation_space.sample().shape == (2,)


def test_metadata_states_the_autoreset_mode_as_the_enum():
    assert Countdown().metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert Countdown(autoreset_mode="NextStep").metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    with pytest.raises(ValueError, match="autoreset_mode"):
        Countdown(autoreset_mode="same-step")


def test_a_seed_makes_resets_reproducible_and_an_int_seed_means_seed_plus_index():
    env, other = vector_env.make("CartPole", num_envs=4, threads=1), vector_env.make("CartPole", num_envs=4, threads=2)
    a, _ = env.reset(seed=7)
    b, _ = other.reset(seed=7)
    np.testing.assert_array_equal(a, b)
    c, _ = env.reset(seed=[7, 8, 9, 10])
    np.testing.assert_array_equal(a, c)
    d, _ = env.reset(seed=8)
    np.testing.assert_array_equal(a[1:], d[:3])  # environment i under seed 8 + i is environment i + 1 under 7
    e, _ = env.reset(seed=[5, None, 5, 6])
    np.testing.assert_array_equal(e[0], e[2])  # the same seed, the same episode
    assert not np.array_equal(e[0], e[3])
    with pytest.raises(ValueError, match="3 seeds for 4 environments"):
        env.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)


def test_reset_without_a_seed_continues_each_environments_stream():
    env = vector_env.make("CartPole", num_envs=4, threads=1)
    first, _ = env.reset(seed=3)
    second, _ = env.reset()
    assert not np.array_equal(first, second)
    again = vector_env.make("CartPole", num_envs=4, threads=1)
    again.reset(seed=3)
    np.testing.assert_array_equal(second, again.reset()[0])


def test_reset_mask_resets_only_the_selected_environments():
    env = Countdown()
    env.reset(seed=1)
    obs, *_ = step_zero(env)
    assert (obs[:, 0] == 1).all()
    obs, info = env.reset(options={"reset_mask": np.array([False, True, False, True])})
    assert obs[:, 0].tolist() == [1, 0, 1, 0] and info == {}
    for bad, message in ((np.array([1, 0, 0, 0]), "bool array"), (np.zeros(3, dtype=bool), "shape"),
                         (np.zeros(4, dtype=bool), "no environment")):
        with pytest.raises(ValueError, match=message):
            env.reset(options={"reset_mask": bad})
    with pytest.raises(ValueError, match="unknown options"):
        env.reset(options={"mask": np.ones(4, dtype=bool)})


def test_an_environments_episodes_do_not_depend_on_which_others_reset_with_it():
    alone, together = Countdown(), Countdown()
    alone.reset(seed=4)
    together.reset(seed=4)
    a, _ = alone.reset(options={"reset_mask": np.array([False, False, True, False])})
    b, _ = together.reset()
    np.testing.assert_array_equal(a[2], b[2])


def test_same_step_autoreset_returns_the_new_episode_and_the_final_observation_in_info():
    env = Countdown(autoreset_mode=AutoresetMode.SAME_STEP)
    env.reset(seed=0)
    for _ in range(2):
        obs, reward, terminated, truncated, info = step_zero(env)
        assert "final_obs" not in info and "episode" not in info and not env.episodes_ended.any()
    obs, reward, terminated, truncated, info = step_zero(env)  # step 3: the odd environments terminate
    odd = np.array([False, True, False, True])
    np.testing.assert_array_equal(terminated, odd)
    assert not truncated.any() and (reward == 3).all()  # the ended step's reward
    assert obs[:, 0].tolist() == [3, 0, 3, 0]  # the new episodes' first observations
    np.testing.assert_array_equal(info["_final_obs"], odd)
    assert info["final_obs"].dtype == object and info["final_obs"][0] is None
    assert info["final_obs"][1][0] == 3 and info["final_obs"][1].shape == (2,)
    np.testing.assert_array_equal(info["_final_info"], odd)
    np.testing.assert_array_equal(info["final_info"]["_counter"], odd)
    assert info["final_info"]["counter"][1] == 3
    np.testing.assert_array_equal(info["_counter"], ~odd)  # a new episode has no step info yet
    np.testing.assert_array_equal(env.episodes_ended, odd)
    stats = env.episode_statistics
    assert stats["r"][odd].tolist() == [6, 6] and stats["l"][odd].tolist() == [3, 3] and (stats["t"][odd] >= 0).all()
    step_zero(env)
    obs, reward, terminated, truncated, info = step_zero(env)  # step 5: the even ones reach the time limit
    np.testing.assert_array_equal(truncated, [True, False, True, False])
    assert not terminated.any() and obs[:, 0].tolist() == [0, 2, 0, 2]
    assert env.episodes_ended.tolist() == [True, False, True, False] and stats["l"].tolist() == [5, 3, 5, 3]


def test_next_step_autoreset_resets_on_the_following_step_with_reward_zero():
    env = Countdown(autoreset_mode=AutoresetMode.NEXT_STEP)
    env.reset(seed=0)
    for _ in range(2):
        step_zero(env)
    obs, reward, terminated, truncated, info = step_zero(env)
    assert terminated.tolist() == [False, True, False, True]
    assert obs[:, 0].tolist() == [3, 3, 3, 3]  # the final observation itself
    assert "final_obs" not in info and env.episodes_ended.tolist() == [False, True, False, True]
    obs, reward, terminated, truncated, info = step_zero(env)  # the odd ones are reset, their actions ignored
    assert obs[:, 0].tolist() == [4, 0, 4, 0]
    assert reward.tolist() == [4, 0, 4, 0] and not terminated.any() and not truncated.any()
    obs, *_ = step_zero(env)
    assert obs[:, 0].tolist() == [5, 1, 5, 1]


def test_disabled_autoreset_refuses_to_step_an_ended_environment_until_reset_mask_resets_it():
    env = Countdown(autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=0)
    for _ in range(3):
        obs, reward, terminated, truncated, info = step_zero(env)
    assert obs[:, 0].tolist() == [3, 3, 3, 3] and terminated.tolist() == [False, True, False, True]
    with pytest.raises(ValueError, match=r"environments \[1, 3\] ended.*reset_mask"):
        step_zero(env)
    obs, _ = env.reset(options={"reset_mask": terminated})
    assert obs[:, 0].tolist() == [3, 0, 3, 0]
    obs, *_ = step_zero(env)
    assert obs[:, 0].tolist() == [4, 1, 4, 1]


def test_actions_of_the_wrong_shape_or_not_finite_are_refused():
    env = Countdown()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(4, 1\)"):
        env.step(np.zeros((3, 1)))
    with pytest.raises(ValueError, match=r"environments \[2\] are not finite"):
        env.step(np.array([[0.0], [0.0], [np.nan], [0.0]]))
    obs, *_ = env.step(np.full(4, 5.0))  # (N,) for one action each, clipped to the space
    assert np.isfinite(obs).all()


def test_close_releases_the_batch_and_later_calls_raise():
    env = Countdown()
    env.reset(seed=0)
    env.close()
    env.close()  # idempotent
    assert env.closed
    with pytest.raises(RuntimeError, match="closed"):
        step_zero(env)
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()
    with Countdown() as scoped:
        scoped.reset(seed=0)
    assert scoped.closed


def test_the_registry_makes_tasks_by_name_and_registers_user_tasks():
    assert {"CartPole", "ArmReach", "Quadruped", "QuadrupedHills"} <= set(vector_env.registered())
    env = vector_env.make("cartpole", num_envs=3, threads=1)
    assert isinstance(env, vector_env.CartPole) and env.num_envs == 3
    vector_env.register("CountdownForTest", Countdown, num_envs=6)
    assert vector_env.make("CountdownForTest").num_envs == 6
    with pytest.raises(ValueError, match="registered already"):
        vector_env.register("CountdownForTest", Countdown)
    with pytest.raises(KeyError, match="registered: .*CartPole"):
        vector_env.make("NoSuchTask")


def test_copy_false_returns_the_envs_own_buffer():
    env = Countdown()
    env.copy = False
    obs, _ = env.reset(seed=0)
    after, *_ = step_zero(env)
    assert after is obs and (obs[:, 0] == 1).all()
