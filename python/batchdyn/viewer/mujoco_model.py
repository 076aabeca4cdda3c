"""The robot's MJCF compiled by MuJoCo for drawing: the videos and the web page share it."""
import os


def mujoco_module():
    """`mujoco`, imported for drawing without a screen (MUJOCO_GL=egl unless set)."""
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless; read by mujoco at its first import
    import mujoco
    from mujoco.rendering.classic import gl_context

    if getattr(gl_context, "_MUJOCO_GL", None) == "" and os.environ["MUJOCO_GL"] == "egl" and not os.environ.get("DISPLAY"):
        # mujoco was imported before MUJOCO_GL was set, so it chose GLFW, which needs a screen:
        # its renderer is handed Mesa's EGL instead (the renderer reads gl_context.GLContext).
        from mujoco.egl import GLContext

        gl_context.GLContext = GLContext
    return mujoco


def compile_model(mjcf_path, discard_visual):
    """MuJoCo's model of the file; with discard_visual, its collision geoms are the ones drawn."""
    mujoco = mujoco_module()
    spec = mujoco.MjSpec.from_file(str(mjcf_path))
    spec.compiler.discardvisual = bool(discard_visual)
    return spec.compile()


def drawable_model(mjcf_path, discard_visual=None):
    """(mjModel, discard_visual): the file compiled with its visual geoms, or, when
    discard_visual is True or (None and) a visual mesh file is missing, with its collision geoms."""
    if discard_visual is None:
        try:
            return compile_model(mjcf_path, discard_visual=False), False
        except ValueError:  # a visual mesh file is missing: draw the collision geoms
            return compile_model(mjcf_path, discard_visual=True), True
    return compile_model(mjcf_path, discard_visual), bool(discard_visual)


def is_static_obstacle(m, g):
    """A geom on the world body other than the ground (plane, height field): batchdyn does not
    collide with it, so the drawings leave it out unless asked (static_geoms=True)."""
    return m.geom_bodyid[g] == 0 and m.geom_type[g] not in (0, 1)


def hide_static_geoms(m):
    """Makes MuJoCo's renderer skip the static obstacles (is_static_obstacle) of model m."""
    for g in range(m.ngeom):
        if is_static_obstacle(m, g):
            m.geom_matid[g] = -1
            m.geom_rgba[g, 3] = 0.0
