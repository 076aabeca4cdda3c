"""MJCF from Python: batchdyn.load of MuJoCo's XML, checked against the `mujoco` package on the
same file (qacc of the rigid-body dynamics with damping, on random states), and what the model
carries from the file (actuators, keyframes, sites, time step, notes)."""
import os

import mujoco
import numpy as np
import pytest

import batchdyn
from conftest import ROBOTS

MJCF = os.path.join(ROBOTS, "mjcf")
FILES = ["unitree_go2/scene.xml", "unitree_h1/scene.xml", "unitree_g1/scene_29dof.xml"]


def mujoco_model(path):
    """MuJoCo's model of the file, compiled as batchdyn compiles it (visual geoms discarded), with
    contacts, limits, friction loss and actuation off: the rigid-body dynamics with damping."""
    spec = mujoco.MjSpec.from_file(path)
    spec.compiler.discardvisual = True
    m = spec.compile()
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
                           | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS | mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    return m


def random_qpos(m, rng):
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a:a + 3] = rng.uniform(-1, 1, 3)
            quat = rng.normal(size=4)
            qpos[a + 3:a + 7] = quat / np.linalg.norm(quat)
        elif m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            lo, hi = m.jnt_range[j] if m.jnt_limited[j] else (-1.0, 1.0)
            qpos[a] = rng.uniform(lo, hi)
    return qpos


@pytest.mark.parametrize("file", FILES)
def test_mjcf_forward_dynamics_equal_mujoco_qacc(file):
    path = os.path.join(MJCF, file)
    model = batchdyn.load(path)
    m = mujoco_model(path)
    d = mujoco.MjData(m)
    assert (model.nq, model.nv) == (m.nq, m.nv)
    damping = np.asarray(model.damping)
    rng = np.random.default_rng(1)
    for _ in range(5):
        d.qpos[:] = random_qpos(m, rng)
        d.qvel[:] = rng.uniform(-1, 1, m.nv)
        mujoco.mj_forward(m, d)
        q = batchdyn.q_from_mujoco(model, d.qpos)
        v = batchdyn.v_from_mujoco(model, q, d.qvel)
        qdd = batchdyn.aba(model, q, v, -damping * v)  # MuJoCo's damping is the passive force -d qvel
        qacc = batchdyn.a_to_mujoco(model, q, v, qdd)
        assert np.max(np.abs(qacc - d.qacc)) <= 1e-9 * max(1.0, np.max(np.abs(d.qacc)))


def test_mjcf_model_carries_actuators_keyframes_sites_and_time_step():
    model = batchdyn.load(os.path.join(MJCF, "unitree_go2/scene.xml"))
    assert model.timestep == 0.002
    assert [a["name"] for a in model.actuators][:3] == ["FR_hip", "FR_thigh", "FR_calf"]
    calf = model.actuators[2]
    assert (calf["kind"], calf["joint"], calf["ctrl_range"]) == ("motor", "FR_calf_joint", (-45.43, 45.43))
    home = model.keyframes["home"]
    assert home["q"][2] == 0.27 and home["q"][6] == 1.0 and len(home["ctrl"]) == 12
    assert model.site_names == ["imu"]
    assert model.reference_configuration[2] == 0.445
    info = model.info()
    assert info["timestep"] == 0.002 and len(info["actuators"]) == 12 and info["keyframes"][0]["name"] == "home"
    assert any("joint limits are the engine's limit stage" in note for note in model.load_notes)
    assert batchdyn.mujoco_library_path().endswith("libmujoco.so." + batchdyn.mujoco_header_version())


def test_mjcf_unsupported_element_raises_naming_element_and_line(tmp_path):
    path = tmp_path / "tendon.xml"
    path.write_text("""<mujoco>
  <worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>
  <tendon>
    <fixed name="t"><joint joint="j" coef="1"/></fixed>
  </tendon>
</mujoco>""")
    with pytest.raises(batchdyn.Error, match=r'tendon\.xml: <tendon name="t"> \(line 4\)'):
        batchdyn.load(path)


def test_mjcf_root_option_is_refused():
    with pytest.raises(batchdyn.Error, match="sets its own root"):
        batchdyn.load(os.path.join(MJCF, "unitree_go2/go2.xml"), root="free")


def test_self_collision_is_counted_when_off_and_pairs_the_robots_geoms_when_asked_for():
    path = os.path.join(MJCF, "unitree_go2/scene.xml")
    off, on = batchdyn.load(path), batchdyn.load(path, self_collision=True)
    skipped = off.info()["contacts"]["skipped"]
    assert len(skipped) == 1 and skipped[0].startswith("210 pairs") and "self_collision=True" in skipped[0]
    assert on.info()["contacts"]["skipped"] == []
    # Go2's legs and body: 240 more candidates (a pair of boxes has four, the others one)
    assert batchdyn.Batch(on, 1).contact_candidates == batchdyn.Batch(off, 1).contact_candidates + 240


