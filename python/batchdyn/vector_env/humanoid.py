"""H1Walk (Unitree H1, MJCF): a humanoid walking at a commanded forward speed on its mesh feet."""
import numpy as np

from .. import load
from .base import AutoresetMode, VectorEnv
from .legged import LeggedTask
from ..models import model_path

# unitree_rl_gym's H1 gains (legged_gym/envs/h1/h1_config.py), by the joint name's part:
# (kp N m/rad, kd N m s/rad).
_GAINS = {"hip_yaw": (150.0, 2.0), "hip_roll": (150.0, 2.0), "hip_pitch": (150.0, 2.0), "knee": (200.0, 4.0), "ankle": (40.0, 2.0),
          "torso": (300.0, 6.0), "shoulder": (150.0, 2.0), "elbow": (100.0, 2.0)}
_LEGS = [f"{side}_{joint}_joint" for side in ("left", "right") for joint in ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle")]
_FEET = ("left_ankle_link", "right_ankle_link")


class H1Walk(LeggedTask, VectorEnv):
    """Walk forward at a commanded speed: Unitree H1 from its MJCF (models/unitree_h1, as
    unitree_mujoco ships it, each collision mesh cut down to its convex hull: 19 joints, 51 kg),
    after unitree_rl_gym's H1 task (its gains, gait phase and reward terms).

    * The robot file gives the reset pose (its keyframe "home": pelvis 0.98 m up, hips -0.4,
      knees 0.8, ankles -0.4 rad), the joints' damping and armature, the torque limits (its
      motors' control ranges: Model.motor_torque_limits) and the collision geometry: every link's
      convex hull; the feet are the ankle links' hulls, 4 contact slots each.
    * Control: the 10 leg joints (hip yaw, roll, pitch, knee, ankle; left then right) take PD
      targets at the keyframe + 0.25 x action; the torso and arms hold the keyframe. Gains
      unitree_rl_gym's: hips 150 / 2, knees 200 / 4, ankles 40 / 2, torso 300 / 6, shoulders
      150 / 2, elbows 100 / 2 (N m/rad / N m s/rad). dt = 0.02 s in 4 substeps of 5 ms.
    * Command: forward speed v_cmd ~ U[command_range] m/s in the base frame, per episode; the
      sideways speed and the yaw rate are commanded to 0.
    * Gait: a phase of period 0.8 s from the episode's start, the right leg half a period behind
      the left; a leg is in stance for the first 55 % of its period.
    * Observation (44): base linear velocity x 2 and angular velocity x 0.25 (base frame),
      gravity in the base frame, v_cmd x 2, the leg joints' positions - keyframe and velocities
      x 0.05, the previous action, sin and cos of the gait phase, foot contacts (normal force
      > 1 N) as 0/1.
    * Reward per step (x dt, unitree_rl_gym's terms and weights): exp(-|v_xy - (v_cmd, 0)|^2 /
      0.25) + 0.5 exp(-w_z^2 / 0.25) - 2 v_z^2 - 0.05 |w_xy|^2 - |g_xy|^2 - 10 (z - 0.98)^2
      - 2.5e-7 |qdd_legs|^2 - 0.01 |a - a_prev|^2 + 0.15 (alive) - |hip yaw and roll - keyframe|^2
      - 0.2 sum over feet in contact of |foot velocity|^2 - 20 sum over feet in the air of
      (sole clearance - 0.08)^2 + 0.18 x (feet whose contact matches the gait's stance).
    * Contact: the engine's solver set to projected Gauss-Seidel ("pgs"), which solves to the
      same tolerance with the same stopping test as its default ADMM. On 512 environments
      under random leg targets (one thread, float32, AVX2), PGS took 16 sweeps per substep where
      ADMM took 38 iterations, and the physics ran at 34k env-steps/s instead of 12.7k, with the
      same episodes ending. In training the gain shrinks as the policy learns (PGS's sweeps grow
      to ~25): measured in two runs of examples/train_ppo.py, 2.4x at the 6th iteration, on par
      after 35.
    * Termination: a contact of any geometry other than the feet (the pelvis, torso, arms, hips
      or knees on the ground: a fall), the pelvis below 0.6 m, or a failed environment; episodes
      last at most 1000 steps (20 s).
    * Resets: the keyframe perturbed by +-noise (positions, orientation, joints) and
      +-velocity_noise.
    * Randomisation per episode (off by default) and action_delay (0 by default): see
      LeggedTask (vector_env/legged.py).

    Extra info after each step: info["forward_velocity"], info["command"] and
    info["contact_iterations"] (the contact solver's iterations, PGS sweeps here, in the step's last
    substep), each (N,).
    A policy that walks on it is not shown yet: 10 minutes of examples/train_ppo.py on two cores
    (5.3 M env-steps, ADMM then) took its episodes from 1.3 s to 2 s."""

    obs_dim = 44
    act_dim = 10
    max_episode_steps = 1000
    action_scale = 0.25
    gait_period, stance_share = 0.8, 0.55
    base_height_target = 0.98  # the keyframe's
    swing_height_target = 0.08
    foot_names, feet_observed = ("left", "right"), slice(42, 44)

    training = dict(envs=4096, steps=24, iterations=1500, hidden=(256, 128), activation="elu", lr=1e-3, epochs=5,
                    minibatches=4, reward_scale=1.0, log_std=-0.7, entropy=0.01, desired_kl=0.01)

    def __init__(self, num_envs=4096, threads=0, dtype=np.float32, command_range=(0.0, 1.0), noise=0.02, velocity_noise=0.05,
                 friction_range=None, added_mass_range=None, motor_strength_range=None, action_delay=0,
                 autoreset_mode=AutoresetMode.SAME_STEP, copy=True):
        model = self.load_model()
        super().__init__(model, num_envs, 0.02, 4, threads, dtype, autoreset_mode, copy)
        self.command_range = tuple(command_range)
        self.noise, self.velocity_noise = float(noise), float(velocity_noise)
        self.reference = np.array(model.keyframes["home"]["q"])
        self.batch.set_reference_configuration(self.reference)
        names = model.joint_names  # joint k > 0 is dof 5 + k (one free flyer, then 1-dof joints)
        self.legs = np.array([5 + names.index(name) for name in _LEGS])  # v indices
        self.hips = self.legs[[0, 1, 5, 6]]  # hip yaw and roll, both sides
        kp, kd = np.zeros(model.nv), np.zeros(model.nv)
        for k, name in enumerate(names[1:]):
            gains = [g for part, g in _GAINS.items() if part in name]
            kp[6 + k], kd[6 + k] = gains[0] if gains else (0.0, 0.0)  # not_use_joint: a passive hinge
        self.batch.set_pd_gains(kp.tolist(), kd.tolist())
        self.batch.control_mode = "pd"
        self.batch.effort_limits = list(model.motor_torque_limits)
        # Projected Gauss-Seidel, with the same tolerance and stopping test as ADMM: on the soles'
        # 4 slots each, with contacts that come and go, it converged in 16 sweeps where ADMM
        # took 38 iterations, and stepped up to 2.7x faster (the docstring's numbers).
        self.batch.contact_solver = "pgs"
        self.default_joint_positions = self.reference[1 + self.legs]  # q index = v index + 1 (the quaternion)
        candidates = model.info()["contacts"]["candidates"]
        on = np.array([c["geometry"].split("/")[0] for c in candidates])
        self.foot_slots = [np.flatnonzero(on == foot) for foot in _FEET]  # each foot's 4 hull slots
        self.not_feet = np.flatnonzero(~np.isin(on, _FEET))
        self.batch.set_observed_frames(list(_FEET))
        self._set_up_options(friction_range, added_mass_range, motor_strength_range, action_delay, self.legs)
        self.command = np.zeros(self.num_envs, dtype=np.float32)
        self.time = np.zeros(self.num_envs)
        self.last_action = np.zeros((self.num_envs, self.act_dim), dtype=np.float32)
        self._previous_action = np.zeros_like(self.last_action)

    @property
    def robot_file(self):
        """The MJCF the task loads: what batchdyn.viewer draws."""
        return model_path("unitree_h1/scene.xml")

    @classmethod
    def load_model(cls):
        """H1's MJCF with its own collision geometry."""
        return load(model_path("unitree_h1/scene.xml"))

    def phase(self):
        """Each environment's gait phase in [0, 1) per leg, (N, 2): left, then right half a period on."""
        left = np.mod(self.time / self.gait_period, 1.0)
        return np.stack([left, np.mod(left + 0.5, 1.0)], axis=1)

    def foot_contacts(self):
        """(N, 2): whether each foot's slots carry more than 1 N of normal force."""
        forces = self.batch.contact_forces[:, :, 2]
        return np.stack([forces[:, slots].sum(axis=1) > 1.0 for slots in self.foot_slots], axis=1)

    def reset_envs(self, envs, keys):
        self.batch.reset(envs, seeds=keys, noise=self.noise, velocity_noise=self.velocity_noise)
        self.batch.target[envs] = 0.0
        self.batch.target[envs, 6:] = self.reference[7:]
        low, high = self.command_range
        self.command[envs] = low + (high - low) * self.uniform(keys, 2, 1)[:, 0]
        self.time[envs] = 0.0
        self.last_action[envs] = 0.0
        self._previous_action[envs] = 0.0
        self._randomise(envs, keys)

    def apply_actions(self, actions):
        self._previous_action[:] = self.last_action
        self.last_action[:] = actions
        self.time += self.dt  # the phase the observation and rewards after this step see
        self.batch.target[:, self.legs] = self.default_joint_positions + self.action_scale * self._delay(actions)

    def observe(self, out, envs=None):
        rows = slice(None) if envs is None else envs
        q, v = self.batch.q[rows], self.batch.v[rows]
        o = out if envs is None else np.empty((len(q), self.obs_dim), dtype=out.dtype)
        self._observe_base(o, q, v, rows)
        np.subtract(q[:, 1 + self.legs], self.default_joint_positions, out=o[:, 10:20])
        np.multiply(v[:, self.legs], 0.05, out=o[:, 20:30])
        o[:, 30:40] = self.last_action[rows]
        angle = 2 * np.pi * self.phase()[rows, 0]
        o[:, 40], o[:, 41] = np.sin(angle), np.cos(angle)
        o[:, 42:44] = self.foot_contacts()[rows]
        if envs is not None:
            out[envs] = o

    def rewards_and_terminations(self, actions):
        q, v = self.batch.q.astype(np.float64), self.batch.v.astype(np.float64)
        gravity = self._obs[:, 6:9].astype(np.float64)
        contact = self._obs[:, 42:44] > 0.5
        stance = self.phase() < self.stance_share
        feet = self.batch.observe()  # (N, 2, 13): world position, quaternion, linear and angular velocity
        foot_speed2 = np.sum(feet[:, :, 7:10].astype(np.float64) ** 2, axis=2)
        gaps = self.batch.contact_gaps
        clearance = np.stack([gaps[:, slots].min(axis=1) for slots in self.foot_slots], axis=1).astype(np.float64)
        reward = (self._tracking_terms(v, gravity)
                  - 10.0 * (q[:, 2] - self.base_height_target) ** 2
                  - 2.5e-7 * np.sum(self.batch.qdd[:, self.legs].astype(np.float64) ** 2, axis=1)
                  - 0.01 * np.sum((actions - self._previous_action).astype(np.float64) ** 2, axis=1)
                  + 0.15
                  - np.sum((q[:, 1 + self.hips] - self.reference[1 + self.hips]) ** 2, axis=1)
                  - 0.2 * np.sum(contact * foot_speed2, axis=1)
                  - 20.0 * np.sum(~contact * (clearance - self.swing_height_target) ** 2, axis=1)
                  + 0.18 * np.sum(contact == stance, axis=1)) * self.dt
        terminated = np.any(self.batch.contact_flags[:, self.not_feet], axis=1) | (q[:, 2] < 0.6)
        return reward, terminated
