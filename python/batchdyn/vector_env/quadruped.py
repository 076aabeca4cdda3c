"""Quadruped (Unitree A1, URDF) and Go2Walk (Unitree Go2, MJCF): walking at a commanded forward
speed, with frictional contact."""
import numpy as np

from .. import load
from .base import AutoresetMode, VectorEnv
from .legged import LeggedTask
from ..models import model_path


class Quadruped(LeggedTask, VectorEnv):
    """Walk forward at a commanded speed: Unitree A1 (models/a1.urdf, 12 joints, 13.7 kg) on
    flat ground with frictional contact (models/a1_contacts.json: four 2 cm sphere feet and
    the trunk box, mu = 1), in the spirit of legged_gym's A1 flat task (Rudin et al. 2022).

    * Control: PD position targets, kp = 20 N m/rad, kd = 0.5 N m s/rad, torques clamped to
      the URDF's 33.5 N m; target = default pose + action_scale x action (action in [-1, 1]^12).
      dt = 0.02 s per step in 4 substeps of 5 ms (contact and PD every substep).
    * Command: forward speed v_cmd ~ U[command_range] m/s in the base frame, drawn per episode;
      the sideways speed and the yaw rate are commanded to 0.
    * Observation (50): base linear velocity x 2 and angular velocity x 0.25 (base frame),
      gravity in the base frame, v_cmd x 2, joint positions - default, joint velocities x 0.05,
      the previous action, foot contacts (normal force > 1 N) as 0/1.
    * Reward per step (x dt, legged_gym's terms and weights): exp(-|v_xy - (v_cmd, 0)|^2 / 0.25)
      + 0.5 exp(-w_z^2 / 0.25) - 2 v_z^2 - 0.05 |w_xy|^2 - |g_xy|^2 - 2e-4 |tau|^2
      - 2.5e-7 |qdd|^2 - 0.01 |a - a_prev|^2 + sum over feet touching down of (air time - 0.5 s)
      (only when v_cmd > 0.1).
    * Termination: the trunk within the contact margin of the ground (a fall), or a failed
      environment; episodes last at most 1000 steps (20 s).
    * Resets: the default pose 0.32 m above the ground, perturbed by +-noise (positions,
      orientation, joints) and +-velocity_noise.
    * terrain_roughness > 0: rolling hills (a height field shared by every environment, heights
      within +-terrain_roughness m, kernels/contact/terrain.hpp) instead of the flat ground; each episode
      starts at a random place on them. The observation does not include the terrain.

    * Randomisation per episode (off by default) and action_delay (0 by default): see
      LeggedTask (vector_env/legged.py).

    Extra info after each step: info["forward_velocity"], info["command"] and
    info["contact_iterations"] (the ADMM's iterations in the step's last substep), each (N,)."""

    obs_dim = 50
    act_dim = 12
    max_episode_steps = 1000
    # FL, FR, RL, RR: hip, thigh, calf (the URDF's depth-first joint order), legged_gym's defaults
    default_joint_positions = np.array([0.1, 0.8, -1.5, -0.1, 0.8, -1.5, 0.1, 1.0, -1.5, -0.1, 1.0, -1.5])
    kp, kd = 20.0, 0.5
    feet = slice(0, 4)    # contact candidates of the feet (models/a1_contacts.json order)
    trunk = slice(4, 12)  # the trunk box's 8 corners
    foot_names, feet_observed = ("FL", "FR", "RL", "RR"), slice(46, 50)

    training = dict(envs=4096, steps=24, iterations=1000, hidden=(128, 128), activation="elu", lr=1e-3, epochs=5,
                    minibatches=4, reward_scale=1.0, log_std=-0.7, entropy=0.01, desired_kl=0.01)

    def __init__(self, num_envs=4096, threads=0, dtype=np.float32, action_scale=0.5, command_range=(0.0, 1.0),
                 noise=0.05, velocity_noise=0.1, terrain_roughness=0.0, friction_range=None, added_mass_range=None,
                 motor_strength_range=None, action_delay=0, autoreset_mode=AutoresetMode.SAME_STEP, copy=True):
        model = self.load_model()
        super().__init__(model, num_envs, 0.02, 4, threads, dtype, autoreset_mode, copy)
        self.action_scale, self.command_range = float(action_scale), tuple(command_range)
        self.terrain_roughness = float(terrain_roughness)
        if self.terrain_roughness > 0:
            self._make_hills(self.terrain_roughness)
        self.noise, self.velocity_noise = float(noise), float(velocity_noise)
        self.reference = self.reference_configuration(model)
        self.batch.set_reference_configuration(self.reference)
        self.batch.set_pd_gains([0.0] * 6 + [self.kp] * 12, [0.0] * 6 + [self.kd] * 12)
        self.batch.control_mode = "pd"
        self._set_up_options(friction_range, added_mass_range, motor_strength_range, action_delay, np.arange(6, 18))
        self.command = np.zeros(self.num_envs, dtype=np.float32)
        self.last_action = np.zeros((self.num_envs, 12), dtype=np.float32)
        self.air_time = np.zeros((self.num_envs, 4))
        self._previous_action = np.zeros((self.num_envs, 12), dtype=np.float32)

    @classmethod
    def load_model(cls):
        """The robot: A1's URDF with a free root and its contact file."""
        return load(model_path("a1.urdf"), root="free", contacts=model_path("a1_contacts.json"))

    def reference_configuration(self, model):
        """The reset pose (nq): the base 0.32 m up, level, the joints at default_joint_positions."""
        reference = np.zeros(model.nq)
        reference[2], reference[6], reference[7:] = 0.32, 1.0, self.default_joint_positions
        return reference

    def _make_hills(self, roughness):
        """Rolling hills shared by every environment: a 40 m x 40 m grid (0.1 m spacing) around the
        origin, a sum of random sines of 1-4 m wavelength, heights within +-roughness m."""
        rng = np.random.default_rng(12345)
        self.terrain_spacing, self.terrain_origin, points = 0.1, (-20.0, -20.0), 401
        x, y = np.meshgrid(np.arange(points) * 0.1 - 20.0, np.arange(points) * 0.1 - 20.0)  # (ny, nx)
        h = np.zeros_like(x)
        for _ in range(8):
            k = rng.uniform(2 * np.pi / 4.0, 2 * np.pi / 1.0, size=2) * rng.choice([-1, 1], size=2)
            h += np.sin(k[0] * x + k[1] * y + rng.uniform(0, 2 * np.pi))
        self.terrain = roughness * h / np.abs(h).max()
        self.batch.set_terrain(self.terrain, self.terrain_spacing, self.terrain_origin)

    def terrain_height(self, x, y):
        """The ground's height under world points (x, y): the hills' (bilinear, as the engine's) or 0."""
        if self.terrain_roughness <= 0:
            return np.zeros(np.broadcast(x, y).shape)
        u = np.clip((np.asarray(x) - self.terrain_origin[0]) / self.terrain_spacing, 0, self.terrain.shape[1] - 1)
        w = np.clip((np.asarray(y) - self.terrain_origin[1]) / self.terrain_spacing, 0, self.terrain.shape[0] - 1)
        i, j = np.minimum(u.astype(int), self.terrain.shape[1] - 2), np.minimum(w.astype(int), self.terrain.shape[0] - 2)
        a, b, t = u - i, w - j, self.terrain
        return (1 - b) * ((1 - a) * t[j, i] + a * t[j, i + 1]) + b * ((1 - a) * t[j + 1, i] + a * t[j + 1, i + 1])

    def reset_envs(self, envs, keys):
        self.batch.reset(envs, seeds=keys, noise=self.noise, velocity_noise=self.velocity_noise)
        self.batch.target[envs] = 0.0
        self.batch.target[envs, 6:] = self.default_joint_positions
        if self.terrain_roughness > 0:  # start anywhere on the hills, the reference height above them
            start = -15.0 + 30.0 * self.uniform(keys, 1, 2)
            self.batch.q[envs, 0:2] = start
            self.batch.q[envs, 2] += self.terrain_height(start[:, 0], start[:, 1]).astype(self.batch.q.dtype)
        low, high = self.command_range
        self.command[envs] = low + (high - low) * self.uniform(keys, 2, 1)[:, 0]
        self.last_action[envs] = 0.0
        self.air_time[envs] = 0.0
        self._randomise(envs, keys)

    def apply_actions(self, actions):
        self._previous_action[:] = self.last_action
        self.last_action[:] = actions
        self.batch.target[:, 6:] = self.default_joint_positions + self.action_scale * self._delay(actions)

    def observe(self, out, envs=None):
        rows = slice(None) if envs is None else envs
        q, v = self.batch.q[rows], self.batch.v[rows]
        o = out if envs is None else np.empty((len(envs), self.obs_dim), dtype=out.dtype)
        self._observe_base(o, q, v, rows)
        np.subtract(q[:, 7:], self.default_joint_positions, out=o[:, 10:22])
        np.multiply(v[:, 6:], 0.05, out=o[:, 22:34])
        o[:, 34:46] = self.last_action[rows]
        o[:, 46:50] = self.batch.contact_forces[rows, self.feet, 2] > 1.0
        if envs is not None:
            out[envs] = o

    def rewards_and_terminations(self, actions):
        v = self.batch.v.astype(np.float64)
        gravity = self._obs[:, 6:9].astype(np.float64)
        command = self.command.astype(np.float64)
        contact = self.batch.contact_forces[:, self.feet, 2] > 1.0
        first_contact = contact & (self.air_time > 0)
        self.air_time += self.dt
        air_reward = np.sum((self.air_time - 0.5) * first_contact, axis=1) * (command > 0.1)
        self.air_time[contact] = 0.0
        reward = (self._tracking_terms(v, gravity)
                  - 2e-4 * np.sum(self.batch.actuator_torques[:, 6:].astype(np.float64) ** 2, axis=1)  # the engine's PD, last substep
                  - 2.5e-7 * np.sum(self.batch.qdd[:, 6:].astype(np.float64) ** 2, axis=1)
                  - 0.01 * np.sum((actions - self._previous_action).astype(np.float64) ** 2, axis=1)
                  + air_reward) * self.dt
        terminated = np.any(self.batch.contact_flags[:, self.trunk], axis=1)
        return reward, terminated


