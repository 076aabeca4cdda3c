"""Videos of a rollout: MuJoCo's offscreen renderer draws the MJCF at batchdyn's states."""
import os

import numpy as np
import pytest

import batchdyn
from conftest import ROBOTS

GO2 = os.path.join(ROBOTS, "mjcf", "unitree_go2", "scene.xml")  # its visual meshes are not shipped


def frames_or_skip(q, **options):
    from batchdyn import viewer

    try:
        return viewer.render_frames(GO2, q, width=160, height=120, **options)
    except RuntimeError as error:  # no OpenGL context on this machine (EGL / OSMesa missing)
        pytest.skip(str(error))


def test_the_robot_is_drawn_where_its_state_puts_it():
    home = batchdyn.load(GO2).keyframes["home"]["q"]
    raised, turned = home.copy(), home.copy()
    raised[2] += 0.3
    turned[9] = -1.0  # FL knee straighter
    frames = frames_or_skip(np.stack([home, home, raised, turned]), track_body=0, distance=2.0)
    assert frames.shape == (4, 120, 160, 3) and frames.dtype == np.uint8
    np.testing.assert_array_equal(frames[0], frames[1])  # the same state, the same picture
    assert frames[0].std() > 5  # not a blank image
    changed_by_height = np.mean(np.any(frames[2] != frames[0], axis=-1))
    changed_by_knee = np.mean(np.any(frames[3] != frames[0], axis=-1))
    assert changed_by_height > 0.02 and 0 < changed_by_knee < changed_by_height


def test_a_recording_is_a_gif_with_a_frame_per_state(tmp_path):
    from PIL import Image

    from batchdyn import viewer

    home = batchdyn.load(GO2).keyframes["home"]["q"]
    states = np.tile(home, (5, 1))
    states[:, 0] += np.linspace(0.0, 0.2, 5)
    frames = frames_or_skip(states)
    path = viewer.write_gif(frames, tmp_path / "walk.gif", fps=20)
    with Image.open(path) as gif:
        assert gif.n_frames == 5 and gif.size == (160, 120) and gif.info["duration"] == 50


def test_it_draws_without_a_screen_even_when_mujoco_was_imported_first():
    import subprocess
    import sys

    code = ("import os, mujoco, numpy as np, batchdyn\n"  # mujoco first, MUJOCO_GL unset: it picks GLFW
            "from batchdyn import viewer\n"
            f"home = batchdyn.load({GO2!r}).keyframes['home']['q']\n"
            f"print(viewer.render_frames({GO2!r}, home[None], width=32, height=24).shape)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "DISPLAY", "PYOPENGL_PLATFORM")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and "(1, 24, 32, 3)" in out.stdout, out.stdout + out.stderr


def test_states_of_the_wrong_width_are_refused_naming_nq():
    with pytest.raises(ValueError, match="nq = 19"):
        frames_or_skip(np.zeros((3, 18)))
