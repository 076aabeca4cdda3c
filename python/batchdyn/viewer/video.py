"""Videos of a rollout: MuJoCo's offscreen renderer draws the robot's own MJCF at batchdyn's states.

MuJoCo renders the same file batchdyn loaded, at each q turned into its qpos (q_to_mujoco), so
what is drawn is the file's geometry: its visual meshes where the file's assets are present,
otherwise (discard_visual=True) its collision geoms. The camera looks at a body (the root by
default). Rendering needs an OpenGL context without a screen: MUJOCO_GL=egl (Mesa's EGL, the
default set here when nothing is set) or osmesa, chosen before `mujoco` is first imported.
"""
import os

import numpy as np

from .. import load, q_to_mujoco
from .mujoco_model import drawable_model, hide_static_geoms, mujoco_module


def render_frames(mjcf_path, q, width=480, height=360, discard_visual=None, track_body=1, distance=1.6, azimuth=140.0,
                  elevation=-20.0, static_geoms=False):
    """The frames (T, height, width, 3) uint8 of batchdyn states q (T, nq; Model.nq of the file)
    drawn by MuJoCo from the same MJCF. discard_visual: draw the collision geoms instead of the
    visual ones (None: only when the file's visual meshes are missing). The camera tracks body
    `track_body` (MuJoCo's index; 1 = the first body under the world; 0 = the world's
    origin) from `distance` m. static_geoms: draw the world body's geoms other than the ground,
    with which batchdyn does not collide. The same state gives the same picture.
    Raises ValueError for q of the wrong shape, RuntimeError when no OpenGL context can be made."""
    mujoco = mujoco_module()
    model = load(mjcf_path)
    q = np.asarray(q, dtype=np.float64)
    if q.ndim != 2 or q.shape[1] != model.nq:
        raise ValueError(f"render_frames: q must be (T, nq = {model.nq}) batchdyn states, got shape {q.shape}")
    m, discard_visual = drawable_model(mjcf_path, discard_visual)
    if not static_geoms:
        hide_static_geoms(m)
    d = mujoco.MjData(m)
    try:
        renderer = mujoco.Renderer(m, height, width)
    except Exception as error:  # no display, no EGL / OSMesa
        raise RuntimeError(f"render_frames: MuJoCo could not make an OpenGL context (MUJOCO_GL="
                           f"{os.environ.get('MUJOCO_GL')}): {error}") from error
    options = mujoco.MjvOption()
    if discard_visual:
        options.geomgroup[:] = 1  # every group: collision geoms are often in group 3, hidden by default
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE  # aimed at the body each frame (MuJoCo's tracking camera lags behind it)
    camera.distance, camera.azimuth, camera.elevation = distance, azimuth, elevation
    frames = np.empty((len(q), height, width, 3), dtype=np.uint8)
    try:
        # A renderer's first picture differs from its next ones of the same scene in a few pixels
        # on the horizon (MuJoCo 4.0.1 with Mesa's EGL): the first state is drawn once more, first,
        # and that picture dropped, so that a state always gives the same picture.
        for t, state in enumerate(np.concatenate([q[:1], q]), start=-1):
            d.qpos[:] = q_to_mujoco(model, state)
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)  # the lights and cameras that track a subtree's centre of mass read it
            mujoco.mj_camlight(m, d)
            camera.lookat[:] = d.xpos[int(track_body)]
            renderer.update_scene(d, camera=camera, scene_option=options)
            picture = renderer.render()
            if t >= 0:
                frames[t] = picture
    finally:
        renderer.close()
    return frames


def write_gif(frames, path, fps=25):
    """Writes frames (T, h, w, 3) uint8 as an animated GIF at `fps` frames per second (Pillow)."""
    from PIL import Image

    images = [Image.fromarray(frame) for frame in frames]
    if not images:
        raise ValueError("write_gif: no frames")
    images[0].save(str(path), save_all=True, append_images=images[1:], duration=max(1, int(round(1000 / fps))), loop=0,
                   optimize=False)
    return str(path)


def record(mjcf_path, q, path, fps=25, **camera):
    """render_frames(mjcf_path, q, **camera) written to `path` as a GIF; returns the path."""
    return write_gif(render_frames(mjcf_path, q, **camera), path, fps)
