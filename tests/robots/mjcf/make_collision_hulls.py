"""Copies the MJCF robots the tests use from the unitree_mujoco files (../shared/mjcf, or the
folder given) into this folder, with each collision mesh replaced by its convex hull.

MuJoCo collides a mesh through its convex hull, so a mesh file that holds only the hull's
triangles gives the same collision geometry (every hull vertex is one of the file's own
float32 vertices, unchanged) at a fraction of the size. The robots' inertias are given by
<inertial> elements, not inferred from the meshes, so the dynamics are unchanged too; the
tests check both against the full files when BATCHDYN_MJCF_ROBOTS points at them. Visual
meshes are not copied: batchdyn compiles MJCF with `discardvisual`, which never reads them.

    .venv/bin/python tests/robots/mjcf/make_collision_hulls.py [SOURCE]
"""
import os
import shutil
import struct
import sys

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROBOTS = {  # folder: the XML files to copy (the scene first)
    "unitree_go2": ["scene.xml", "go2.xml"],
    "unitree_h1": ["scene.xml", "h1.xml"],
    "unitree_g1": ["scene_29dof.xml", "g1_29dof.xml"],
}


def read_stl(path):
    data = open(path, "rb").read()
    count = struct.unpack("<I", data[80:84])[0]
    record = np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
    return np.frombuffer(data[84:84 + 50 * count], dtype=record)["vertices"].reshape(-1, 3)


def write_stl(path, triangles):
    with open(path, "wb") as out:
        out.write(b"convex hull, written by batchdyn's make_collision_hulls.py".ljust(80, b" "))
        out.write(struct.pack("<I", len(triangles)))
        for tri in triangles:
            normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
            length = np.linalg.norm(normal)
            normal = normal / length if length > 0 else normal
            out.write(struct.pack("<3f", *normal) + tri.astype("<f4").tobytes() + b"\0\0")


def hull_triangles(path):
    """The convex hull MuJoCo computes for a mesh file, as triangles of the file's own vertices."""
    model = mujoco.MjModel.from_xml_string(
        f'<mujoco><asset><mesh name="m" file="{path}"/></asset><worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>')
    vertices = np.unique(read_stl(path), axis=0)
    # MuJoCo stores the vertices moved to the mesh's inertial frame: (v - mesh_pos) R(mesh_quat).
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, model.mesh_quat[0])
    moved = (vertices.astype(np.float64) - model.mesh_pos[0]) @ rotation.reshape(3, 3)
    mesh_vert = model.mesh_vert[model.mesh_vertadr[0]:model.mesh_vertadr[0] + model.mesh_vertnum[0]]
    graph = model.mesh_graph[model.mesh_graphadr[0]:]
    numvert, numface = graph[0], graph[1]
    faces = graph[2 + 3 * numvert + 3 * numface:2 + 3 * numvert + 6 * numface].reshape(-1, 3)
    used = np.unique(faces)
    original = {}
    for k in used:  # the file's vertex that MuJoCo's vertex k came from
        distances = np.linalg.norm(moved - mesh_vert[k], axis=1)
        original[k] = vertices[np.argmin(distances)]
        assert distances.min() < 1e-6, (path, k, distances.min())
    return np.array([[original[k] for k in face] for face in faces])


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "..", "shared", "mjcf")
    shutil.copy(os.path.join(source, "LICENSE.unitree_mujoco"), HERE)
    for folder, files in ROBOTS.items():
        os.makedirs(os.path.join(HERE, folder), exist_ok=True)
        for name in files:
            shutil.copy(os.path.join(source, folder, name), os.path.join(HERE, folder, name))
        spec = mujoco.MjSpec.from_file(os.path.join(source, folder, files[0]))
        spec.compiler.discardvisual = True
        model = spec.compile()
        kept = {model.mesh(i).name for i in range(model.nmesh)}
        mesh_dir = spec.meshdir
        for mesh in spec.meshes:
            if mesh.name not in kept:
                continue
            target = os.path.join(HERE, folder, mesh_dir, mesh.file)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            triangles = hull_triangles(os.path.join(source, folder, mesh_dir, mesh.file))
            write_stl(target, triangles)
            print(f"{folder}/{mesh_dir}/{mesh.file}: {len(triangles)} hull triangles")


if __name__ == "__main__":
    main()
