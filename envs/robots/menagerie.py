"""Robots by name from MuJoCo Menagerie, through Google DeepMind's ``mujoco-menagerie`` package (an optional
extra: ``pip install -e '.[menagerie]'``): ``menagerie:NAME`` (flat), ``menagerie:NAME:rough``,
``menagerie:NAME@ENTRY:flat``, ``menagerie:NAME:deploy`` (flat, for the real robot: ``configs/drafted.py``);
``menagerie:NAME+fast[:TASK]`` trains on the cheaper contact model of MuJoCo Playground and mjlab instead of the
file's (``fast_contact``).
The package resolves ``NAME`` to a model folder: its download cache, or
``MENAGERIE_ROOT=/dir`` (``/dir/<NAME>/``, no download); ``ENTRY`` is one of its entry points (default: the robot
alone, the package's ``default_model``; a scene entry, which brings its own floor, is refused).

One-line ``UserError`` for: the package missing (the install command), an unknown name (the closest legged
robots), a robot of another category (arm, hand, ...), an unknown entry, nothing cached and no network
(``MENAGERIE_ROOT``).
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.errors import UserError
from envs.robots.spec import RobotSpec

PREFIX = "menagerie:"
"""Task names that start with this are Menagerie robots."""
LEGGED = ("quadruped", "humanoid", "biped")
"""The package's categories of robots that walk."""
TERRAINS = ("flat", "rough", "track", "deploy")
"""The tasks of a Menagerie robot: ``menagerie:NAME`` is ``menagerie:NAME:flat``; ``track`` reproduces motion clips
(``env.clips=[...]``, docs/motion.md); ``deploy`` is the flat task for the real robot (joint state and IMU alone,
hardware randomization: docs/deploy.md)."""
MODIFIERS = ("fast",)
"""What may follow ``NAME[@ENTRY]+``: ``fast``, the cheaper contact model (module docstring)."""
INSTALL = "pip install -e '.[menagerie]' (or pip install mujoco-menagerie)"


@dataclass(frozen=True)
class MenagerieRef:
    """``menagerie:NAME[@ENTRY][+fast][:flat|:rough|:track|:deploy]``, parsed."""

    name: str
    entry: str | None
    terrain: str
    fast: bool = False
    """``+fast``: the cheaper contact model (module docstring)."""

    @property
    def robot_id(self) -> str:
        """``NAME`` or ``NAME@ENTRY``: what a reviewed spec file and the caches are named after."""
        return self.name + (f"@{self.entry}" if self.entry else "")


def is_menagerie(task: str) -> bool:
    return task.startswith(PREFIX)


def parse(task: str) -> MenagerieRef:
    """The parts of a ``menagerie:...`` task name; one-line errors."""
    body = task[len(PREFIX):]
    robot, _, terrain = body.partition(":")
    robot, plus, modifier = robot.partition("+")
    if plus and modifier not in MODIFIERS:
        raise UserError(f"--task {task}: {modifier!r} after '+' is not allowed; allowed: {', '.join(MODIFIERS)} "
                        f"(menagerie:{robot}+fast trains on MuJoCo Playground's and mjlab's cheaper contact model)")
    name, _, entry = robot.partition("@")
    terrain = terrain or "flat"
    if not name:
        raise UserError(f"--task {task}: give a robot name: menagerie:NAME (e.g. menagerie:unitree_go2)")
    if terrain not in TERRAINS:
        raise UserError(f"--task {task}: {terrain!r} is not a task of a Menagerie robot; allowed: "
                        f"{', '.join(TERRAINS)} (menagerie:{robot}:rough; menagerie:{robot}:track "
                        f"env.clips=[clip.csv] reproduces motion clips; menagerie:{robot}:deploy is for the real "
                        "robot)")
    return MenagerieRef(name, entry or None, terrain, bool(plus))


