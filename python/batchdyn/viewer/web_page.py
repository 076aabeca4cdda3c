"""A rollout as one self-contained web page: the robot's MJCF geometry at batchdyn's states,
any number of environments (chosen ones shown), contact points and forces, a time slider.

    from batchdyn import viewer
    states, forces = [], []                       # after each control step
    for _ in range(250):
        env.step(actions)
        states.append(env.batch.q.copy()); forces.append(env.batch.contact_forces.copy())
    viewer.write_html(env.robot_file, states, "walk.html", dt=env.dt, contact_forces=forces)

The page is one HTML file (three.js inlined, no network): open it in any browser. The bodies'
poses come from MuJoCo's kinematics of the same file at each q (q_to_mujoco); the contact
points from batchdyn.candidate_states at that q, drawn where the recorded force is not zero.
three.js comes from Debian's libjs-three (/usr/share/javascript/three), $BATCHDYN_THREE_JS, or
the `three_js` argument.
"""
import base64
import json
import os
from pathlib import Path

import numpy as np

from .. import candidate_states, load, q_to_mujoco
from .mujoco_model import drawable_model, is_static_obstacle, mujoco_module

THREE_JS_PLACES = ("/usr/share/javascript/three/three.min.js", "/usr/share/nodejs/three/build/three.min.js")


def find_three_js(three_js=None):
    """The three.js file the page inlines: `three_js`, $BATCHDYN_THREE_JS, or Debian's.
    Raises FileNotFoundError saying how to get it."""
    candidates = [three_js] if three_js else [os.environ.get("BATCHDYN_THREE_JS")] + list(THREE_JS_PLACES)
    for path in candidates:
        if path and Path(path).is_file():
            return Path(path)
    raise FileNotFoundError("write_html: three.js was not found (looked at " + ", ".join(str(c) for c in candidates if c) +
                            "); install Debian's libjs-three (apt install libjs-three), or give its three.min.js as "
                            "three_js= or $BATCHDYN_THREE_JS")


def _floats(array):
    return base64.b64encode(np.ascontiguousarray(array, dtype="<f4").tobytes()).decode("ascii")


def _ints(array):
    return base64.b64encode(np.ascontiguousarray(array, dtype="<i4").tobytes()).decode("ascii")


def _geometry(m, discard_visual, static_geoms):
    """The geoms to draw (MuJoCo's default groups 0-2, or all of them when drawing the collision
    geoms; on the world body, the ground alone unless static_geoms), their meshes and height
    fields, in the page's format."""
    geoms, meshes, hfields = [], {}, {}
    for g in range(m.ngeom):
        if not discard_visual and m.geom_group[g] > 2:
            continue
        if is_static_obstacle(m, g) and not static_geoms:
            continue
        rgba = m.mat_rgba[m.geom_matid[g]] if m.geom_matid[g] >= 0 else m.geom_rgba[g]
        if rgba[3] == 0:
            continue
        geom = {"body": int(m.geom_bodyid[g]), "type": int(m.geom_type[g]), "size": m.geom_size[g].tolist(),
                "pos": m.geom_pos[g].tolist(), "quat": m.geom_quat[g].tolist(), "rgba": [float(c) for c in rgba]}
        data = int(m.geom_dataid[g])
        if m.geom_type[g] == 7 and data >= 0:  # mesh
            if data not in meshes:
                v0, nv = m.mesh_vertadr[data], m.mesh_vertnum[data]
                f0, nf = m.mesh_faceadr[data], m.mesh_facenum[data]
                meshes[data] = {"vertices": _floats(m.mesh_vert[v0:v0 + nv]), "faces": _ints(m.mesh_face[f0:f0 + nf])}
            geom["mesh"] = str(data)
        elif m.geom_type[g] == 1 and data >= 0:  # height field
            if data not in hfields:
                a, rows, cols = m.hfield_adr[data], m.hfield_nrow[data], m.hfield_ncol[data]
                hfields[data] = {"size": m.hfield_size[data].tolist(), "rows": int(rows), "cols": int(cols),
                                 "heights": _floats(m.hfield_data[a:a + rows * cols])}
            geom["hfield"] = str(data)
        geoms.append(geom)
    return geoms, {str(k): v for k, v in meshes.items()}, {str(k): v for k, v in hfields.items()}


