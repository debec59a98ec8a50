"""The real-robot command: a policy on a Unitree robot over DDS, through the operator's sequence.

    python -m deploy.unitree POLICY.onnx --interface eth0 [--robot unitree_go2|unitree_g1] [--domain 0]
                             [--seconds 3600] [--pose-seconds 3] [--base-velocity] [--show-joints 1]
                             [--rt-priority 80] [--log states.json]

It says which network interface, domain, CycloneDDS version and robot profile it uses, which of the robot's
joints the policy drives (by name) and which stay limp, then runs ``operator.Sequence``: wait for the low state,
damping, default pose (remote ``start``), policy (remote ``A``; sticks: velocity), e-stop (remote ``select``). The
keyboard does the same: ``s``, ``a``, ``e`` and Enter. It refuses to start while another process sends
``rt/lowcmd``, and damps (latched) when no fresh low state comes (lost, frozen, wrong CRC, NaN: docs/deploy.md,
"Faults"). ``--interface lo`` talks to the simulated robot on this
machine (``deploy/unitree/simrobot.py``) with DDS kept on loopback.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import metadata
from typing import Any, Optional

from contract.errors import OneLineParser, UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.loop import realtime
from deploy.unitree import dds
from deploy.unitree.operator import OperatorConfig, Sequence
from deploy.unitree.profiles import PROFILES, Profile, driven_joints, for_policy


def _parse(argv: Optional[list[str]]) -> argparse.Namespace:
    p = OneLineParser(prog="python -m deploy.unitree", description=__doc__.splitlines()[0])
    p.add_argument("policy", help="exported ONNX policy (play.py --export-onnx)")
    p.add_argument("--interface", required=True,
                   help="network interface the robot is on (e.g. eth0); lo: the simulated robot on this machine")
    p.add_argument("--robot", choices=tuple(PROFILES), default=None,
                   help="robot profile (default: the one whose joints the policy names)")
    p.add_argument("--domain", type=int, default=dds.ROBOT_DOMAIN, help="DDS domain (robots: 0)")
    p.add_argument("--seconds", type=float, default=3600.0, help="longest time the policy runs (s)")
    p.add_argument("--pose-seconds", type=float, default=3.0, help="time to move to the default pose (s)")
    p.add_argument("--connect-timeout", type=float, default=5.0, help="longest wait for the first low state (s)")
    p.add_argument("--base-velocity", action="store_true",
                   help="read base_lin_vel from rt/legged_mjx/base_velocity (your estimator's "
                        "output) for a policy that observes it")
    p.add_argument("--show-joints", type=float, default=0.0, metavar="SECONDS",
                   help="before the policy runs, print the joints' measured positions this often (sign checks)")
    p.add_argument("--rt-priority", type=int, default=0, help="SCHED_FIFO priority (1-99; 0: normal scheduler)")
    p.add_argument("--log", default=None, help="write the states and the timing summary to this JSON file")
    return p.parse_args(argv)


def _check(args: argparse.Namespace, meta: dict[str, Any]) -> Profile:
    """Everything that can be refused before DDS starts, each in one line."""
    if not 0 <= args.domain <= 232:
        raise UserError(f"--domain={args.domain} is not allowed; expected an integer in [0, 232]")
    if args.seconds <= 0 or args.pose_seconds < 0 or args.connect_timeout <= 0:
        raise UserError("--seconds and --connect-timeout must be positive, --pose-seconds not negative")
    if not 0 <= args.rt_priority <= 99:
        raise UserError(f"--rt-priority={args.rt_priority} is not allowed; expected an integer in [0, 99]")
    observed = [name for name, _ in meta["obs_layout"]]
    if "base_lin_vel" in observed and not args.base_velocity:
        raise UserError("unitree: the policy observes base_lin_vel, which Unitree's low state does not carry; "
                        "publish an estimate on rt/legged_mjx/base_velocity and pass --base-velocity, or deploy a "
                        "policy that does not observe it")
    if "height_scan" in observed:
        raise UserError("unitree: the policy observes a height_scan; this command has no perception input")
    dds.check_interface(args.interface)
    return for_policy(meta, args.robot)


def _describe(args: argparse.Namespace, profile: Profile, meta: dict[str, Any]) -> None:
    try:
        version = metadata.version("cyclonedds")
    except metadata.PackageNotFoundError:
        version = "unknown"
    how = "multicast off, peer 127.0.0.1" if args.interface == dds.LOOPBACK else "the robot's network"
    print(f"unitree: DDS on interface {args.interface} ({how}), domain {args.domain}, cyclonedds {version}")
    print(f"unitree: robot {profile.name} ({profile.robots}): {profile.family} messages on rt/lowcmd, rt/lowstate")
    driven = driven_joints(meta)
    print("unitree: policy joint -> slot: " + ", ".join(f"{n} {profile.slot_of[n]}" for n in driven))
    limp = [n for n in profile.joints if n not in driven]
    if limp:
        print(f"unitree: limp (zero gains, neither trained nor held by the policy): {', '.join(limp)}")
    if args.interface != dds.LOOPBACK and not version.startswith("0.10"):
        print(f"unitree: warning: Unitree robots run CycloneDDS 0.10.x; cyclonedds {version} here did not exchange "
              "these messages with 0.10.2 (docs/deploy.md): install 0.10.2 before a trial", file=sys.stderr)


def main(argv: Optional[list[str]] = None) -> dict[str, Any]:
    args = _parse(argv)
    dds.require()
    policy = OnnxPolicy(args.policy, threads=1)
    meta = policy.metadata
    profile = _check(args, meta)
    _describe(args, profile, meta)
    if args.rt_priority:
        realtime(args.rt_priority)
    from deploy.unitree.robot import UnitreeRobot

    participant = dds.Participant(args.interface, args.domain)
    robot = UnitreeRobot(profile, participant, base_velocity=args.base_velocity)
    cfg = OperatorConfig(connect_timeout_s=args.connect_timeout, pose_s=args.pose_seconds, policy_s=args.seconds,
                         show_joints_s=args.show_joints)
    summary = Sequence(policy, robot, cfg).run()
    line = {k: summary[k] for k in ("mode", "reason", "ticks", "missed_deadlines") if k in summary}
    print(f"unitree: done: {json.dumps(line)}")
    if args.log:
        with open(args.log, "w") as f:
            json.dump(summary, f, indent=1)
    return summary


if __name__ == "__main__":
    try:
        main()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