def fast_contact(spec: RobotSpec) -> RobotSpec:
    """``spec`` on the contact model MuJoCo Playground's and mjlab's Go1 / Go2 train with, instead of the file's: a
    pyramidal friction cone at impratio 1 (MuJoCo advises against a high impratio with it) and feet of condim 3
    (sliding friction only). On the Unitree-style test model (the file's elliptic cone at impratio 100, feet of
    condim 6) a step costs 18.6 us at the 4 / 6 iterations that then pass the robot check, against 63.4 us at the
    20 / 20 the file's model needs (docs/robots.md, "+fast"); the robot check judges it like any setting."""
    return dataclasses.replace(spec, sim=dataclasses.replace(spec.sim, cone="pyramidal", impratio=1.0,
                                                             foot_condim=3))


def package() -> Any:
    """The ``mujoco_menagerie`` module, or one line with the install command."""
    try:
        import mujoco_menagerie
    except ImportError:
        raise UserError(f"menagerie robots need the mujoco-menagerie package: {INSTALL}") from None
    return mujoco_menagerie


def robot(ref: MenagerieRef) -> Any:
    """The package's metadata of a legged robot (no download); one-line errors."""
    mm = package()
    try:
        meta = mm.get(ref.name)
    except mm.UnknownRobotError:
        legged = [r.name for r in mm.robots() if r.category in LEGGED]
        close = difflib.get_close_matches(ref.name, legged, n=3, cutoff=0.4) or difflib.get_close_matches(
            ref.name, mm.names(), n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(close)}?" if close else f"the legged ones: {', '.join(legged)}"
        raise UserError(f"menagerie: no robot named {ref.name!r}; {hint}") from None
    if meta.category not in LEGGED:
        raise UserError(f"menagerie:{ref.name} is a robot of category {meta.category!r} ({meta.display_name}); "
                        f"the locomotion tasks need a legged one ({', '.join(LEGGED)})")
    return meta


def entry_name(ref: MenagerieRef, meta: Any) -> str:
    """The robot entry point (default: the package's ``default_model``); one-line errors."""
    entry = ref.entry or meta.default_model
    robots = [e.name for e in meta.entry_points if e.kind == "robot"]
    if entry not in meta.entry_names:
        raise UserError(f"menagerie:{ref.name}@{entry}: no such entry point; its robot entries: {', '.join(robots)}")
    if entry not in robots:
        raise UserError(f"menagerie:{ref.name}@{entry} is a scene (its own floor and lights); the task builds the "
                        f"scene: use a robot entry: {', '.join(robots)}")
    return entry


def xml_path(ref: MenagerieRef) -> Path:
    """The robot entry's XML file on disk (the package's cache, downloading, or ``MENAGERIE_ROOT``)."""
    mm = package()
    meta = robot(ref)
    entry = entry_name(ref, meta)
    try:
        return Path(meta.xml(entry))
    except mm.DownloadError as e:
        raise UserError(f"menagerie:{ref.name}: not in the package's cache and it could not be downloaded "
                        f"({' '.join(str(e).split())}); on a machine without network set MENAGERIE_ROOT=/dir to a "
                        f"Menagerie checkout (/dir/{ref.name}/{meta.entry(entry).file})") from None
    except mm.MenagerieError as e:
        raise UserError(f"menagerie:{ref.name}: {' '.join(str(e).split())}") from None


def menagerie_xml(name: str, entry: str | None = None) -> Path:
    """A robot file's ``mjcf`` for a Menagerie robot (what a drafted file writes): its entry's XML path."""
    return xml_path(MenagerieRef(name, entry, "flat"))


def files_digest(ref: MenagerieRef) -> str:
    """A digest of every file the robot entry depends on (its XML, includes, meshes)."""
    meta = robot(ref)
    h = hashlib.sha256()
    for path in meta.files(entry_name(ref, meta)):
        h.update(Path(path).name.encode())
        h.update(Path(path).read_bytes())
    return h.hexdigest()
