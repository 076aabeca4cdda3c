"""Watching a rollout: a web page of the recorded states (write_html) or a GIF drawn by MuJoCo's
offscreen renderer (render_frames, write_gif, record). Both draw the robot's own MJCF.

    from batchdyn import viewer
    states = []                                   # the batch's q after each control step, (T, N, nq)
    for _ in range(250):
        env.step(actions); states.append(env.batch.q.copy())
    viewer.write_html(env.robot_file, states, "walk.html", dt=env.dt)          # every environment, a time slider
    viewer.record(env.robot_file, [s[0] for s in states], "walk.gif", fps=50)  # environment 0
"""
from .video import record, render_frames, write_gif
from .web_page import find_three_js, write_html

__all__ = ["find_three_js", "record", "render_frames", "write_gif", "write_html"]
