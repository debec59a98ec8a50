"""The robot check's findings: problems (FAIL), advice (WARN) and notes, each with its numbers and what to change,
from the trials' results. The thresholds are the constants below.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import mujoco

from envs.robot_check.band import band, held, makers_text
from envs.robot_check.rollouts import SolverTrial, rate_text
from envs.robot_check.servo import StepResponse, step_response
from envs.robot_check.text import num, pct
from envs.robot_check.trials import Standing
from envs.robots.resolved import ResolvedRobot

SAG = 0.8
"""The base settling below this share of ``base_height`` is a sag (the built-in robots stand at 0.9 to 1.0)."""
CONVERGED_SOLVER = (100, 50)
"""Solver iterations / line-search iterations at which the gains are judged (MuJoCo's defaults: converged)."""
SOLVER_SAG = 0.97
"""Under a cheaper solver setting the base may settle down to this share of the height it settles at under
CONVERGED_SOLVER, or to SAG x ``base_height``, whichever is lower: the sag is the gains' (judged converged), and a
cheaper solver may not add more than 3% to it (the Go2-style file at 4 / 6 iterations, elliptic cone and impratio
100 settles at 0.246 m against 0.251 m converged, with SAG x ``base_height`` at 0.248 m)."""
FALL_TILT = 0.5
"""A tilt above this (rad) while standing is a fall."""
CONTACT_SHARE = 0.05
"""A non-foot body touching the floor more than this share of the standing steps fires."""
LIMIT_SHARE = 0.5
"""A joint at its limit more than this share of the last second is pinned there."""
SATURATION_SHARE = 0.1
"""A servo saturated more than this share of the last second cannot hold the pose."""
OVERSHOOT = 0.5
"""Step-response overshoot above this share of the step: underdamped."""
STEADY_STATE = 0.5
"""Step-response error above this share of the step after 0.5 s: the gain is low for the leg's own weight."""
REFERENCE_STEP = 0.005
"""The physics step (s) OVERSHOOT is set for: the tasks' 4 x 0.005 s per control step."""
COARSE_OVERSHOOT = 0.02
"""At a physics step coarser than REFERENCE_STEP (``fix_step``: 0.01 s), a group may overshoot up to this much more
of the step than it does at REFERENCE_STEP, where OVERSHOOT holds: a PD loop stepped twice as coarsely rings a
little more (the Go2-style, ANYbotics-style and G1-style test models: 0.3 to 1.4 points more at 0.01 s)."""
UNSTABLE = 1.0
"""Step-response overshoot or error above this share of the step: the servo itself is unstable."""
STILL_MOVING = 1.0
"""A joint still moving faster than this (rad/s) at the end of the step response oscillates: unstable too (its
force limit bounds the oscillation, so the overshoot and error alone can look moderate)."""
RISE_TIME = 0.15
"""Step-response rise time above this (s): slow for a 50 Hz policy."""
UNDERDAMPED = 0.15
"""A servo whose damping ratio is below this and that oscillates is undamped: it needs more kd, not less."""
TARGET_DAMPING = 0.3
"""The damping ratio kd is raised to (robot makers' servos run at about 0.2 to 0.5)."""
SLIDE = 0.05
"""A foot sliding more than this (m) while standing still slides: the contact settings let it (the built-in
quadruped's rear feet move about 3 cm back as it settles after the drop)."""
SPLAY = 0.2
"""A sideways joint (hip abduction / roll: ``trials.Sim.sideways``) of a free-standing robot further than this (rad)
from its pose splays the leg (the built-in quadruped's rear hips settle 0.155 rad out, examples/go_like's 0.074,
examples/anymal_like's 0.061; the built-in quadruped with its hips at kp 10 instead of 20: 0.261; ``python -m
tools.check_robot --json`` shows each joint's under ``standing.splay``)."""
POSE_OFF = 0.3
"""A held joint (or, with the base supported, any driven joint) further than this (rad) from its target while
standing cannot hold the pose (a free-standing robot's legs are judged by its sag)."""
HIGH_IMPRATIO = 10.0
"""A pyramidal cone with an impratio above this is advised against (MuJoCo's reference: high impratio is not
recommended with pyramidal cones); ``--fix`` never leaves one."""
DIVERGENCE_RATE = 1e-5
"""Diverged rollouts per world-step above this fail the random-action trial (1024 rollouts of 2 s at 5 ms:
about 4 diverged rollouts)."""


@dataclass
class Findings:
    """What the check concludes: problems (FAIL), advice (WARN) and notes (information)."""

    problems: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Contact:
    """Contact settings: the friction cone and impratio."""

    cone: str
    impratio: float

    def text(self) -> str:
        return f"{self.cone} cone, impratio {num(self.impratio)}"


def model_contact(m: mujoco.MjModel) -> Contact:
    return Contact("elliptic" if m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else "pyramidal", float(m.opt.impratio))


def file_contact(robot: ResolvedRobot) -> Contact:
    """The contact settings of the robot's own file (before the spec's ``SimOverrides``)."""
    spec = mujoco.MjSpec.from_file(str(Path(robot.spec.mjcf)))
    return Contact("elliptic" if spec.option.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else "pyramidal",
                   float(spec.option.impratio))


def unstable(s: StepResponse) -> bool:
    return s.overshoot > UNSTABLE or s.steady_state_error > UNSTABLE or s.final_speed > STILL_MOVING


def kd_for(s: StepResponse, ratio: float = TARGET_DAMPING) -> float:
    """The kd that gives the group's worst joint ``ratio``, its joint damping counted (0 when that alone does)."""
    return max(0.0, 2.0 * ratio * math.sqrt(max(s.kp, 0.0) * max(s.inertia, 0.0)) - s.joint_damping)


def file_damping(s: StepResponse) -> str:
    """``; the joint damping=2 already gives damping ratio 1.1 at kd 0, friction loss 0.2 N m`` (or "")."""
    parts = []
    if s.joint_damping > 0:
        parts.append(f"the joint damping={num(s.joint_damping)} already gives damping ratio {num(s.kd_alone())} at "
                     "kd 0")
    if s.frictionloss > 0:
        parts.append(f"friction loss {num(s.frictionloss)} N m")
    return "; " + ", ".join(parts) if parts else ""


def _rise(s: StepResponse, f: Findings) -> None:
    """A slow step response: a note for a held group (held joints never step) or at the band's top kp (the motor's
    limit), else advice naming kp's room in the band and whether kd (or the joint damping) slows it."""
    b = band(s.effort, s.armature)
    what = f"{s.group}: rise time {num(s.rise_time)} s for a {num(s.step)} rad step"
    if s.held:
        f.notes.append(f"{what} (held: held joints never step; their gains only hold the pose)")
        return
    lower = (f" or lower kd (now {num(s.kd)}) to about {num(kd_for(s))}" if s.kd > 1.2 * kd_for(s) else "")
    if s.kp >= 0.999 * min(b.high, b.rule_kp) and not lower:
        f.notes.append(f"{what} at kp {num(s.kp)}, the makers' rule or above ({b.text()}): as fast as makers run it"
                       f"{file_damping(s)}")
        return
    f.advice.append(f"{what}: raise kp (now {num(s.kp)}; band {num(b.low)}-{num(b.high)}){lower}{file_damping(s)}")


def _above_band(s: StepResponse, f: Findings) -> None:
    """A kp above the makers' band, with the band and the makers' values for that size of motor: advice for the
    robot file's own servos, a note for gains the spec sets (chosen by hand: the built-in humanoid's). A held
    group's band reaches up to the holding rule's kp (``band.held``)."""
    b = held(band(s.effort, s.armature), s.carried)
    if s.kp > 1.001 * b.high:
        what = "a held joint on this motor" if b.hold else "this motor"
        (f.advice if s.from_file else f.notes).append(
            f"{s.group}: kp {num(s.kp)} is above the makers' band for {what} ({b.text()}; effort limit "
            f"{num(s.effort)} N m): lower kp; {makers_text(s.effort)}")


def overshoot_limits(robot: ResolvedRobot) -> dict[str, float]:
    """Each group's overshoot limit where the robot's physics step is coarser than REFERENCE_STEP: its overshoot
    there plus COARSE_OVERSHOOT, at least OVERSHOOT, at most UNSTABLE; {} at REFERENCE_STEP or finer (OVERSHOOT)."""
    if robot.model.opt.timestep <= REFERENCE_STEP + 1e-9:
        return {}
    fine = copy.deepcopy(robot.model)
    fine.opt.timestep = REFERENCE_STEP
    return {s.group: min(UNSTABLE, max(OVERSHOOT, s.overshoot + COARSE_OVERSHOOT))
            for s in step_response(dataclasses.replace(robot, model=fine))}


def overshoots(s: StepResponse, limits: Mapping[str, float]) -> bool:
    return s.overshoot > limits.get(s.group, OVERSHOOT)


def servo_findings(steps: list[StepResponse], timestep: float, euler: bool, f: Findings,
                   limits: Mapping[str, float] | None = None) -> list[StepResponse]:
    """Problems / advice from the step responses; returns the unstable groups. ``limits``: ``overshoot_limits``
    (none: OVERSHOOT for every group)."""
    limits = limits or {}
    bad = [s for s in steps if unstable(s)]
    for s in steps:
        motion = (f"step response overshoot {pct(s.overshoot)}, {pct(s.steady_state_error)} of the step off after "
                  f"0.5 s, still moving at {num(s.final_speed)} rad/s")
        if s in bad and s.damping_ratio < UNDERDAMPED:
            f.problems.append(f"{s.group}: the servo is undamped (damping ratio {num(s.damping_ratio)}: kd "
                              f"{num(s.kd)} at kp {num(s.kp)} on {num(s.inertia)} kg m^2; {motion}): raise kd (now "
                              f"{num(s.kd)}) to about {num(kd_for(s))} (damping ratio {num(TARGET_DAMPING)})")
            continue
        if s in bad:
            fix = ("SimOverrides(integrator='implicitfast') (MuJoCo's default Euler applies kd explicitly), "
                   if euler else "")
            f.problems.append(f"{s.group}: the servo is unstable ({motion}): {fix}lower kd (now {num(s.kd)}) or kp "
                              f"(now {num(s.kp)}), add armature, or lower the timestep ({num(timestep)} s)")
            continue
        if s.overshoot > OVERSHOOT and not overshoots(s, limits):
            f.notes.append(f"{s.group}: step response overshoots by {pct(s.overshoot)} at the {num(timestep)} s "
                           f"step, within {pct(COARSE_OVERSHOOT)} of its {pct(limits[s.group] - COARSE_OVERSHOOT)} "
                           f"at {num(REFERENCE_STEP)} s (a coarser step rings a little more)")
        if overshoots(s, limits):
            f.advice.append(f"{s.group}: step response overshoots by {pct(s.overshoot)} (damping ratio "
                            f"{num(s.damping_ratio)}): raise kd (now {num(s.kd)}) to about {num(kd_for(s))}, or "
                            f"add armature{file_damping(s)}")
        if s.steady_state_error > STEADY_STATE:
            f.advice.append(f"{s.group}: {pct(s.steady_state_error)} of the {num(s.step)} rad step left after 0.5 s: "
                            f"raise kp (now {num(s.kp)})")
        elif s.rise_time > RISE_TIME:
            _rise(s, f)
        _above_band(s, f)
    return bad


def group_of(joint: str, steps: list[StepResponse]) -> StepResponse | None:
    return next((s for s in steps if joint in s.joints), None)


def furthest(stand: Standing, steps: list[StepResponse]) -> str:
    """``joints furthest from their pose: knee 0.24 rad (group '.*_knee', kp 100), ...``."""
    parts = []
    for j, err in stand.pose_error.items():
        g = group_of(j, steps)
        held = " held" if g is not None and g.held else ""
        parts.append(f"{j}{held} {num(err)} rad" + (f" (kp {num(g.kp)})" if g is not None else ""))
    return "joints furthest from their pose: " + ", ".join(parts) if parts else ""


def drift_text(stand: Standing) -> str:
    worst = sorted(stand.foot_drift.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {num(v)} m" for k, v in worst[:2])


def sliding(stand: Standing) -> bool:
    return max(stand.foot_drift.values(), default=0.0) > SLIDE


def splayed(stand: Standing) -> dict[str, float]:
    """The sideways joints further than SPLAY from their pose, a free-standing robot's (largest first)."""
    if stand.supported:
        return {}
    return dict(sorted(((j, e) for j, e in stand.splay.items() if abs(e) > SPLAY), key=lambda kv: -abs(kv[1])))


def splay_text(stand: Standing) -> str:
    """``RR_hip_joint 0.26 rad, RL_hip_joint -0.26 rad``: the splayed joints (two at most)."""
    return ", ".join(f"{j} {num(e)} rad" for j, e in list(splayed(stand).items())[:2])


def splay_fix(stand: Standing, steps: list[StepResponse], contact: tuple[Contact, Contact]) -> str:
    """Contact settings other than the file's: the file's back; else raise kp of the splayed joints' groups below
    their band's top (the band named); else the feet's friction or an elliptic cone (``slide_fix``)."""
    now, file = contact
    if now != file:
        return slide_fix(now, file)
    groups: list[StepResponse] = []
    for j in splayed(stand):
        g = group_of(j, steps)
        if g is not None and g not in groups and g.kp < 0.999 * band(g.effort, g.armature).high:
            groups.append(g)
    if not groups:
        return slide_fix(now, file)
    return "raise kp of the sideways joints (" + ", ".join(
        f"{g.group}: kp {num(g.kp)} / kd {num(g.kd)}, band {num(band(g.effort, g.armature).low)}-"
        f"{num(band(g.effort, g.armature).high)}" for g in groups) + ")"


def raise_kp(stand: Standing, steps: list[StepResponse]) -> str:
    """Raise kp of the groups of the joints furthest from their pose (those off by more than half the worst)."""
    worst = max((abs(e) for e in stand.pose_error.values()), default=0.0)
    named: list[StepResponse] = []
    for j, err in stand.pose_error.items():
        g = group_of(j, steps)
        if g is not None and g not in named and abs(err) >= 0.5 * worst:
            named.append(g)
    if not named:
        named = steps
    return "raise kp (" + ", ".join(f"{g.group}: kp {num(g.kp)} / kd {num(g.kd)}" for g in named) + ")"


def slide_fix(now: Contact, file: Contact) -> str:
    if now != file:
        return (f"the contact settings let the feet slide ({now.text()}; the robot's file has {file.text()}): keep "
                "the file's (leave SimOverrides' cone and impratio unset)")
    return (f"the contact settings let the feet slide ({now.text()}, the file's own): raise the feet's friction, or "
            "use an elliptic cone with a high impratio (100)")


def cone_finding(now: Contact, file: Contact, f: Findings) -> None:
    """Advice against a pyramidal cone at a high impratio (HIGH_IMPRATIO)."""
    if now.cone == "pyramidal" and now.impratio > HIGH_IMPRATIO:
        back = (f"keep the file's {file.text()} (leave SimOverrides' cone and impratio unset)" if file != now
                else "use an elliptic cone (SimOverrides(cone='elliptic')) or impratio 1")
        f.advice.append(f"{now.text()}: MuJoCo advises against a high impratio with a pyramidal cone: {back}")


def divergence_finding(trial: SolverTrial, opt: mujoco.MjOption, f: Findings) -> None:
    if trial.rate > DIVERGENCE_RATE:
        n = round(trial.diverged * trial.rollouts)
        f.problems.append(f"{n} of {trial.rollouts} rollouts with random actions and pushes diverge with the task's "
                          f"solver settings ({opt.iterations} / {opt.ls_iterations} iterations, {trial.cone}; "
                          f"{rate_text(trial.rate)} per step): raise the iterations (SimOverrides or "
                          f"env.solver_iterations / env.ls_iterations), lower the timestep ({num(opt.timestep)} s), "
                          "add armature, lower kp / kd")


def supported_note(passive: Standing) -> str:
    return (f"standing judged with the base supported (kept upright, free to sink: the legs carry the weight, "
            f"balance is not theirs): on its own it does not stand at these gains (tilt "
            f"{num(math.degrees(passive.tilt))} deg, base at {num(passive.base_height)} m), as a humanoid at the gains "
            "its motors run does not; its policy balances it")


def pose_off(stand: Standing, robot: ResolvedRobot) -> dict[str, float]:
    """The joints too far from their pose (POSE_OFF): held ones, or any with the base supported."""
    return {j: e for j, e in stand.pose_error.items()
            if abs(e) > POSE_OFF and (stand.supported or j in robot.held_joint_names)}


def sag_floor(robot: ResolvedRobot, converged: Standing | None = None) -> float:
    """The lowest base height that is not a sag: SAG x ``base_height``; under a solver setting other than
    CONVERGED_SOLVER, lowered to SOLVER_SAG x ``converged`` (the same trial under CONVERGED_SOLVER) when the robot
    stands there."""
    floor = SAG * robot.spec.base_height
    if converged is None or converged.base_height < floor:
        return floor
    return min(floor, SOLVER_SAG * converged.base_height)


def stands(stand: Standing, robot: ResolvedRobot, converged: Standing | None = None) -> bool:
    """No divergence, no fall, no sag (``sag_floor``), no feet sliding and no legs splayed (free standing), no joint
    too far from its pose."""
    return (stand.diverged_at is None and stand.tilt <= FALL_TILT and not (sliding(stand) and not stand.supported)
            and not splayed(stand) and stand.base_height >= sag_floor(robot, converged)
            and not pose_off(stand, robot))


def standing_findings(robot: ResolvedRobot, stand: Standing, steps: list[StepResponse], bad: list[StepResponse],
                      contact: tuple[Contact, Contact], f: Findings, converged: Standing | None = None) -> None:
    """Problems / advice from standing still (``stand``: the judged trial, free or supported): divergence, a fall,
    a sag (sliding feet: the contact settings; else the groups of the joints furthest from their pose), contacts,
    joints off their pose, limits, saturation; ``converged``: the same trial under CONVERGED_SOLVER (``sag_floor``)."""
    opt, target = robot.model.opt, robot.spec.base_height
    how = "with the base supported" if stand.supported else "standing still"
    if stand.diverged_at is not None:
        f.problems.append(f"the simulation diverges at {num(stand.diverged_at)} s {how}: " + (
            "fix the unstable servos first" if bad else f"raise the solver iterations (now {opt.iterations} / "
            f"{opt.ls_iterations}), lower the timestep ({num(opt.timestep)} s), add armature or lower kd"))
        return
    ratio = stand.base_height / target
    fired = [b for b, share in stand.contacts.items() if share > CONTACT_SHARE]
    fired_text = "; " + ", ".join(fired) + " contacts fire" if fired else ""
    far = furthest(stand, steps)
    drift = f"; the feet slide ({drift_text(stand)})" if sliding(stand) else ""
    splay = f"; the legs splay ({splay_text(stand)})" if splayed(stand) else ""
    numbers = f"{fired_text}{drift}{splay}" + (f"; {far}" if far else "")
    if bad:
        fix = "fix the unstable servos first"
    elif sliding(stand) and not stand.supported:
        fix = slide_fix(*contact)
    else:
        fix = raise_kp(stand, steps)
    if stand.tilt > FALL_TILT:
        f.problems.append(f"falls over {how} (tilt {num(math.degrees(stand.tilt))} deg, base at "
                          f"{num(stand.base_height)} m){numbers}: {fix}, check default_pose (is it balanced over the "
                          "feet?)")
    elif stand.base_height < sag_floor(robot, converged):
        lower = "" if bad or stand.supported or sliding(stand) else " or lower base_height"
        if converged is not None and converged.base_height >= SAG * target and not bad:
            it, ls = CONVERGED_SOLVER
            fix, lower = (f"raise the solver iterations (now {opt.iterations} / {opt.ls_iterations}; at {it} / {ls} "
                          f"it settles at {num(converged.base_height)} m)"), ""
        f.problems.append(f"base settles at {num(stand.base_height)} m of {num(target)} m ({pct(ratio)}) {how}"
                          f"{numbers}: {fix}{lower}")
    elif pose_off(stand, robot):
        f.problems.append(f"joints cannot hold the pose {how} ({far}): {raise_kp(stand, steps)}")
    elif fired:
        f.problems.append(f"{', '.join(fired)} contacts fire {how} (base at {num(stand.base_height)} m of "
                          f"{num(target)} m): check default_pose and foot_geoms / foot_bodies")
    elif splayed(stand):
        slide = f"; the feet slide ({drift_text(stand)})" if sliding(stand) else ""
        f.problems.append(f"the legs splay standing still ({splay_text(stand)} from the pose; bound {num(SPLAY)} rad"
                          f"{slide}): {splay_fix(stand, steps, contact)}")
    elif sliding(stand) and not stand.supported:
        f.problems.append(f"the feet slide standing still ({drift_text(stand)}; bound {num(SLIDE)} m"
                          f"{'; ' + far if far else ''}): {slide_fix(*contact)}")
    elif ratio > 1.02:
        f.advice.append(f"base settles at {num(stand.base_height)} m, above base_height {num(target)} m: the reset "
                        f"puts the feet into the floor; raise base_height")
    _limits(stand, bad, f)


def _limits(stand: Standing, bad: list[StepResponse], f: Findings) -> None:
    pinned = [j for j, share in stand.at_limit.items() if share > LIMIT_SHARE]
    if pinned:
        f.advice.append(f"joints at their limit standing still: {', '.join(pinned)}: check default_pose against the "
                        f"joint ranges")
    saturated = [j for j, share in stand.saturation.items() if share > SATURATION_SHARE]
    if saturated and not bad:
        f.problems.append(f"servos at their effort limit standing still: {', '.join(saturated)}: raise effort_limit "
                          f"or lower the robot's load (base_height, default_pose)")
