"""``check_robot --fix``: settings that pass the whole robot check, found by search within the makers' band.

1. Gains, per actuator group, trained and held groups alike, judged by standing (a biped: with the base supported)
   and the step responses at a converged solver (100 / 50). First every group's kp is brought into the makers'
   band of its motor (``band.py``: mjlab's armature rule, or a stiffness per effort limit; a held group's band
   reaches up to the holding rule's kp, HOLD x M g r): lowered as well as raised, kd in proportion and at most the
   band's. Then an undamped or overshooting servo gets the kd of
   TARGET_DAMPING, the joint damping of the file counted; a sag or a fall raises kp by KP_STEP (kd in proportion)
   of the groups whose joints are furthest from their pose (legs splayed: of the splayed sideways joints' groups
   first), never above the band; feet sliding or legs splayed under contact settings other than the robot file's
   get the file's back (not under ``menagerie:NAME+fast``'s, asked for: ``fix``'s ``fast``); once it stands, a slow
   or short step response lowers a kd above what TARGET_DAMPING needs
   (the file's joint damping counted), else raises that trained group's kp up to the rule's kp at most (held
   groups never step: never raised for it). A file's own servos (``actuators="file"``) become actuator groups only
   when a gain has to change. A group left as it was that held the same values as a changed group of its joints'
   mirror twins takes that change too (a draft gives a joint whose actuator is missing a group of its own at its
   twin's values): left and right stay alike.
2. Solver settings (``fix_solver.py``), cheapest first: the iterations of ITERATION_LADDER at the contact model
   the spec runs (the robot file's cone and impratio unless the spec sets them); only if none passes, the other
   cone (a pyramidal cone at impratio 1: MuJoCo advises against a high impratio with it), said in one line with
   the reason. Each candidate is judged by the whole check (standing, feet not sliding, legs not splayed,
   SCREEN_ROLLOUTS random rollouts, then ROLLOUTS: a divergence rate of 1e-5 per step is seen). The first that
   passes is taken.
3. The physics step (``fix_step.py``): a quadruped whose check is OK is checked again at a 0.01 s step in 2
   substeps (the same 50 Hz control at half the physics' cost) and takes it only when that check is OK too.

The result is a RobotSpec; ``envs/robots/spec_source.py`` turns it into a diff of the robot file.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

import mujoco

from envs.robot_check.advice import (
    CONVERGED_SOLVER,
    RISE_TIME,
    STEADY_STATE,
    TARGET_DAMPING,
    Findings,
    file_contact,
    file_damping,
    kd_for,
    model_contact,
    overshoot_limits,
    overshoots,
    servo_findings,
    sliding,
    splayed,
    stands,
)
from envs.robot_check.band import Band, band, held
from envs.robot_check.fix_solver import FAST_LADDER, ITERATION_LADDER, search_solver, spec_with_solver
from envs.robot_check.fix_step import coarser_step, solver_floor
from envs.robot_check.rollouts import ROLLOUTS, ResetSpread
from envs.robot_check.servo import StepResponse, step_response
from envs.robot_check.text import num
from envs.robot_check.trials import Standing, quiet_mujoco_warnings
from envs.robot_check.verdict import evaluate, judged_standing
from envs.robots.patterns import covering_regex
from envs.robots.resolved import ResolvedRobot
from envs.robots.sides import twins
from envs.robots.spec import ActuatorGroup, RobotSpec
from envs.scenes.assemble import build
from envs.scenes.options import SceneOptions

KP_STEP = 1.5
"""kp grows by this factor per round of the gain search (kd by its square root: the damping ratio stays)."""
MAX_DAMPING = 1.5
"""kd is never raised beyond this damping ratio."""
ROUNDS = 16
"""Rounds of the gain search at most."""
GAIN_SOLVER = CONVERGED_SOLVER
"""Solver iterations / line-search iterations while gains are searched (MuJoCo's defaults: converged)."""
UNLIMITED_EFFORT = 1e4
"""Effort limit (N m) written for a file servo without a force range when it becomes an actuator group."""


@dataclass
class FixResult:
    """What ``fix`` found."""

    spec: RobotSpec
    """The spec with the settings found (the input spec where nothing had to change)."""
    report: dict[str, Any]
    """The whole robot check of ``spec``."""
    changes: list[str] = field(default_factory=list)
    """What was changed, and why (one line each)."""
    log: list[str] = field(default_factory=list)
    """One line per candidate tried."""
    seconds: float = 0.0


def fix(spec: RobotSpec, spread: ResetSpread, collisions: str = "full", seconds: float = 4.0,
        rollouts: int = ROLLOUTS, fast: bool = False) -> FixResult:
    """Search settings for ``spec`` that pass the whole check (module docstring); ``rollouts``: of the random-action
    trial that decides a solver setting. ``fast``: ``spec`` runs ``menagerie:NAME+fast``'s contact model
    (``envs/robots/menagerie.py`` ``fast_contact``), which is kept as asked (legs splayed or feet sliding under it
    get stiffer legs, not the file's contact model back) and searched on ``fix_solver.FAST_LADDER``."""
    t0 = time.perf_counter()
    out = FixResult(spec, {})
    with quiet_mujoco_warnings():
        scene = SceneOptions(collisions)
        out.spec = _gains(spec, scene, seconds, out, fast)
        ladder = solver_floor(out.spec, scene, FAST_LADDER if fast else ITERATION_LADDER)
        out.spec, trial = search_solver(out.spec, scene, spread, seconds, rollouts, out.log, out.changes, ladder)
        robot = build(out.spec, scene)
        out.report = evaluate(robot, spread, seconds, rollouts, own=trial)
        out.spec, out.report = coarser_step(out.spec, scene, spread, seconds, rollouts, out.report, out.log,
                                            out.changes)
    out.seconds = round(time.perf_counter() - t0, 1)
    return out


def group_band(g: ActuatorGroup, s: StepResponse) -> Band:
    """The makers' band of a group (its effort limit; its armature, else the joint's in the model); a held group's
    reaches up to the holding rule's kp (``band.held``)."""
    effort = g.effort_limit if g.effort_limit < UNLIMITED_EFFORT else math.inf
    return held(band(effort, g.armature if g.armature is not None else s.armature), s.carried)


def as_groups(spec: RobotSpec, robot: ResolvedRobot) -> tuple[ActuatorGroup, ...]:
    """The spec's actuator groups; a file's own servos as groups of identical gains and force range."""
    if not isinstance(spec.actuators, str):
        return spec.actuators
    m = robot.model
    names = tuple(robot.joint_names) + tuple(robot.held_joint_names)
    source = list(robot.ctrl_from_policy)
    keys: dict[tuple[float, float, float], list[str]] = {}
    for i, name in enumerate(names):
        a = source.index(i)
        effort = (float(abs(m.actuator_forcerange[a]).max()) if m.actuator_forcelimited[a] else UNLIMITED_EFFORT)
        kp, kd = float(m.actuator_gainprm[a, 0]), 0.0 - float(m.actuator_biasprm[a, 2])
        keys.setdefault((kp, kd, effort), []).append(name)
    return tuple(ActuatorGroup(covering_regex(members, names), kp=kp, kd=kd, effort_limit=effort)
                 for (kp, kd, effort), members in keys.items())


def _gains(spec: RobotSpec, scene: SceneOptions, seconds: float, out: FixResult, keep_contact: bool) -> RobotSpec:
    """Step 1 of the module docstring: rounds of standing and step responses at a converged solver
    (``keep_contact``: never the file's contact model back)."""
    solver = spec.sim
    for k in range(ROUNDS):
        robot = build(spec_with_solver(spec, *GAIN_SOLVER), scene)
        stand, _ = judged_standing(robot, seconds)
        steps = step_response(robot)
        out.log.append(f"gains {k + 1}: base {num(stand.base_height)} m of {num(spec.base_height)} m"
                       f"{' (supported)' if stand.supported else ''}, tilt {num(math.degrees(stand.tilt))} deg; "
                       + ", ".join(f"{s.group} kp {num(s.kp)} kd {num(s.kd)}" for s in steps))
        changed = _adjust(spec, robot, stand, steps, out, keep_contact)
        if changed is None:
            break
        spec = _mirror_kept(as_groups(spec, robot), changed, robot, out)
    return dataclasses.replace(spec, sim=dataclasses.replace(spec.sim, iterations=solver.iterations,
                                                            ls_iterations=solver.ls_iterations))


def _adjust(spec: RobotSpec, robot: ResolvedRobot, stand: Standing, steps: list[StepResponse],
            out: FixResult, keep_contact: bool) -> RobotSpec | None:
    """One round's change (servos first, then contact settings, then kp), or None: nothing to change."""
    opt = robot.model.opt
    euler = opt.integrator == mujoco.mjtIntegrator.mjINT_EULER
    limits = overshoot_limits(robot)
    bad = servo_findings(steps, opt.timestep, euler, Findings(), limits)
    banded = _into_band(spec, robot, steps, out)
    if banded is not None:
        return banded
    loose = [s for s in steps if s in bad or overshoots(s, limits)]
    if loose:
        return _damp(spec, robot, loose, euler, out)
    if stand.diverged_at is not None:
        return None
    if stands(stand, robot):
        return _quicken(spec, robot, steps, out)
    now, file = model_contact(robot.model), file_contact(robot)
    if (sliding(stand) or splayed(stand)) and not stand.supported and now != file and not keep_contact:
        why = "the legs splayed" if splayed(stand) else "the feet slid and the robot sank"
        out.changes.append(f"contact settings: the robot file's ({file.text()}) instead of {now.text()}: {why}")
        return dataclasses.replace(spec, sim=dataclasses.replace(spec.sim, cone=None, impratio=None))
    return _stiffen(spec, robot, stand, steps, out)


def _mirror_kept(before: tuple[ActuatorGroup, ...], spec: RobotSpec, robot: ResolvedRobot, out: FixResult
                 ) -> RobotSpec:
    """``spec`` after a round's change, with each group that was left as it was, though it held the same values as
    a changed group of its joints' mirror twins, given that group's new kp and kd: left and right stay alike (a
    draft keeps a joint whose actuator is missing in a group of its own, at its twin's values)."""
    if isinstance(spec.actuators, str) or len(spec.actuators) != len(before):
        return spec
    groups = list(spec.actuators)
    names = tuple(robot.joint_names) + tuple(robot.held_joint_names)
    twin_of = dict(zip(names, twins(names, spec.mirror), strict=True))
    for old, new in zip(before, spec.actuators, strict=True):
        if (old.kp, old.kd) == (new.kp, new.kd):
            continue
        for i, (o, n) in enumerate(zip(before, spec.actuators, strict=True)):
            if o is old or n != o or o != dataclasses.replace(old, joints=o.joints):
                continue
            if any(re.fullmatch(o.joints, j) and re.fullmatch(new.joints, twin_of[j]) for j in names):
                groups[i] = dataclasses.replace(o, kp=new.kp, kd=new.kd)
                out.changes.append(f"{o.joints}: kp {num(o.kp)} -> {num(new.kp)}, kd {num(o.kd)} -> {num(new.kd)} "
                                   f"(as its mirror twins' group {new.joints}: left and right kept alike)")
    return dataclasses.replace(spec, actuators=tuple(groups))


def _group_index(groups: tuple[ActuatorGroup, ...], joint: str) -> int:
    return next(k for k, g in enumerate(groups) if re.fullmatch(g.joints, joint))


def _into_band(spec: RobotSpec, robot: ResolvedRobot, steps: list[StepResponse], out: FixResult
               ) -> RobotSpec | None:
    """Each group's kp brought into its band (lowered or raised; kd in proportion, at most the band's)."""
    groups = list(as_groups(spec, robot))
    changed = False
    for s in steps:
        k = _group_index(tuple(groups), s.joints[0])
        g = groups[k]
        b = group_band(g, s)
        kp = _round(b.clamp(g.kp))
        kd = _round(min(g.kd * math.sqrt(kp / max(g.kp, 1e-9)), b.kd_high))
        if kp != g.kp and not (b.low <= g.kp <= b.high):
            groups[k] = dataclasses.replace(g, kp=kp, kd=kd)
            out.changes.append(f"{g.joints}: kp {num(g.kp)} -> {num(kp)}, kd {num(g.kd)} -> {num(kd)} (into the "
                               f"makers' band {b.text()})")
            changed = True
    return dataclasses.replace(spec, actuators=tuple(groups)) if changed else None


def _damp(spec: RobotSpec, robot: ResolvedRobot, loose: list[StepResponse], euler: bool,
          out: FixResult) -> RobotSpec | None:
    groups = list(as_groups(spec, robot))
    changed = False
    for s in loose:
        k = _group_index(tuple(groups), s.joints[0])
        g = groups[k]
        target = min(kd_for(dataclasses.replace(s, kp=g.kp)), group_band(g, s).kd_high)
        if s.damping_ratio < TARGET_DAMPING and target > g.kd:
            groups[k] = dataclasses.replace(g, kd=_round(target))
            joint = f", the joint damping {num(s.joint_damping)} counted" if s.joint_damping else ""
            out.changes.append(f"{g.joints}: kd {num(g.kd)} -> {num(groups[k].kd)} (damping ratio "
                               f"{num(s.damping_ratio)} -> {num(TARGET_DAMPING)}{joint}; the servo overshot or "
                               "oscillated)")
            changed = True
    if changed:
        return dataclasses.replace(spec, actuators=tuple(groups))
    if euler and spec.sim.integrator is None:
        out.changes.append("integrator: implicitfast (MuJoCo's default Euler applies kd explicitly and the servo "
                           "oscillated)")
        return dataclasses.replace(spec, sim=dataclasses.replace(spec.sim, integrator="implicitfast"))
    return None


def _raised(spec: RobotSpec, robot: ResolvedRobot, steps: list[StepResponse], wanted: list[tuple[str, str]],
            out: FixResult, to_rule: bool = False) -> RobotSpec | None:
    """kp x KP_STEP (within the group's band, or up to its rule's kp with ``to_rule``; kd x the square root of the
    factor: the damping ratio stays) for the group of each (joint, why) of ``wanted``, once per group; None: none
    could rise."""
    groups = list(as_groups(spec, robot))
    raised: list[int] = []
    for joint, why in wanted:
        k = _group_index(tuple(groups), joint)
        g = groups[k]
        s = next(x for x in steps if joint in x.joints)
        b = group_band(g, s)
        low, high = b.low, min(b.high, b.rule_kp) if to_rule else b.high
        if k in raised or g.kp >= high * 0.999:
            continue
        kp = min(max(g.kp * KP_STEP, low), high)
        groups[k] = dataclasses.replace(g, kp=_round(kp), kd=_round(g.kd * math.sqrt(kp / g.kp)))
        raised.append(k)
        kd = f", kd {num(g.kd)} -> {num(groups[k].kd)}" if groups[k].kd != g.kd else ""
        out.changes.append(f"{g.joints}: kp {num(g.kp)} -> {num(groups[k].kp)}{kd} ({why})")
    return dataclasses.replace(spec, actuators=tuple(groups)) if raised else None


def _stiffen(spec: RobotSpec, robot: ResolvedRobot, stand: Standing, steps: list[StepResponse],
             out: FixResult) -> RobotSpec | None:
    """Raise kp of the groups of the splayed sideways joints, when the legs splay, else of the joints furthest
    from their pose (off by at least half the worst)."""
    wide = splayed(stand)
    if wide:
        raised = _raised(spec, robot, steps, [(j, f"{j} {num(e)} rad sideways off its pose: the legs splayed")
                                              for j, e in wide.items()], out)
        if raised is not None:
            return raised
    worst = max((abs(e) for e in stand.pose_error.values()), default=0.0)
    supported = " with the base supported" if stand.supported else ""
    return _raised(spec, robot, steps, [(j, f"{j} {num(e)} rad off its pose{supported}")
                                        for j, e in stand.pose_error.items() if abs(e) >= 0.5 * worst], out)


def _quicken(spec: RobotSpec, robot: ResolvedRobot, steps: list[StepResponse], out: FixResult) -> RobotSpec | None:
    """Raise kp of the trained groups whose step response is slow or falls short (the check's advice; held joints
    never step)."""
    slow = [s for s in steps if not s.held and (s.steady_state_error > STEADY_STATE
                                                or (s.rise_time > RISE_TIME and not s.step_limited))]
    eased = _eased(spec, robot, [s for s in slow if s.kd > 1.2 * kd_for(s)], out)
    if eased is not None:
        return eased
    return _raised(spec, robot, steps, [(s.joints[0], f"step response: rise {num(s.rise_time)} s, "
                                              f"{num(100 * s.steady_state_error)}% left after 0.5 s") for s in slow],
                   out, to_rule=True)


def _eased(spec: RobotSpec, robot: ResolvedRobot, slow: list[StepResponse], out: FixResult) -> RobotSpec | None:
    """kd lowered to what TARGET_DAMPING needs (the joint damping counted) on slow groups damped beyond it."""
    if not slow:
        return None
    groups = list(as_groups(spec, robot))
    for s in slow:
        k = _group_index(tuple(groups), s.joints[0])
        g = groups[k]
        kd = _round(kd_for(s))
        groups[k] = dataclasses.replace(g, kd=kd)
        out.changes.append(f"{g.joints}: kd {num(g.kd)} -> {num(kd)} (rise {num(s.rise_time)} s at damping ratio "
                           f"{num(s.damping_ratio)}{file_damping(s)})")
    return dataclasses.replace(spec, actuators=tuple(groups))


def _round(x: float) -> float:
    """Three significant digits (what the spec file shows)."""
    return float(f"{x:.3g}")