def test_ctrl_drives_the_files_motors_clamped_to_their_control_range():
    model = batchdyn.load(os.path.join(MJCF, "unitree_go2/scene.xml"))
    batch = batchdyn.Batch(model, 3, dtype=np.float64, threads=1)
    assert batch.nu == 12 and batch.ctrl.shape == (3, 12)
    batch.control_mode = "ctrl"
    batch.q[:] = model.keyframes["home"]["q"]
    batch.ctrl[:] = np.linspace(-60.0, 60.0, 36).reshape(3, 12)
    batch.forward_dynamics()
    dof = [a["dof"] for a in model.actuators]  # the file lists FR before FL: ctrl's order is the actuators'
    assert sorted(dof) == list(range(6, 18)) and dof != sorted(dof)
    limit = np.array([a["ctrl_range"][1] for a in model.actuators])
    np.testing.assert_array_equal(batch.actuator_torques[:, dof], np.clip(batch.ctrl, -limit, limit))
    batch.ctrl[1, 4] = np.nan
    batch.forward_dynamics()
    assert batch.status[1] != 0 and batch.status[0] == 0 and "ctrl[4]" in batch.status_message(1)


@pytest.mark.parametrize("file", ["unitree_go2/scene.xml", "unitree_h1/scene.xml"])
def test_sense_reads_the_files_imu_joint_and_motor_sensors_as_mujoco_does(file):
    path = os.path.join(MJCF, file)
    model = batchdyn.load(path)
    kinds = {s["kind"] for s in model.sensors}
    assert {"jointpos", "jointvel", "jointactuatorfrc", "framequat", "gyro", "accelerometer"} <= kinds
    m = mujoco_model(path)
    m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)  # the motors driven by the same ctrl
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    batch = batchdyn.Batch(model, 4, dtype=np.float64, threads=1)
    batch.friction_loss = False  # off in MuJoCo too
    batch.control_mode = "ctrl"
    states = [(random_qpos(m, rng), rng.uniform(-1, 1, m.nv), rng.normal(0.0, 20.0, m.nu)) for _ in range(4)]
    for e, (qpos, qvel, ctrl) in enumerate(states):
        q = batchdyn.q_from_mujoco(model, qpos)
        batch.q[e], batch.v[e], batch.tau[e], batch.ctrl[e] = q, batchdyn.v_from_mujoco(model, q, qvel), 0.0, ctrl
    batch.forward_dynamics()
    readings = batch.sense()
    assert readings.shape == (4, sum(s["size"] for s in model.sensors))
    for e, (qpos, qvel, ctrl) in enumerate(states):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl
        mujoco.mj_forward(m, d)
        for s in model.sensors:
            i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, s["name"])
            theirs = d.sensordata[m.sensor_adr[i]:m.sensor_adr[i] + m.sensor_dim[i]]
            if s["kind"] == "framequat" and theirs[0] < 0:
                theirs = -theirs  # the same rotation: batchdyn's has w >= 0
            np.testing.assert_allclose(readings[e, s["address"]:s["address"] + s["size"]], theirs, atol=1e-11, err_msg=s["name"])


def test_sensors_the_engine_does_not_compute_are_listed_in_the_load_notes(tmp_path):
    xml = tmp_path / "sensors.xml"
    xml.write_text('<mujoco><worldbody><body name="b"><joint name="j"/><geom size="0.1"/><site name="s"/></body>'
                   '</worldbody><sensor><jointpos joint="j"/><force site="s"/><force site="s"/><touch site="s"/>'
                   '<framepos objtype="body" objname="b"/></sensor></mujoco>')
    model = batchdyn.load(str(xml))
    assert [s["kind"] for s in model.sensors] == ["jointpos", "touch"]
    assert "2 sensor(s) not computed: force (not computed by batchdyn)" in model.load_notes
    assert any("framepos (on a body's inertial frame" in note for note in model.load_notes)


def test_a_touch_sensor_reads_the_weight_of_a_ball_resting_on_the_floor(tmp_path):
    xml = tmp_path / "ball.xml"
    xml.write_text('<mujoco><worldbody><geom type="plane" size="1 1 0.1"/><body pos="0 0 0.1"><freejoint/>'
                   '<geom size="0.1" mass="2"/><site name="s" size="0.12"/></body></worldbody>'
                   '<sensor><touch name="t" site="s"/></sensor></mujoco>')
    model = batchdyn.load(str(xml))
    batch = batchdyn.Batch(model, 3)
    batch.q[:] = model.reference_configuration
    assert np.all(batch.sense() == 0.0)  # no step yet: no contact force
    for _ in range(500):
        batch.step(0.002)
    np.testing.assert_allclose(batch.sense()[:, 0], 2 * 9.81, rtol=1e-6)


def test_go2s_sensors_load_in_the_files_order_all_computed():
    model = batchdyn.load(os.path.join(MJCF, "unitree_go2/scene.xml"))
    assert [s["name"] for s in model.sensors][:2] == ["FR_hip_pos", "FR_thigh_pos"]
    assert [s["kind"] for s in model.sensors].count("jointactuatorfrc") == 12
    assert not any("sensor" in note for note in model.load_notes)
