"""What the walking tasks share (Quadruped, Go2Walk, H1Walk): per-episode randomisation of friction,
payload and motor strength, an action delay, the base part of the observation, the velocity
tracking terms of the reward and the step info."""
import numpy as np

from .observations import gravity_in_base


class LeggedTask:
    """A mixin for a VectorEnv whose robot has a free-flyer root on body 1 (the trunk or pelvis)
    and walks at a commanded forward speed (self.command, m/s). A task names its feet
    (`foot_names`) and where its observation holds their contacts as 0/1 (`feet_observed`, a
    slice): what an evaluation draws.

    * friction_range=(lo, hi) draws each environment's friction coefficient per episode,
      added_mass_range=(lo, hi) kg a payload on body 1 (its mass; its centre of mass and inertia
      unchanged), motor_strength_range=(lo, hi) the strength of each motor the policy drives (the
      factor on its PD torque before the torque limit, Batch.set_motor_strength), independently
      per motor; the others keep 1.
    * action_delay=k applies each action k steps late (the policy acts on what it observed
      k x dt earlier, as a real robot's control loop does)."""

    foot_names = ()
    feet_observed = slice(0, 0)

    def _set_up_options(self, friction_range, added_mass_range, motor_strength_range, action_delay, actuated):
        """The options above; `actuated`: the v indices of the motors the strength draws cover."""
        self.friction_range = None if friction_range is None else tuple(float(x) for x in friction_range)
        self.added_mass_range = None if added_mass_range is None else tuple(float(x) for x in added_mass_range)
        if self.added_mass_range is not None:
            self._base_inertia = self.model.body_inertia(1)  # (mass, com, rotational inertia) of the trunk
        self.motor_strength_range = None if motor_strength_range is None else tuple(float(x) for x in motor_strength_range)
        if self.motor_strength_range is not None and not 0.0 <= self.motor_strength_range[0] <= self.motor_strength_range[1]:
            raise ValueError(f"motor_strength_range must be (lo, hi) with 0 <= lo <= hi, got {motor_strength_range}")
        self._actuated = np.asarray(actuated)
        self.action_delay = int(action_delay)
        if self.action_delay < 0:
            raise ValueError(f"action_delay must be >= 0 steps, got {action_delay}")
        self._delayed = np.zeros((self.action_delay + 1, self.num_envs, self.act_dim), dtype=np.float32)  # a ring of actions
        self._delay_at = 0

    def _randomise(self, envs, keys):
        """The new episodes' draws (streams 3, 4, 5 of their keys) and an empty delay ring."""
        self._delayed[:, envs] = 0.0
        if self.friction_range is not None:
            low, high = self.friction_range
            for env, mu in zip(envs, low + (high - low) * self.uniform(keys, 3, 1)[:, 0]):
                self.batch.set_friction([int(env)], float(mu))
        if self.added_mass_range is not None:
            low, high = self.added_mass_range
            mass, com, inertia = self._base_inertia
            added = low + (high - low) * self.uniform(keys, 4, 1)[:, 0]
            self.batch.set_body_inertia(envs, 1, mass + added, np.tile(com, (len(envs), 1)), np.tile(inertia, (len(envs), 1, 1)))
        if self.motor_strength_range is not None:  # the motors; the free flyer's 6 dofs have none
            low, high = self.motor_strength_range
            strength = np.ones((len(envs), self.model.nv))
            strength[:, self._actuated] = low + (high - low) * self.uniform(keys, 5, len(self._actuated))
            self.batch.set_motor_strength(envs, strength)

    def _delay(self, actions):
        """The actions to apply now: `actions` itself, or the ones given action_delay steps ago."""
        if self.action_delay == 0:
            return actions
        self._delayed[self._delay_at] = actions  # a ring: the newest stored at _delay_at, the oldest (the next slot) applied
        self._delay_at = (self._delay_at + 1) % len(self._delayed)
        return self._delayed[self._delay_at]

    def _observe_base(self, o, q, v, rows):
        """Columns 0-9 of the observation o from the rows' q and v: the base's linear velocity x 2
        and angular velocity x 0.25 (base frame, Pinocchio's v), gravity in the base frame, and
        the command x 2."""
        np.multiply(v[:, 0:3], 2.0, out=o[:, 0:3])
        np.multiply(v[:, 3:6], 0.25, out=o[:, 3:6])
        gravity_in_base(q[:, 3:7], out=o[:, 6:9])
        np.multiply(self.command[rows], 2.0, out=o[:, 9])

    def _tracking_terms(self, v, gravity):
        """legged_gym's first reward terms (per step, before x dt) from v (float64) and the
        observed gravity: exp(-|v_xy - (v_cmd, 0)|^2 / 0.25) + 0.5 exp(-w_z^2 / 0.25) - 2 v_z^2
        - 0.05 |w_xy|^2 - |g_xy|^2."""
        velocity_error = (v[:, 0] - self.command.astype(np.float64)) ** 2 + v[:, 1] ** 2
        return (np.exp(-velocity_error / 0.25)
                + 0.5 * np.exp(-v[:, 5] ** 2 / 0.25)
                - 2.0 * v[:, 2] ** 2
                - 0.05 * np.sum(v[:, 3:5] ** 2, axis=1)
                - np.sum(gravity[:, 0:2] ** 2, axis=1))

    def step_info(self):
        return {"forward_velocity": self.batch.v[:, 0].astype(np.float64), "command": self.command.copy(),
                "contact_iterations": np.array(self.batch.contact_iterations)}
