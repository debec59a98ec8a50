"""``--task menagerie:NAME[@ENTRY][+fast][:flat|:rough|:track|:deploy]``: a MuJoCo Menagerie robot by name
(``envs/robots/menagerie.py``; ``+fast``: the cheaper contact model of its ``fast_contact``).

A reviewed spec shipped here (``configs/menagerie_robots/NAME.py`` or ``NAME@ENTRY.py``, defining ``flat`` and
``rough`` like any robot file) takes precedence. Without one, the spec is drafted from the robot's file
(``envs/robots/draft.py``, what ``tools.new_robot`` writes) with the robot check's ``--fix`` settings
(``envs/robot_check/fix.py``), searched once per robot file and kept in a cache (``LEGGED_MJX_CACHE``, default
``~/.cache/legged-mjx``), so ``play.py`` and later runs rebuild the same robot at once. The first line printed says
which.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from configs.drafted import drafted_task, file_deploy_task
from contract.errors import UserError
from envs.registry import TaskSpec, load_file_task, remember
from envs.robots.draft import draft
from envs.robots.menagerie import MenagerieRef, fast_contact, files_digest, parse, xml_path
from envs.robots.spec import ActuatorGroup, RobotSpec, SimOverrides
from envs.robots.spec_source import write_atomic

REVIEWED = Path(__file__).with_name("menagerie_robots")
"""Reviewed spec files by robot name (none shipped yet)."""
FIX_VERSION = 11
"""Bumped when the draft or the search changes what they find: older cache entries are searched again (5: held joints
drafted and kept at the holding rule's kp, ``envs/robots/draft_gains.py`` HOLD; 6: held joints' kd critically damps
the inertia they carry, HOLD_DAMPING; 7: ``--fix`` gives a group its mirror twins' new values, so a joint whose
actuator the file lacks ends as its twins do; 8: a file without actuators drafts its legs on mjlab's rule from
their armature, ``draft_gains.armature_rule``; 9: instead at 1 x their effort limit, kd critically damping the
armature, ``draft_gains.LEGS_DAMPING``; 10: a quadruped takes a 0.01 s physics step in 2 substeps when the whole
check passes there, ``envs/robot_check/fix_step.py``; 11: there a servo's overshoot is judged against its overshoot
at 0.005 s, ``envs/robot_check/advice.overshoot_limits``)."""


def cache_dir() -> Path:
    return Path(os.environ.get("LEGGED_MJX_CACHE") or Path.home() / ".cache" / "legged-mjx") / "menagerie"


def menagerie_task(task: str) -> TaskSpec:
    """The task of ``menagerie:...`` (module docstring), registered under that name."""
    ref = parse(task)
    reviewed = REVIEWED / f"{ref.robot_id}.py"
    if reviewed.is_file():
        if ref.fast:
            raise UserError(f"--task {task}: the reviewed spec {reviewed} sets its own contact model (its sim="
                            "SimOverrides(cone=..., impratio=..., foot_condim=...)); +fast is for drafted robots")
        spec = (file_deploy_task(f"{reviewed}:deploy") if ref.terrain == "deploy"
                else load_file_task(f"{reviewed}:{ref.terrain}"))
        print(f"{task}: the reviewed spec {reviewed}")
        return remember(dataclasses.replace(spec, name=task))
    path = xml_path(ref)
    d = draft(path, ref.robot_id.replace("@", "_"))
    robot, how = fixed(ref, fast_contact(d.spec) if ref.fast else d.spec)
    print(f"{task}: no reviewed spec in this repo: the spec drafted from {path} (python -m tools.new_robot "
          f"menagerie:{ref.robot_id}{'+fast' if ref.fast else ''} writes it) with the robot check's --fix settings "
          f"({how})")
    if robot.sim.substeps is not None:
        print(f"{task}: physics steps of {robot.sim.timestep:g} s, {robot.sim.substeps} per control step (the robot "
              "check passes there: docs/robots.md, \"The physics step\")")
    if not ref.fast and _elliptic(path):
        suffix = "" if ref.terrain == "flat" else f":{ref.terrain}"
        print(f"{task}: the file's elliptic friction cone is most of its physics cost on a CPU; "
              f"menagerie:{ref.robot_id}+fast{suffix} trains on MuJoCo Playground's and mjlab's cheaper contact model "
              "(docs/robots.md)")
    if ref.fast:
        print(f"{task}: +fast: a pyramidal cone at impratio 1 and feet of condim 3 (MuJoCo Playground's and mjlab's "
              "contact model), not the file's; rehearse the policy on the file's own with python -m deploy.rehearse "
              f"POLICY --model {path}")
    if ref.terrain == "track":
        from configs.track import drafted_track_task

        return remember(drafted_track_task(task, robot))
    spec = drafted_task(task, robot, d.kind, ref.terrain, bool(d.mirror_pairs), **d.biped_env)
    return remember(spec)


def _elliptic(path: Path) -> bool:
    """Whether the robot file declares an elliptic friction cone (parsed, not compiled)."""
    import mujoco

    return mujoco.MjSpec.from_file(str(path)).option.cone == mujoco.mjtCone.mjCONE_ELLIPTIC


def cache_path(ref: MenagerieRef) -> Path:
    """Where ``fixed`` keeps the ``--fix`` settings of ``ref``'s robot file (``+fast``: apart)."""
    fast = "+fast" if ref.fast else ""
    return cache_dir() / f"{ref.robot_id}{fast}-{files_digest(ref)[:16]}-v{FIX_VERSION}.json"


def fixed(ref: MenagerieRef, spec: RobotSpec) -> tuple[RobotSpec, str]:
    """``spec`` with the ``--fix`` settings: from the cache, else searched now and cached; and how."""
    from envs.robot_check.fix import fix
    from envs.robot_check.rollouts import ResetSpread
    from envs.tasks.locomotion.config import LocomotionEnvConfig

    path = cache_path(ref)
    if path.is_file():
        saved = json.loads(path.read_text())
        return _applied(spec, saved), f"cached in {path}"
    rnd = LocomotionEnvConfig().randomization
    result = fix(spec, ResetSpread(rnd.init_joint_scale, rnd.init_base_vel), fast=ref.fast)
    saved = {"actuators": [dataclasses.asdict(g) for g in result.spec.actuators]
             if not isinstance(result.spec.actuators, str) else result.spec.actuators,
             "sim": dataclasses.asdict(result.spec.sim), "verdict": result.report["verdict"],
             "changes": result.changes, "seconds": result.seconds}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(saved, indent=1))
    return _applied(spec, saved), f"searched in {result.seconds:g} s, verdict {saved['verdict']}; cached in {path}"


def _applied(spec: RobotSpec, saved: dict[str, Any]) -> RobotSpec:
    acts = saved["actuators"]
    sim = SimOverrides(**saved["sim"])
    if isinstance(acts, str):  # the draft's own servos were kept
        return dataclasses.replace(spec, sim=sim)
    return dataclasses.replace(spec, actuators=tuple(ActuatorGroup(**g) for g in acts), sim=sim)
