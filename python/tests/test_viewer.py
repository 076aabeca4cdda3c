"""Watching a rollout: MuJoCo's offscreen renderer draws the MJCF at batchdyn's states (GIFs), and
the web page draws it in a browser (opened here in headless Chromium)."""
import os
import shutil
import subprocess

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


# --- The web page ---

def browser_or_skip():
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium (./build.sh test installs Debian's chromium)")
    return browser


def open_page(path, query, mode, out=None):
    """Opens the page in headless Chromium (software WebGL): a screenshot (640 x 400 RGB array) or
    the DOM after the page's script ran."""
    command = [browser_or_skip(), "--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
               "--window-size=640,400", "--virtual-time-budget=4000", f"--user-data-dir={os.path.dirname(path)}/profile"]
    url = f"file://{path}?{query}"
    if mode == "dom":
        done = subprocess.run(command + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout
    from PIL import Image

    done = subprocess.run(command + [f"--screenshot={out}", url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and os.path.exists(out), done.stderr[-2000:]
    with Image.open(out) as picture:
        return np.asarray(picture.convert("RGB"))


def go2_rollout():
    """Two environments over three frames: 0 stands at home and rises 0.3 m; 1 crouches."""
    model = batchdyn.load(GO2)
    home = model.keyframes["home"]["q"]
    q = np.tile(home, (3, 2, 1))
    q[:, 0, 2] += np.array([0.0, 0.15, 0.3])
    q[:, 1, [9, 12, 15, 18]] = -2.5
    return model, q


def test_the_web_page_draws_the_robot_in_a_headless_browser(tmp_path):
    from batchdyn import viewer

    model, q = go2_rollout()
    page = viewer.write_html(GO2, q, tmp_path / "go2.html", dt=0.02)
    dom = open_page(page, "envs=0&frame=1", "dom")
    assert 'data-webgl="1"' in dom and 'data-frame="1"' in dom and 'data-shown="0"' in dom
    assert int(dom.split('data-geoms="')[1].split('"')[0]) > 20  # Go2's collision geoms, twice, and the floor
    robot = open_page(page, "envs=0&frame=0", "png", tmp_path / "robot.png")
    empty = open_page(page, "envs=&frame=0", "png", tmp_path / "empty.png")
    risen = open_page(page, "envs=0&frame=2", "png", tmp_path / "risen.png")
    assert robot.shape == (400, 640, 3) and robot.std() > 5
    drawn = np.mean(np.any(np.abs(robot.astype(int) - empty) > 30, axis=-1))
    assert drawn > 0.01  # the robot covers more than 1 % of the picture
    moved = np.mean(np.any(np.abs(risen.astype(int) - robot) > 30, axis=-1))
    assert moved > 0.005  # the time slider's frame 2 has it elsewhere (the camera follows it up)


def test_the_web_page_draws_contact_forces_where_the_engine_reports_them(tmp_path):
    from batchdyn import viewer

    model, q = go2_rollout()
    candidates = len(model.info()["contacts"]["candidates"])
    points = batchdyn.candidate_states(model, q[0, 0])["points"]
    feet = np.argsort(points[:, 2])[:4]  # the lowest candidates: the feet
    forces = np.zeros((3, 2, candidates, 3))
    forces[:, :, feet, 2] = 40.0  # N, up
    with_forces = viewer.write_html(GO2, q, tmp_path / "forces.html", contact_forces=forces)
    without = viewer.write_html(GO2, q, tmp_path / "none.html", contact_forces=np.zeros_like(forces))
    a = open_page(with_forces, "envs=0&frame=0", "png", tmp_path / "a.png")
    b = open_page(without, "envs=0&frame=0", "png", tmp_path / "b.png")
    arrows = np.any(np.abs(a.astype(int) - b) > 30, axis=-1)
    assert 0.0002 < np.mean(arrows) < 0.05  # four arrows (a line and a cone each: a few hundred pixels)
    red = (a[..., 0].astype(int) - a[..., 2]) > 80
    assert np.mean(red[arrows]) > 0.3  # and they are red


def test_the_candidates_contact_points_lie_on_the_feet_at_the_ground():
    model, q = go2_rollout()
    states = batchdyn.candidate_states(model, q[0, 0])
    assert states["points"].shape == (len(model.info()["contacts"]["candidates"]), 3)
    lowest = np.argmin(states["gaps"])
    # at home the feet touch the floor: the lowest point is within 2 cm of z = 0, its gap is its height
    assert abs(states["points"][lowest, 2]) < 0.02
    assert states["gaps"][lowest] == pytest.approx(states["points"][lowest, 2], abs=1e-9)
    np.testing.assert_allclose(states["normals"][lowest], [0, 0, 1])


def test_write_html_refuses_bad_input_and_names_what_to_install(tmp_path):
    from batchdyn import viewer

    model, q = go2_rollout()
    with pytest.raises(ValueError, match="nq = 19"):
        viewer.write_html(GO2, q[..., :18], tmp_path / "x.html")
    with pytest.raises(ValueError, match="contact_forces must be"):
        viewer.write_html(GO2, q, tmp_path / "x.html", contact_forces=np.zeros((3, 2, 5, 3)))
    with pytest.raises(ValueError, match="environment 4"):
        viewer.write_html(GO2, q, tmp_path / "x.html", envs=[0, 4])
    with pytest.raises(ValueError, match="dt must be > 0"):
        viewer.write_html(GO2, q, tmp_path / "x.html", dt=0.0)
    with pytest.raises(FileNotFoundError, match="libjs-three"):
        viewer.write_html(GO2, q, tmp_path / "x.html", three_js=str(tmp_path / "missing.js"))
    assert not (tmp_path / "x.html").exists()
