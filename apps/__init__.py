"""Applications on top of the tasks: what a user runs around training, each on its own floor above ``envs`` and
``configs`` (nothing below imports them).

    web/              play.py --web: the policy live in a browser (viser), sliders and plots
    video.py          offscreen video and the gait plot of one simulated robot (play.py --video)
    render_cost.py    what a video frame costs to draw, and the lighter drawing (no shadows, reflections) over budget
    recorders.py      what play.py attaches to an evaluation: a video or MuJoCo's interactive viewer
    adapters/         our tasks under other trainers (rsl_rl's OnPolicyRunner)
    sim2sim.py        play.py --sim2sim: an exported policy where its metadata says it belongs
    gym_sim2sim.py    a Gymnasium policy in a plain Gymnasium loop (the trainer's Atari wrappers)
"""