def write_html(mjcf_path, q, path, dt=0.02, envs=None, shown=None, contact_forces=None, model=None, spacing=1.0,
               title=None, discard_visual=None, static_geoms=False, three_js=None):
    """Writes a rollout as one web page and returns its path.

    q: batchdyn states (T, N, nq), or (T, nq) for one environment. dt: seconds between frames.
    envs: the recorded environments to put in the page (default all); shown: those the page
    shows at first (default the first 16 of them; the page has a checkbox per environment).
    contact_forces: the recorded Batch.contact_forces, (T, N, C, 3), to draw arrows (N) at the
    contact points, which are the candidates of `model`: the batchdyn Model the states were
    computed with (default: the file loaded as it is; a task with its own contact file passes its
    env.model). spacing: the distance (m) between environments on the page's grid (0: all at
    the origin). discard_visual, as render_frames. static_geoms: draw the world body's geoms other
    than the ground (plane, height field), with which batchdyn does not collide. Raises ValueError for arrays of the wrong shape
    and FileNotFoundError when three.js cannot be found."""
    mujoco = mujoco_module()
    model = load(mjcf_path) if model is None else model
    q = np.asarray(q, dtype=np.float64)
    if q.ndim == 2:
        q = q[:, None, :]
    if q.ndim != 3 or q.shape[2] != model.nq or q.shape[0] == 0:
        raise ValueError(f"write_html: q must be (T, N, nq = {model.nq}) or (T, nq) batchdyn states, got shape {np.shape(q)}")
    frames, num_envs = q.shape[0], q.shape[1]
    envs = list(range(num_envs)) if envs is None else [int(e) for e in envs]
    for e in envs:
        if not 0 <= e < num_envs:
            raise ValueError(f"write_html: environment {e} is not among the {num_envs} recorded")
    shown = envs[:16] if shown is None else [int(e) for e in shown]
    if not set(shown) <= set(envs):
        raise ValueError(f"write_html: shown environments {sorted(set(shown) - set(envs))} are not in envs")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"write_html: dt must be > 0, got {dt}")
    if contact_forces is not None:
        contact_forces = np.asarray(contact_forces, dtype=np.float64)
        expected = (frames, num_envs, len(model.info()["contacts"]["candidates"]), 3)
        if contact_forces.shape != expected:
            raise ValueError(f"write_html: contact_forces must be (T, N, C, 3) = {expected} like q and "
                             f"Batch.contact_forces, got shape {contact_forces.shape}")
    script = find_three_js(three_js).read_text(encoding="utf-8")

    m, discard_visual = drawable_model(mjcf_path, discard_visual)
    d = mujoco.MjData(m)
    geoms, meshes, hfields = _geometry(m, discard_visual, static_geoms)
    poses = np.zeros((frames, len(envs), m.nbody, 7))  # xpos, xquat (w x y z)
    points = np.zeros((frames, len(envs), 0 if contact_forces is None else contact_forces.shape[2], 3))
    for t in range(frames):
        for i, e in enumerate(envs):
            d.qpos[:] = q_to_mujoco(model, q[t, e])
            mujoco.mj_kinematics(m, d)
            poses[t, i, :, :3], poses[t, i, :, 3:] = d.xpos, d.xquat
            if contact_forces is not None:
                points[t, i] = candidate_states(model, q[t, e])["points"]
    data = {"title": title or Path(mjcf_path).name, "dt": float(dt), "frames": frames, "envs": envs, "shown": shown,
            "spacing": float(spacing), "bodies": int(m.nbody), "geoms": geoms, "meshes": meshes, "hfields": hfields,
            "poses": _floats(poses)}
    if contact_forces is not None:
        data["contacts"] = {"count": int(contact_forces.shape[2]), "points": _floats(points),
                            "forces": _floats(contact_forces[:, envs])}
    page = (Path(__file__).with_name("page.html").read_text(encoding="utf-8")
            .replace("/*THREE_JS*/", _inline_script(script)).replace("/*DATA*/", json.dumps(data)))
    Path(path).write_text(page, encoding="utf-8")
    return str(path)


def _inline_script(script):
    """three.js as it can sit in a <script> element: no "</script" inside."""
    return script.replace("</script", "<\\/script")