class Go2Walk(Quadruped):
    """Walk forward at a commanded speed: Unitree Go2 from its MJCF (models/unitree_go2, as
    unitree_mujoco ships it: 12 joints, 15.2 kg, the file's armature and damping), the task and
    rewards of Quadruped.

    * The robot file gives the reset pose (its keyframe "home": base 0.27 m up, joints 0 / 0.9 /
      -1.8 rad), the joints' damping, armature and friction loss (0.2 N m, docs/mjcf.md), and the
      torque limits (its motors' control ranges, 23.7 N m at the hips and thighs, 45.43 N m at the
      knees: Model.motor_torque_limits).
    * Control: PD position targets around the keyframe, kp = 35 N m/rad, kd = 0.5 N m s/rad
      (MuJoCo Playground's Go1 gains; at 20, unitree_rl_gym's, Go2 sits back from the keyframe's
      crouch and tips over within 0.7 s), action_scale 0.25 rad; dt = 0.02 s in 4 substeps of 5 ms.
    * Contact: the four 22 mm foot spheres (the file's friction 0.4) and the trunk box
      (models/go2_walk_contacts.json). The file's other collision geoms (hips, thighs, calves:
      frictionless in the file) are left out of the task, as MuJoCo Playground's Go1 task keeps
      its feet only; the trunk touching the ground ends the episode.
    * Options as Quadruped's: terrain_roughness, friction_range, added_mass_range,
      motor_strength_range, action_delay."""

    kp, kd = 35.0, 0.5
    # Half Quadruped's environments and its networks' widths: on two cores the PPO update, not the
    # simulation, set the pace, and twice the updates per env-step learned to walk in ~1 min of
    # wall clock where Quadruped's settings stood still after 2 (docs/time_to_walk.md).
    training = dict(Quadruped.training, envs=2048, hidden=(64, 64))

    def __init__(self, num_envs=4096, threads=0, dtype=np.float32, action_scale=0.25, **kwargs):
        super().__init__(num_envs, threads, dtype, action_scale, **kwargs)
        self.batch.effort_limits = list(self.model.motor_torque_limits)

    @property
    def robot_file(self):
        """The MJCF the task loads: what batchdyn.viewer draws."""
        return model_path("unitree_go2/scene.xml")

    @classmethod
    def load_model(cls):
        """Go2's MJCF with the task's contact geometry (feet and trunk)."""
        return load(model_path("unitree_go2/scene.xml"), contacts=model_path("go2_walk_contacts.json"))

    def reference_configuration(self, model):
        """The file's keyframe "home"."""
        home = model.keyframes["home"]["q"]
        self.default_joint_positions = np.array(home[7:])
        return np.array(home)
