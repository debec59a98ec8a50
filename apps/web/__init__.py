"""``play.py --web``: watch a policy in a browser (viser), with live commands, plots and checkpoint switching.

``shapes.py`` (geom meshes), ``scene.py`` (the robots and the floor in viser), ``session.py`` (the simulation:
env, policy, commands; no viser), ``app.py`` (the page's controls and the real-time loop), ``probe.py`` (drives
the page from a headless Chromium: the test and ``tools/experiments/web_viewer_bench.py``).
"""
