"""Box, the space of the vector environments' observations and actions, as gymnasium.spaces.Box
(without importing Gymnasium, which Debian does not ship)."""
import numpy as np


class Box:
    """The box [low, high] of arrays of `shape` and `dtype`, as gymnasium.spaces.Box: low and high
    broadcast to shape (-inf / inf for unbounded sides); sample() draws from the space's own
    generator (seed() it for reproducible samples), contains(x) checks shape, dtype kind and bounds."""

    def __init__(self, low, high, shape, dtype=np.float32, seed=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.low = np.array(np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape))
        self.high = np.array(np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape))
        if np.any(self.low > self.high):
            raise ValueError(f"Box: low > high somewhere in {self.low} .. {self.high}")
        self._np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        """Seeds the generator of sample(); returns [seed] as Gymnasium does."""
        self._np_random = np.random.default_rng(seed)
        return [seed]

    @property
    def np_random(self):
        return self._np_random

    def is_bounded(self, manner="both"):
        """As Gymnasium's: "both", "below" or "above"."""
        below, above = bool(np.all(np.isfinite(self.low))), bool(np.all(np.isfinite(self.high)))
        if manner == "both":
            return below and above
        if manner == "below":
            return below
        if manner == "above":
            return above
        raise ValueError(f"manner must be 'both', 'below' or 'above', got {manner!r}")

    def sample(self):
        """A random element, Gymnasium's rule per side: uniform on [low, high] where both are finite,
        low + exponential below an open top, high - exponential above an open bottom, normal where
        both are open."""
        low, high = self.low.astype(np.float64), self.high.astype(np.float64)
        rng, out = self._np_random, np.empty(self.shape)
        finite_low, finite_high = np.isfinite(low), np.isfinite(high)
        both, only_low, only_high = finite_low & finite_high, finite_low & ~finite_high, ~finite_low & finite_high
        neither = ~finite_low & ~finite_high
        out[both] = rng.uniform(low[both], high[both])
        out[only_low] = low[only_low] + rng.exponential(size=only_low.sum())
        out[only_high] = high[only_high] - rng.exponential(size=only_high.sum())
        out[neither] = rng.normal(size=neither.sum())
        return np.clip(out, low, high).astype(self.dtype)

    def contains(self, x):
        """True when x has the shape, a numeric dtype castable to the space's, and lies within the bounds."""
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x, dtype=self.dtype)
            except (TypeError, ValueError):
                return False
        if x.shape != self.shape or not np.can_cast(x.dtype, self.dtype, casting="same_kind"):
            return False
        return bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __contains__(self, x):
        return self.contains(x)

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape and self.dtype == other.dtype
                and np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"

    def to_gymnasium(self):
        """The same space as a gymnasium.spaces.Box (needs Gymnasium installed), for libraries that
        check isinstance(space, gymnasium.spaces.Box)."""
        import gymnasium

        return gymnasium.spaces.Box(self.low, self.high, self.shape, self.dtype)


def batch_space(space, n):
    """The space of n stacked elements of `space` (Gymnasium's batch_space for a Box)."""
    return Box(np.broadcast_to(space.low, (n, *space.shape)), np.broadcast_to(space.high, (n, *space.shape)),
               (n, *space.shape), space.dtype)
