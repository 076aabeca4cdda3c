"""Per-environment seeds and episode keys: what makes a vector environment's episodes
reproducible whatever the thread count, the order of resets or which environments end together.

Each environment i holds a seed s_i (Gymnasium's rule: reset(seed=s) gives s + i, a list gives
one each) and counts the episodes it began, k_i. Episode k of environment i draws everything
random (the Batch's reset state, a task's goal or command) from key(s_i, k_i), SplitMix64's
finaliser applied to a mix of the two, as the engine's counter-based generator
(batch/counter_rng.hpp). Environments given the same seed therefore play the same episodes.
"""
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MASK = 0xFFFFFFFFFFFFFFFF


def _mix(z):
    """SplitMix64's finaliser on a uint64 array (array arithmetic wraps silently)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def episode_keys(seeds, episodes):
    """key(s_i, k_i) for uint64 arrays of seeds and episode counts: the seed of episode k_i."""
    seeds, episodes = np.atleast_1d(seeds).astype(np.uint64), np.atleast_1d(episodes).astype(np.uint64)
    return _mix(_mix(seeds + _GOLDEN) ^ (episodes * _GOLDEN + np.uint64(1)))


def uniform(keys, stream, count):
    """(len(keys), count) numbers uniform in [0, 1): draw j of stream `stream` under each key,
    53 random bits each. A task gives each of its random quantities its own stream."""
    keys = np.atleast_1d(np.asarray(keys, dtype=np.uint64))[:, None]
    j = np.arange(count, dtype=np.uint64)[None, :]
    stream_mix = np.array([stream], dtype=np.uint64) * _GOLDEN + np.uint64(2)  # an array: scalar uint64 overflow warns
    bits = _mix(_mix(keys ^ stream_mix) ^ (j * _GOLDEN + np.uint64(3)))
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def seed_list(seed, num_envs, entropy=None):
    """Gymnasium's seeds per sub-environment: None -> fresh entropy for each, an int s -> s + i,
    a sequence -> one per environment (an entry None: fresh entropy). Returns a uint64 array.
    Raises ValueError for a sequence of the wrong length or a negative or non-integer seed."""
    if entropy is None:
        entropy = np.random.SeedSequence().generate_state(num_envs, dtype=np.uint64)
    if seed is None:
        return np.asarray(entropy, dtype=np.uint64)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"reset: seed must be >= 0, got {seed}")
        return np.array([(int(seed) + i) & _MASK for i in range(num_envs)], dtype=np.uint64)
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"reset: {len(seeds)} seeds for {num_envs} environments (give one each, an int, or None)")
    out = np.empty(num_envs, dtype=np.uint64)
    for i, s in enumerate(seeds):
        if s is None:
            out[i] = entropy[i]
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0:
            out[i] = int(s) & _MASK
        else:
            raise ValueError(f"reset: seed[{i}] must be an int >= 0 or None, got {s!r}")
    return out
