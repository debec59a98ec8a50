"""The robot check (``python -m tools.check_robot``): standing, step responses and solver trials on native MuJoCo
(``trials.py``), and the verdict with its numbers and advice (``verdict.py``)."""
