#!/usr/bin/env python3
"""Writes the hand-designed models shipped in models/ (URDF + constraint JSON).

Run from the repository root: python3 models/make_models.py. The outputs are committed; the
build does not need Python. Masses and inertias are those of solid boxes / rods of plausible
size (aluminium limbs, a 12 kg quadruped trunk, a ~45 kg humanoid).
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def box_inertia(m, x, y, z):
    return (m * (y * y + z * z) / 12, m * (x * x + z * z) / 12, m * (x * x + y * y) / 12)


def rod_inertia(m, length, radius, axis):
    """Solid cylinder along `axis` ('x' or 'z')."""
    along = 0.5 * m * radius * radius
    across = m * (3 * radius * radius + length * length) / 12
    return (along, across, across) if axis == "x" else (across, across, along)


class Urdf:
    def __init__(self, name):
        self.lines = ['<?xml version="1.0"?>', f'<robot name="{name}">']

    def link(self, name, mass=None, com=(0, 0, 0), inertia=None, collision=None):
        """collision: None, ("sphere", radius) or ("box", (x, y, z)), at the link frame."""
        shape = ""
        if collision is not None:
            kind, size = collision
            geometry = f'<sphere radius="{size:g}"/>' if kind == "sphere" else f'<box size="{fmt(size)}"/>'
            shape = f'    <collision>\n      <geometry>{geometry}</geometry>\n    </collision>\n'
        if mass is None:
            self.lines.append(f'  <link name="{name}">\n{shape}  </link>' if shape else f'  <link name="{name}"/>')
            return
        ixx, iyy, izz = inertia
        self.lines.append(
            f'  <link name="{name}">\n    <inertial>\n      <origin xyz="{fmt(com)}" rpy="0 0 0"/>\n'
            f'      <mass value="{mass:g}"/>\n'
            f'      <inertia ixx="{ixx:.6g}" ixy="0" ixz="0" iyy="{iyy:.6g}" iyz="0" izz="{izz:.6g}"/>\n'
            f'    </inertial>\n{shape}  </link>')

    def joint(self, name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=(0, 0, 1),
              lower=-3.14, upper=3.14, effort=100, velocity=20):
        body = (f'  <joint name="{name}" type="{kind}">\n    <parent link="{parent}"/>\n'
                f'    <child link="{child}"/>\n    <origin xyz="{fmt(xyz)}" rpy="{fmt(rpy)}"/>\n')
        if kind != "fixed":
            body += f'    <axis xyz="{fmt(axis)}"/>\n'
        if kind in ("revolute", "prismatic"):
            body += f'    <limit lower="{lower:g}" upper="{upper:g}" effort="{effort:g}" velocity="{velocity:g}"/>\n'
        elif kind == "continuous":
            body += f'    <limit effort="{effort:g}" velocity="{velocity:g}"/>\n'
        self.lines.append(body + '  </joint>')

    def loop_joint(self, name, kind, link1, xyz1, link2, xyz2, rpy2=(0, 0, 0), axis=(0, 0, 1)):
        self.lines.append(
            f'  <loop_joint name="{name}" type="{kind}">\n'
            f'    <link1 link="{link1}" xyz="{fmt(xyz1)}" rpy="0 0 0"/>\n'
            f'    <link2 link="{link2}" xyz="{fmt(xyz2)}" rpy="{fmt(rpy2)}"/>\n'
            f'    <axis xyz="{fmt(axis)}"/>\n  </loop_joint>')

    def write(self, filename):
        with open(os.path.join(HERE, filename), "w") as f:
            f.write("\n".join(self.lines + ["</robot>", ""]))


def fmt(v):
    return " ".join(f"{x:.12g}" for x in v)


def write_json(filename, data):
    path = os.path.join(HERE, filename)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1 if filename.startswith("states/") else 2)
        f.write("\n")


def double_pendulum():
    u = Urdf("double_pendulum")
    u.link("base")
    for i, parent in ((1, "base"), (2, "link1")):
        u.link(f"link{i}", 1.0, (0, 0, -0.25), rod_inertia(1.0, 0.5, 0.02, "z"))
        u.joint(f"joint{i}", "continuous", parent, f"link{i}", xyz=(0, 0, 0 if i == 1 else -0.5), axis=(0, 1, 0))
    u.link("tip")
    u.joint("tip_fixed", "fixed", "link2", "tip", xyz=(0, 0, -0.5))
    u.write("double_pendulum.urdf")


def four_bar():
    """Planar four-bar in the xy plane: crank AB, coupler BC, rocker DC, ground AD.
    At q = 0 the loop closes exactly; the revolute loop joint has 5 rows of which only 2 are
    independent in the plane (a redundant closure, as in the papers)."""
    A, B, C, D = (0.0, 0.0), (0.0, 0.1), (0.3, 0.25), (0.35, 0.0)
    ang = lambda p, q: math.atan2(q[1] - p[1], q[0] - p[0])
    dist = lambda p, q: math.hypot(q[0] - p[0], q[1] - p[1])
    u = Urdf("four_bar")
    u.link("ground")
    for name, p, q in (("crank", A, B), ("coupler", B, C), ("rocker", D, C)):
        L = dist(p, q)
        u.link(name, 0.3 * L / 0.1, (L / 2, 0, 0), rod_inertia(0.3 * L / 0.1, L, 0.01, "x"))
    u.joint("a_crank", "revolute", "ground", "crank", xyz=(*A, 0), rpy=(0, 0, ang(A, B)))
    u.joint("b_coupler", "revolute", "crank", "coupler", xyz=(dist(A, B), 0, 0), rpy=(0, 0, ang(B, C) - ang(A, B)))
    u.joint("c_rocker", "revolute", "ground", "rocker", xyz=(*D, 0), rpy=(0, 0, ang(D, C)))
    u.loop_joint("coupler_rocker", "revolute", "coupler", (dist(B, C), 0, 0), "rocker", (dist(D, C), 0, 0),
                 rpy2=(0, 0, ang(B, C) - ang(D, C)), axis=(0, 0, 1))
    u.write("four_bar.urdf")


def quadruped():
    u = Urdf("quadruped")
    # Collision geometry: the trunk as its box (base contact), 2 cm spheres as feet.
    u.link("trunk", 12.0, (0, 0, 0), box_inertia(12.0, 0.5, 0.3, 0.15), collision=("box", (0.5, 0.3, 0.15)))
    for leg, (x, y) in (("FL", (0.22, 0.1)), ("FR", (0.22, -0.1)), ("HL", (-0.22, 0.1)), ("HR", (-0.22, -0.1))):
        u.link(f"{leg}_hip", 1.0, (0, 0, 0), box_inertia(1.0, 0.08, 0.08, 0.08))
        u.link(f"{leg}_thigh", 1.2, (0, 0, -0.125), rod_inertia(1.2, 0.25, 0.025, "z"))
        u.link(f"{leg}_calf", 0.3, (0, 0, -0.125), rod_inertia(0.3, 0.25, 0.015, "z"))
        u.link(f"{leg}_FOOT", collision=("sphere", 0.02))
        u.joint(f"{leg}_hip_abduction", "revolute", "trunk", f"{leg}_hip", xyz=(x, y, 0), axis=(1, 0, 0),
                lower=-0.8, upper=0.8, effort=33.5, velocity=21)
        u.joint(f"{leg}_hip_flexion", "revolute", f"{leg}_hip", f"{leg}_thigh",
                xyz=(0, 0.08 if y > 0 else -0.08, 0), axis=(0, 1, 0), lower=-1.0, upper=3.5, effort=33.5, velocity=21)
        u.joint(f"{leg}_knee", "revolute", f"{leg}_thigh", f"{leg}_calf", xyz=(0, 0, -0.25), axis=(0, 1, 0),
                lower=-2.7, upper=-0.9, effort=33.5, velocity=21)
        u.joint(f"{leg}_foot_fixed", "fixed", f"{leg}_calf", f"{leg}_FOOT", xyz=(0, 0, -0.25))
    u.write("quadruped.urdf")
    standing = [0, 0, 0.32, 0, 0, 0, 1] + [0.0, 0.8, -1.6] * 4
    write_json("quadruped_feet.json", {
        "reference_q": standing,
        "constraints": [{"name": f"{leg}_contact", "type": "connect", "link1": f"{leg}_FOOT", "link2": "world",
                         "placement2": "hold"} for leg in ("FL", "FR", "HL", "HR")]})


def humanoid(u=None, hands=False):
    """The humanoid (~45 kg, 36 dof with a free root); with `hands`, an Allegro-like hand on
    each wrist (humanoid_hands.urdf, 68 dof)."""
    u = u or Urdf("humanoid_hands" if hands else "humanoid")
    u.link("pelvis", 8.0, (0, 0, 0), box_inertia(8.0, 0.2, 0.3, 0.15))
    u.link("torso", 15.0, (0, 0, 0.2), box_inertia(15.0, 0.2, 0.35, 0.4))
    u.joint("waist_yaw", "revolute", "pelvis", "waist", xyz=(0, 0, 0.1), axis=(0, 0, 1), lower=-1, upper=1)
    u.link("waist", 1.0, (0, 0, 0), box_inertia(1.0, 0.1, 0.1, 0.05))
    u.joint("waist_pitch", "revolute", "waist", "torso", xyz=(0, 0, 0.05), axis=(0, 1, 0), lower=-0.5, upper=1.2)
    u.link("neck", 0.5, (0, 0, 0.04), box_inertia(0.5, 0.06, 0.06, 0.08))
    u.link("head", 3.0, (0, 0, 0.1), box_inertia(3.0, 0.18, 0.16, 0.22))
    u.joint("neck_yaw", "revolute", "torso", "neck", xyz=(0, 0, 0.45), axis=(0, 0, 1), lower=-1.5, upper=1.5)
    u.joint("neck_pitch", "revolute", "neck", "head", xyz=(0, 0, 0.08), axis=(0, 1, 0), lower=-0.6, upper=0.8)
    for side, s in (("left", 1), ("right", -1)):
        # Leg: 6 joints, hip yaw/roll/pitch, knee, ankle pitch/roll.
        u.link(f"{side}_hip_yaw_link", 1.0, (0, 0, 0), box_inertia(1.0, 0.08, 0.08, 0.08))
        u.link(f"{side}_hip_roll_link", 1.0, (0, 0, 0), box_inertia(1.0, 0.08, 0.08, 0.08))
        u.link(f"{side}_thigh", 5.0, (0, 0, -0.2), rod_inertia(5.0, 0.4, 0.06, "z"))
        u.link(f"{side}_shin", 3.0, (0, 0, -0.2), rod_inertia(3.0, 0.4, 0.045, "z"))
        u.link(f"{side}_ankle_link", 0.3, (0, 0, 0), box_inertia(0.3, 0.05, 0.05, 0.05))
        u.link(f"{side}_foot", 1.0, (0.03, 0, -0.04), box_inertia(1.0, 0.22, 0.1, 0.04))
        u.link(f"{side}_sole")
        u.joint(f"{side}_hip_yaw", "revolute", "pelvis", f"{side}_hip_yaw_link", xyz=(0, s * 0.1, -0.08),
                axis=(0, 0, 1), lower=-0.8, upper=0.8)
        u.joint(f"{side}_hip_roll", "revolute", f"{side}_hip_yaw_link", f"{side}_hip_roll_link", xyz=(0, 0, -0.05),
                axis=(1, 0, 0), lower=-0.6, upper=0.6)
        u.joint(f"{side}_hip_pitch", "revolute", f"{side}_hip_roll_link", f"{side}_thigh", xyz=(0, 0, 0),
                axis=(0, 1, 0), lower=-2.0, upper=1.0)
        u.joint(f"{side}_knee", "revolute", f"{side}_thigh", f"{side}_shin", xyz=(0, 0, -0.4), axis=(0, 1, 0),
                lower=0.0, upper=2.4)
        u.joint(f"{side}_ankle_pitch", "revolute", f"{side}_shin", f"{side}_ankle_link", xyz=(0, 0, -0.4),
                axis=(0, 1, 0), lower=-1.0, upper=0.8)
        u.joint(f"{side}_ankle_roll", "revolute", f"{side}_ankle_link", f"{side}_foot", xyz=(0, 0, 0),
                axis=(1, 0, 0), lower=-0.5, upper=0.5)
        u.joint(f"{side}_sole_fixed", "fixed", f"{side}_foot", f"{side}_sole", xyz=(0.03, 0, -0.06))
        # Arm: 7 joints.
        names = ["shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_yaw", "wrist_pitch", "wrist_roll"]
        axes = [(0, 1, 0), (1, 0, 0), (0, 0, 1), (0, 1, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0)]
        offsets = [(0, s * 0.22, 0.35), (0, 0, 0), (0, 0, -0.05), (0, 0, -0.25), (0, 0, -0.05), (0, 0, -0.2), (0, 0, 0)]
        links = ["shoulder_pitch_link", "shoulder_roll_link", "upper_arm", "forearm_upper", "forearm",
                 "wrist_link", "hand"]
        masses = [0.8, 0.8, 2.0, 1.0, 1.2, 0.3, 0.6]
        parent = "torso"
        for n, a, o, l, m in zip(names, axes, offsets, links, masses):
            length = 0.25 if l in ("upper_arm", "forearm") else 0.06
            u.link(f"{side}_{l}", m, (0, 0, -length / 2), rod_inertia(m, length, 0.04, "z"))
            u.joint(f"{side}_{n}", "revolute", parent, f"{side}_{l}", xyz=o, axis=a, lower=-2.5, upper=2.5)
            parent = f"{side}_{l}"
        u.link(f"{side}_palm")
        u.joint(f"{side}_palm_fixed", "fixed", parent, f"{side}_palm", xyz=(0, 0, -0.08))
        if hands:  # the hand's palm faces the body's midline, fingers down
            hand_links(u, f"{side}_hand_", (f"{side}_palm", (0, 0, 0), (0, math.pi, 0)))
    if hands:
        u.write("humanoid_hands.urdf")
        return
    u.write("humanoid.urdf")
    write_json("humanoid_feet.json", {
        "reference_q": "neutral",
        "constraints": [{"name": f"{side}_foot_contact", "type": "weld", "link1": f"{side}_sole", "link2": "world",
                         "placement2": "hold"} for side in ("left", "right")]})


def humanoid_hands_cube():
    """Lcaba-proxbbo Table II: the humanoid holding a box with both hands (eight fingertip
    connects), free, and standing on welded feet."""
    feet = [{"name": f"{side}_foot_contact", "type": "weld", "link1": f"{side}_sole", "link2": "world",
             "placement2": "hold"} for side in ("left", "right")]
    scene = {
        "name": "humanoid_hands_cube",
        "robots": [{"urdf": "../humanoid_hands.urdf", "root": "free", "name": "humanoid",
                    "placement": {"xyz": [0, 0, 0.95]}}],
        "boxes": [{"name": "cube", "mass": 1.0, "size": [0.2, 0.4, 0.2], "root": "free",
                   "placement": {"xyz": [0, 0, 0.67]}}],
        "reference_q": "neutral",
        "constraints": fingertip_contacts("left_hand_", "cube") + fingertip_contacts("right_hand_", "cube")}
    write_json("scenes/humanoid_hands_cube.json", scene)
    scene = dict(scene, name="humanoid_hands_cube_feet", constraints=scene["constraints"] + feet)
    write_json("scenes/humanoid_hands_cube_feet.json", scene)


def digit():
    """Digit-like biped (lcaba-proxbbo Table II): per leg hip roll/yaw/pitch, knee, a knee
    four-bar (crank + rod, closed by a revolute loop joint), a 2-dof ankle driven by two toe
    rods (crank + universal joint + rod each, closed by a connect at the foot): three loops per
    leg. Four-dof arms. Free root, ~40 kg; welded feet in digit_feet.json; two of them holding a
    box in scenes/two_digits_box.json."""
    u = Urdf("digit")
    u.link("pelvis", 15.0, (0, 0, 0.1), box_inertia(15.0, 0.2, 0.3, 0.4))
    for side, s in (("left", 1), ("right", -1)):
        u.link(f"{side}_hip_roll_link", 1.5, (0, 0, 0), box_inertia(1.5, 0.08, 0.08, 0.08))
        u.link(f"{side}_hip_yaw_link", 1.5, (0, 0, 0), box_inertia(1.5, 0.08, 0.08, 0.08))
        u.link(f"{side}_thigh", 5.0, (0, 0, -0.2), rod_inertia(5.0, 0.4, 0.06, "z"))
        u.link(f"{side}_shin", 3.0, (0, 0, -0.2), rod_inertia(3.0, 0.4, 0.045, "z"))
        u.link(f"{side}_crank", 0.2, (0, 0, -0.04), rod_inertia(0.2, 0.08, 0.01, "z"))
        u.link(f"{side}_rod", 0.3, (-0.005, 0, -0.14), rod_inertia(0.3, 0.28, 0.01, "z"))
        u.link(f"{side}_ankle_link", 0.3, (0, 0, 0), box_inertia(0.3, 0.05, 0.05, 0.05))
        u.link(f"{side}_foot", 1.0, (0.03, 0, -0.04), box_inertia(1.0, 0.22, 0.1, 0.04))
        u.link(f"{side}_sole")
        u.joint(f"{side}_hip_roll", "revolute", "pelvis", f"{side}_hip_roll_link", xyz=(0, s * 0.1, -0.05),
                axis=(1, 0, 0), lower=-0.6, upper=0.6)
        u.joint(f"{side}_hip_yaw", "revolute", f"{side}_hip_roll_link", f"{side}_hip_yaw_link", xyz=(0, 0, -0.05),
                axis=(0, 0, 1), lower=-0.8, upper=0.8)
        u.joint(f"{side}_hip_pitch", "revolute", f"{side}_hip_yaw_link", f"{side}_thigh", axis=(0, 1, 0),
                lower=-1.5, upper=1.5)
        fourbar_knee_joints(u, side)
        fourbar_knee_loop(u, side)
        u.joint(f"{side}_ankle_pitch", "revolute", f"{side}_shin", f"{side}_ankle_link", xyz=(0, 0, -0.4),
                axis=(0, 1, 0), lower=-1.0, upper=1.0)
        u.joint(f"{side}_ankle_roll", "revolute", f"{side}_ankle_link", f"{side}_foot", axis=(1, 0, 0),
                lower=-0.5, upper=0.5)
        u.joint(f"{side}_sole_fixed", "fixed", f"{side}_foot", f"{side}_sole", xyz=(0.03, 0, -0.06))
        # Two toe rods: a crank on the shin (pivot (0.05, +-0.03, -0.1), arm 0.05 forward), a
        # universal joint at the crank tip, a 0.32 m rod down to a ball on the foot at
        # (0.10, +-0.03, -0.02).
        for toe, y in (("a", 0.03), ("b", -0.03)):
            crank, cross, rod = f"{side}_toe_{toe}_crank", f"{side}_toe_{toe}_cross", f"{side}_toe_{toe}_rod"
            u.link(crank, 0.1, (0.025, 0, 0), rod_inertia(0.1, 0.05, 0.01, "x"))
            u.link(cross, 0.02, (0, 0, 0), box_inertia(0.02, 0.02, 0.02, 0.02))
            u.link(rod, 0.1, (0, 0, -0.16), rod_inertia(0.1, 0.32, 0.006, "z"))
            u.joint(crank, "revolute", f"{side}_shin", crank, xyz=(0.05, y, -0.1), axis=(0, 1, 0), lower=-1.5,
                    upper=1.5)
            u.joint(f"{cross}_joint", "revolute", crank, cross, xyz=(0.05, 0, 0), axis=(1, 0, 0), lower=-1.5,
                    upper=1.5)
            u.joint(f"{rod}_joint", "revolute", cross, rod, axis=(0, 1, 0), lower=-1.5, upper=1.5)
            u.loop_joint(f"{side}_toe_{toe}_loop", "connect", rod, (0, 0, -0.32), f"{side}_foot", (0.10, y, -0.02))
        # Arm: shoulder pitch / roll / yaw, elbow; a palm frame at the forearm's end.
        parent = "pelvis"
        for name, axis, xyz, link, mass, length in (
                ("shoulder_pitch", (0, 1, 0), (0, s * 0.2, 0.3), "shoulder_link", 0.8, 0.06),
                ("shoulder_roll", (1, 0, 0), (0, 0, 0), "upper_arm", 1.5, 0.25),
                ("shoulder_yaw", (0, 0, 1), (0, 0, -0.25), "arm_yaw_link", 0.5, 0.06),
                ("elbow", (0, 1, 0), (0, 0, -0.05), "forearm", 1.0, 0.25)):
            u.link(f"{side}_{link}", mass, (0, 0, -length / 2), rod_inertia(mass, length, 0.04, "z"))
            u.joint(f"{side}_{name}", "revolute", parent, f"{side}_{link}", xyz=xyz, axis=axis, lower=-2.5, upper=2.5)
            parent = f"{side}_{link}"
        u.link(f"{side}_palm")
        u.joint(f"{side}_palm_fixed", "fixed", parent, f"{side}_palm", xyz=(0, 0, -0.25))
    u.write("digit.urdf")
    feet = [{"name": f"{side}_foot_contact", "type": "weld", "link1": f"{side}_sole", "link2": "world",
             "placement2": "hold"} for side in ("left", "right")]
    write_json("digit_feet.json", {"reference_q": "neutral", "constraints": feet})
    # Two Digits facing each other, 0.9 m apart, feet welded, palms welded to one box where they
    # are at the neutral pose (rigid grips).
    grips = []
    for robot, prefix in (("digit", ""), ("digit2", "digit2/")):
        grips += [{"name": f"{prefix}{side}_foot_contact", "type": "weld", "link1": f"{prefix}{side}_sole",
                   "link2": "world", "placement2": "hold"} for side in ("left", "right")]
        grips += [{"name": f"{prefix}{side}_grip", "type": "weld", "link1": f"{prefix}{side}_palm", "link2": "box",
                   "placement2": "hold"} for side in ("left", "right")]
    write_json("scenes/two_digits_box.json", {
        "name": "two_digits_box",
        "robots": [{"urdf": "../digit.urdf", "root": "free", "name": "digit", "placement": {"xyz": [-0.45, 0, 0.93]}},
                   {"urdf": "../digit.urdf", "root": "free", "name": "digit2",
                    "placement": {"xyz": [0.45, 0, 0.93], "rpy": [0, 0, math.pi]}}],
        "boxes": [{"name": "box", "mass": 3.0, "size": [0.5, 0.4, 0.3], "root": "free",
                   "placement": {"xyz": [0, 0, 0.9]}}],
        "reference_q": "neutral",
        "constraints": grips})


def fourbar_knee_joints(u, side):
    """The knee and its four-bar: knee pivot A = (0,0,-0.4) on the thigh, crank pivot
    D = (0.06,0,-0.1), crank tip C = D + (0,0,-0.08), rod C -> B with B = A + (0.05,0,-0.06) on
    the shin (closed by fourbar_knee_loop)."""
    u.joint(f"{side}_knee", "revolute", f"{side}_thigh", f"{side}_shin", xyz=(0, 0, -0.4), axis=(0, 1, 0),
            lower=-0.5, upper=2.0)
    u.joint(f"{side}_knee_crank", "revolute", f"{side}_thigh", f"{side}_crank", xyz=(0.06, 0, -0.1),
            axis=(0, 1, 0), lower=-1.5, upper=1.5)
    u.joint(f"{side}_knee_rod", "revolute", f"{side}_crank", f"{side}_rod", xyz=(0, 0, -0.08), axis=(0, 1, 0),
            lower=-1.5, upper=1.5)


def fourbar_knee_loop(u, side):
    u.loop_joint(f"{side}_knee_loop", "revolute", f"{side}_rod", (-0.01, 0, -0.28), f"{side}_shin",
                 (0.05, 0, -0.06), axis=(0, 1, 0))


def biped_fourbar():
    """Cassie/Digit-like leg pair: each knee is driven through a four-bar (thigh, crank, rod,
    shin) closed by a revolute loop joint in the sagittal plane (an internal loop rooted at
    the thigh)."""
    u = Urdf("biped_fourbar")
    u.link("pelvis", 10.0, (0, 0, 0), box_inertia(10.0, 0.2, 0.3, 0.15))
    for side, s in (("left", 1), ("right", -1)):
        u.link(f"{side}_hip_yaw_link", 1.0, (0, 0, 0), box_inertia(1.0, 0.08, 0.08, 0.08))
        u.link(f"{side}_hip_roll_link", 1.0, (0, 0, 0), box_inertia(1.0, 0.08, 0.08, 0.08))
        u.link(f"{side}_thigh", 4.0, (0, 0, -0.2), rod_inertia(4.0, 0.4, 0.05, "z"))
        u.link(f"{side}_shin", 2.5, (0, 0, -0.2), rod_inertia(2.5, 0.4, 0.04, "z"))
        u.link(f"{side}_crank", 0.2, (0, 0, -0.04), rod_inertia(0.2, 0.08, 0.01, "z"))
        u.link(f"{side}_rod", 0.1, (-0.005, 0, -0.14), rod_inertia(0.1, 0.28, 0.008, "z"))
        u.link(f"{side}_foot", 0.8, (0.03, 0, -0.03), box_inertia(0.8, 0.2, 0.08, 0.03))
        u.link(f"{side}_sole")
        u.joint(f"{side}_hip_yaw", "revolute", "pelvis", f"{side}_hip_yaw_link", xyz=(0, s * 0.12, -0.08),
                axis=(0, 0, 1), lower=-0.8, upper=0.8)
        u.joint(f"{side}_hip_roll", "revolute", f"{side}_hip_yaw_link", f"{side}_hip_roll_link", axis=(1, 0, 0),
                lower=-0.5, upper=0.5)
        u.joint(f"{side}_hip_pitch", "revolute", f"{side}_hip_roll_link", f"{side}_thigh", axis=(0, 1, 0),
                lower=-1.5, upper=1.5)
        fourbar_knee_joints(u, side)
        u.joint(f"{side}_ankle", "revolute", f"{side}_shin", f"{side}_foot", xyz=(0, 0, -0.4), axis=(0, 1, 0),
                lower=-1.0, upper=1.0)
        u.joint(f"{side}_sole_fixed", "fixed", f"{side}_foot", f"{side}_sole", xyz=(0.03, 0, -0.05))
        fourbar_knee_loop(u, side)
    u.write("biped_fourbar.urdf")
    write_json("biped_fourbar_feet.json", {
        "reference_q": "neutral",
        "constraints": [{"name": f"{side}_foot_contact", "type": "weld", "link1": f"{side}_sole", "link2": "world",
                         "placement2": "hold"} for side in ("left", "right")]})


def hand_links(u, prefix="", mount=None):
    """Allegro-like hand, 16 dof: index/middle/ring (abduction + 3 flexion) and a thumb. Link
    and joint names get `prefix`; `mount` = (parent link, xyz, rpy) fixes the palm to a link."""
    u.link(f"{prefix}palm", 0.4, (0, 0, 0.05), box_inertia(0.4, 0.02, 0.1, 0.1))
    if mount is not None:
        parent_link, xyz, rpy = mount
        u.joint(f"{prefix}palm_mount", "fixed", parent_link, f"{prefix}palm", xyz=xyz, rpy=rpy)
    fingers = (("index", 0.045), ("middle", 0.0), ("ring", -0.045))
    for name, y in fingers:
        parent = f"{prefix}palm"
        spec = [("base", (0, y, 0.095), (0, 0, 1), 0.0164), ("proximal", (0, 0, 0.0164), (0, 1, 0), 0.054),
                ("medial", (0, 0, 0.054), (0, 1, 0), 0.0384), ("distal", (0, 0, 0.0384), (0, 1, 0), 0.0267)]
        for k, (seg, xyz, axis, length) in enumerate(spec):
            link = f"{prefix}{name}_{seg}"
            m = 0.0119 if seg == "base" else 0.03
            u.link(link, m, (0, 0, length / 2), rod_inertia(m, length, 0.01, "z"))
            u.joint(f"{prefix}{name}_joint{k}", "revolute", parent, link, xyz=xyz, axis=axis,
                    lower=-0.5 if k == 0 else -0.2, upper=0.5 if k == 0 else 1.6, effort=0.7, velocity=7)
            parent = link
        u.link(f"{prefix}{name}_tip")
        u.joint(f"{prefix}{name}_tip_fixed", "fixed", parent, f"{prefix}{name}_tip", xyz=(0, 0, 0.0267))
    parent = f"{prefix}palm"
    for k, (seg, xyz, axis, length) in enumerate([("base", (-0.0182, 0.019, 0.0667), (-1, 0, 0), 0.0177),
                                                   ("proximal", (0, 0, 0.0177), (0, 0, 1), 0.0177),
                                                   ("medial", (0, 0, 0.0177), (0, 1, 0), 0.0514),
                                                   ("distal", (0, 0, 0.0514), (0, 1, 0), 0.0423)]):
        link = f"{prefix}thumb_{seg}"
        u.link(link, 0.03, (0, 0, length / 2), rod_inertia(0.03, length, 0.01, "z"))
        u.joint(f"{prefix}thumb_joint{k}", "revolute", parent, link, xyz=xyz, axis=axis, lower=-0.3, upper=1.6,
                effort=0.7, velocity=7)
        parent = link
    u.link(f"{prefix}thumb_tip")
    u.joint(f"{prefix}thumb_tip_fixed", "fixed", parent, f"{prefix}thumb_tip", xyz=(0, 0, 0.0423))


def fingertip_contacts(prefix, box):
    return [{"name": f"{prefix}{f}_contact", "type": "connect", "link1": f"{prefix}{f}_tip", "link2": box,
             "placement2": "hold"} for f in ("index", "middle", "ring", "thumb")]


def hand():
    u = Urdf("hand")
    hand_links(u)
    u.write("hand.urdf")
    write_json("scenes/hand_cube.json", {
        "name": "hand_cube",
        "robots": [{"urdf": "../hand.urdf", "root": "fixed", "name": "hand"}],
        "boxes": [{"name": "cube", "mass": 0.1, "size": [0.06, 0.06, 0.06], "root": "free",
                   "placement": {"xyz": [0.03, 0, 0.16]}}],
        "reference_q": "neutral",
        "constraints": fingertip_contacts("", "cube")})
    # Lcaba-proxbbo Table II: two hands holding one cube, the second hand the first one turned
    # half a turn about the vertical through the cube, fingertips on the cube's far side.
    write_json("scenes/two_hands_cube.json", {
        "name": "two_hands_cube",
        "robots": [{"urdf": "../hand.urdf", "root": "fixed", "name": "hand"},
                   {"urdf": "../hand.urdf", "root": "fixed", "name": "hand2",
                    "placement": {"xyz": [0.06, 0, 0], "rpy": [0, 0, math.pi]}}],
        "boxes": [{"name": "cube", "mass": 0.1, "size": [0.06, 0.06, 0.06], "root": "free",
                   "placement": {"xyz": [0.03, 0, 0.16]}}],
        "reference_q": "neutral",
        "constraints": fingertip_contacts("", "cube") + fingertip_contacts("hand2/", "cube")})


def arm7():
    """7-dof arm (alternating yaw/pitch axes) with a palm frame."""
    u = Urdf("arm7")
    u.link("arm_base")
    spec = [("shoulder_yaw", (0, 0, 1), 0.1, 4.0), ("shoulder_pitch", (0, 1, 0), 0.3, 3.0),
            ("upper_arm_yaw", (0, 0, 1), 0.05, 2.5), ("elbow", (0, 1, 0), 0.3, 2.0), ("forearm_yaw", (0, 0, 1), 0.05, 1.5),
            ("wrist_pitch", (0, 1, 0), 0.08, 0.8), ("wrist_yaw", (0, 0, 1), 0.05, 0.4)]
    parent, offset = "arm_base", 0.1
    for name, axis, length, mass in spec:
        link = f"{name}_link"
        u.link(link, mass, (0, 0, length / 2), rod_inertia(mass, length, 0.04, "z"))
        u.joint(name, "revolute", parent, link, xyz=(0, 0, offset), axis=axis, lower=-2.9, upper=2.9, effort=80)
        parent, offset = link, length
    u.link("palm")
    u.joint("palm_fixed", "fixed", parent, "palm", xyz=(0, 0, offset))
    u.write("arm7.urdf")
    write_json("scenes/two_arms_box.json", {
        "name": "two_arms_box",
        "robots": [{"urdf": "../arm7.urdf", "root": "fixed", "name": "left", "placement": {"xyz": [0, 0.35, 0]}},
                   {"urdf": "../arm7.urdf", "root": "fixed", "name": "right", "placement": {"xyz": [0, -0.35, 0]}}],
        "boxes": [{"name": "box", "mass": 2.0, "size": [0.2, 0.5, 0.2], "root": "free",
                   "placement": {"xyz": [0, 0, 1.03]}}],
        "reference_q": "neutral",
        "constraints": [{"name": "left_grasp", "type": "weld", "link1": "palm", "link2": "box", "placement2": "hold"},
                        {"name": "right_grasp", "type": "weld", "link1": "right/palm", "link2": "box",
                         "placement2": "hold"}]})


def humanoid_states():
    """Four humanoid environments for the demo (build.sh demo): standing, crouched, arms raised, and a
    random pose with velocities and torques (joint order of `batchdyn info models/humanoid.urdf
    --root free`)."""
    import random
    rng = random.Random(4)
    nq, nv = 37, 36
    base = [0, 0, 0.95, 0, 0, 0, 1]
    standing = base + [0.0] * (nq - 7)
    crouched = list(standing)
    crouched[2] = 0.85
    for hip, knee, ankle in ((9, 10, 11), (15, 16, 17)):
        crouched[hip], crouched[knee], crouched[ankle] = -0.6, 1.2, -0.6
    arms = list(standing)
    for shoulder, elbow in ((21, 24), (30, 33)):  # left arm 21..27, neck 28..29, right arm 30..36
        arms[shoulder], arms[elbow] = -2.0, -1.0
    rand = base[:3] + [0.0, 0.0, math.sin(0.15), math.cos(0.15)] + [rng.uniform(-0.4, 0.4) for _ in range(nq - 7)]
    write_json("states/humanoid_demo.json", {
        "q": [standing, crouched, arms, rand],
        "v": [[0.0] * nv, [0.0] * nv, [0.0] * nv, [round(rng.uniform(-1, 1), 4) for _ in range(nv)]],
        "tau": [[0.0] * nv, [0.0] * nv, [0.0] * nv, [round(rng.uniform(-5, 5), 4) for _ in range(nv)]]})


if __name__ == "__main__":
    double_pendulum()
    four_bar()
    quadruped()
    humanoid()
    humanoid(hands=True)
    humanoid_hands_cube()
    biped_fourbar()
    digit()
    hand()
    arm7()
    humanoid_states()
