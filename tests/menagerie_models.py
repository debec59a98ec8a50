"""Menagerie-style robot files served by name (issue 37): a folder laid out as the ``mujoco-menagerie`` package
resolves it under ``MENAGERIE_ROOT`` (``<root>/<registered name>/<entry point's file>``), written by the tests. No
third-party file: the models are this repo's examples (``examples/go_like``, ``examples/h1_like``,
``examples/g1_like``) and an ANYbotics-style quadruped derived from ``examples/anymal_like`` as ANYmal C's file
comes (position servos without ``kv``, soft foot spheres that need the file's elliptic cone and impratio 100).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def go2_xml() -> str:
    """A Unitree-style quadruped (named foot spheres, motor actuators, elliptic cone with impratio 100, soft feet):
    ``examples/go_like/go_like.xml``."""
    return (EXAMPLES / "go_like" / "go_like.xml").read_text()


def g1_xml() -> str:
    """A 29-joint humanoid of the G1 kind written as mjlab's G1 file comes (no actuators, no keyframe, three named
    capsules per foot, armature and ``actuatorfrcrange`` per joint by motor size): ``examples/g1_like/g1_like.xml``."""
    return (EXAMPLES / "g1_like" / "g1_like.xml").read_text()


def h1_xml() -> str:
    """A 23-joint humanoid of the H1 kind (three unnamed capsules per foot, no armature, motor actuators, a waist,
    arms and wrists): ``examples/h1_like/h1_like.xml``."""
    return (EXAMPLES / "h1_like" / "h1_like.xml").read_text()


UNDAMPED_SERVO = '<position kp="100" forcerange="-80 80"/>'
"""ANYmal C's file servos: kp, a force range, no kv (kd 0)."""
SOFT_FOOT = ('<geom type="sphere" size="0.032" priority="1" condim="3" friction="0.8 0.02 0.01" '
             'solimp="0.015 1 0.03"/>')
"""Soft foot spheres: with a pyramidal cone and impratio 1 they slide outwards and the robot squats."""


def anymal_c_xml() -> str:
    """An ANYbotics-style quadruped (about 52 kg) as ANYmal C's file comes: ``examples/anymal_like`` with its
    position servos' ``kv`` removed (kd 0: undamped), and soft foot spheres (``solimp``) that stand with the
    file's elliptic cone and impratio 100 but slide outwards with a pyramidal cone and impratio 1. Feet: unnamed,
    four collision geoms per shank (the foot sphere's class is ``foot``)."""
    text = (EXAMPLES / "anymal_like" / "anymal_like.xml").read_text()
    replaced = {
        '<position kp="100" kv="3" forcerange="-80 80"/>': UNDAMPED_SERVO,
        '<geom type="sphere" size="0.032" priority="1" condim="3" friction="0.8 0.02 0.01"/>': SOFT_FOOT,
        "<!-- anymal_like:": "<!-- anymal_c (test model, derived from examples/anymal_like: servos without kv, soft "
                            "feet):",
    }
    for old, new in replaced.items():
        assert old in text, old
        text = text.replace(old, new)
    return text.replace('<mujoco model="anymal_like">', '<mujoco model="anymal_c">')


SERVED = {
    ("unitree_go2", "go2.xml"): go2_xml,
    ("unitree_go2", "go2_mjx.xml"): go2_xml,
    ("anybotics_anymal_c", "anymal_c.xml"): anymal_c_xml,
    ("unitree_h1", "h1.xml"): h1_xml,
    ("unitree_g1", "g1_mjlab.xml"): g1_xml,
}
"""(registered name, entry point's file) -> its text."""


def menagerie_root(directory: Path) -> Path:
    """Write the models of SERVED into ``directory`` as ``MENAGERIE_ROOT`` expects them; returns ``directory``."""
    for (name, file), text in SERVED.items():
        folder = directory / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / file).write_text(text())
    return directory


def seed_fix_cache(task: str) -> Path:
    """A ``--fix`` cache entry (under ``LEGGED_MJX_CACHE``) saying the search kept ``task``'s draft as it is, so a
    test resolves a robot by name without the search; returns the entry's path."""
    import dataclasses
    import json

    import configs.menagerie as menagerie_config
    from envs.robots.draft import draft
    from envs.robots.menagerie import fast_contact, parse, xml_path

    ref = parse(task)
    spec = draft(xml_path(ref), ref.robot_id.replace("@", "_")).spec
    spec = fast_contact(spec) if ref.fast else spec
    path = menagerie_config.cache_path(ref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"actuators": [dataclasses.asdict(g) for g in spec.actuators],
                                "sim": dataclasses.asdict(spec.sim), "verdict": "OK", "changes": [], "seconds": 0}))
    return path


if __name__ == "__main__":  # python -m tests.menagerie_models DIR: the folder MENAGERIE_ROOT=DIR serves
    import sys

    print(menagerie_root(Path(sys.argv[1])))
