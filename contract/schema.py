"""The metadata of an exported policy as a versioned contract: every key, its type, unit, frame and order.

An ONNX file's ``metadata_props`` hold string values (plain strings as they are, everything else JSON; see
``rl_core/export.py``). ``format`` is ``legged-mjx-policy/MAJOR[.MINOR]``: a reader accepts every minor version of
the majors it knows (a minor version only adds optional keys) and refuses another major in one line. Anything a
reader notices (a key renamed, removed, retyped, or its meaning changed) bumps the major version.

    major 1   until issue 31. Early files named the robot file (``robot_xml``) and had scalar ``kp`` / ``kd``;
              later ones carry the compiled scene (``scene_mjb``) and per-joint gains under the same tag, the
              change that broke deploy clients. A scene-carrying major-1 file is read (``upgrade``), its missing
              keys derived from the scene; a ``robot_xml`` one is refused with the command that re-exports it.
    major 2   the keys below; ``joint_pos_limits``, ``held_joint_names``, ``held_joint_pos`` and
              ``velocity_limits`` added, ``action_scale`` one value per joint.
        2.1   ``held_kp``, ``held_kd`` and ``held_torque_limits``: the held joints' servos (a 2.0 file without
              them still loads; the robot-side runtime refuses one that holds joints, ``held_servos``).
        2.2   ``recurrent`` may describe an observation history (memory ``history``: the past frames are the
              state; ``obs_dim`` is one frame); a reader that carries recurrent state reads it unchanged.
        2.3   the ``track`` family (``task_family: track``): ``motion_clips`` (the clips travel in the file) and
              ``motion`` (how the policy reads them); locomotion and reach files are unchanged.
        2.4   every file names its family (``task_family``, one of ``FAMILIES``); an older file gets the old guess
              once, on read (``upgrade``: ``reach`` / ``track`` as named, else ``locomotion`` with a scene, else
              ``gym``). ``scene_mjb`` is compiled without what only drawing uses (visual-only geoms, their meshes,
              textures, materials; MuJoCo's ``discardvisual``): the same physics, a smaller file; an older reader
              loads it unchanged.

``python -m contract.schema`` prints the table of docs/deploy.md (a test checks that the docs carry it verbatim).
"""

from __future__ import annotations

import base64
import math
import zlib
from dataclasses import dataclass
from typing import Any

from contract.errors import UserError
from contract.families import Family, Key, discover
from contract.policy_format import FORMAT
from contract.terms import SOURCES, TERMS

NAME = "legged-mjx-policy"
"""The prefix of ``format``."""
READABLE_MAJORS = (1, 2)
"""Major versions this reader understands (1 through ``upgrade``)."""
FAMILY_NAMED = (2, 4)
"""The version since which every file names its ``task_family`` (older files: ``guessed_family``)."""
REEXPORT = "re-export it with: python play.py --checkpoint RUN_DIR --export-onnx FILE"
"""What to do with a file this reader cannot use."""


FAMILIES: dict[str, Family] = discover()
"""Every task family (``task_family``), as its sim2sim module declares it (``contract/families.py``): a new family
is its own ``FAMILY = Family(...)`` in its module, no row here."""


COMMON: tuple[Key, ...] = (
    Key("format", "str", "", "`legged-mjx-policy/MAJOR[.MINOR]`: the version of this schema"),
    Key("task_family", "str", "", "the task family, which says the other keys: " + "; ".join(
        f"`{name}`: {f.meaning} (`{f.sim2sim}`)" for name, f in FAMILIES.items()) + "; since 2.4 in every file "
        "(before: reach and track only, the others read as `locomotion` when they carry a scene, else `gym`)"),
    Key("task", "str", "", "registered task name the policy was trained on"),
    Key("iteration", "int", "", "training iteration of the exported checkpoint"),
    Key("obs_dim", "int", "", "length of the flat observation the graph reads"),
    Key("obs_shape", "list[int]", "", "per-env observation shape (`[obs_dim]`, or `[C, H, W]` for pixels)"),
    Key("obs_dtype", "str", "", "`float32` (uint8 for pixels)"),
    Key("action_type", "str", "", "`continuous` or `discrete`"),
    Key("action_dim", "int", "", "number of actions (continuous) or of choices (discrete)"),
    Key("actions", "str", "", "what the `actions` output holds, in words"),
    Key("recurrent", "object", "", "state tensors of a memory policy: `memory` (lstm/gru; since 2.2 also "
        "history: the previous `layers` observations, oldest first, `size` = `obs_dim`), `layers`, `size`, "
        "`state_inputs`, `state_outputs` (names, in order), `state_shape` `[batch, layers, size]`, `state_dtype`, "
        "`reset` (zeros at every episode start; feed each `*_out` back as the next `*_in`)",
        optional="recurrent policies"),
)
"""The keys of every export (the family column ``all``)."""

SHARED: tuple[Key, ...] = (
    Key("robot", "str", "", "robot name"),
    Key("scene_mjb", "str", "", "the trained scene, compiled: base64 of zlib-compressed MJB (robot, floor or "
        "heightfield, sensors; every collision on; since 2.4 without visual-only geoms, their meshes, textures and "
        "materials: MuJoCo's `discardvisual`, the same physics)"),
    Key("base_joint", "str", "", "name of the free joint of the base in the scene"),
    Key("foot_names", "list[str]", "", "feet, in the order of the training env's foot terms"),
    Key("obs_layout", "list[[str, int]]", "", "observation terms in order, `[name, size]`; names and frames in "
        "the table of terms below"),
    Key("obs_layout ", "list[[str, int]]", "", "one term `[name, obs_dim]` (`observation` or `frames`)"),
    Key("obs_scales", "object", "", "term name -> factor (number, or per component for `commands`); "
        "the observed value is `(value - offset) * scale`"),
    Key("joint_names", "list[str]", "", "actuated joints in the policy's order: the order of `joint_pos`, "
        "`joint_vel`, `last_actions`, the actions and every per-joint list below; match them by name"),
    Key("default_joint_pos", "list[number]", "rad", "default pose, per joint; the offset of `joint_pos`"),
    Key("joint_pos_limits", "list[[number|null, number|null]]", "rad", "joint range `[low, high]` per joint "
        "(null: unlimited)"),
    Key("action_scale", "list[number]", "rad", "per joint: joint target = `default_joint_pos + action_scale * "
        "clip(action)`"),
    Key("held_joint_names", "list[str]", "", "joints held at a pose by their own servos, outside the action space "
        "(empty for most robots)"),
    Key("held_joint_pos", "list[number]", "rad", "the pose of each held joint (its servo's target)"),
    Key("held_kp", "list[number]", "N m/rad", "PD stiffness per held joint (`held_joint_names` order)",
        optional="since 2.1"),
    Key("held_kd", "list[number]", "N m s/rad", "PD damping per held joint", optional="since 2.1"),
    Key("held_torque_limits", "list[number|null]", "N m", "servo torque limit per held joint (null: none)",
        optional="since 2.1"),
    Key("velocity_limits", "list[number|null]", "rad/s", "motor speed limit per joint (null: none)"),
    Key("action_clip", "number", "", "actions are clipped to `[-action_clip, action_clip]` first"),
    Key("kp", "list[number]", "N m/rad", "PD stiffness per joint (position servo)"),
    Key("kd", "list[number]", "N m s/rad", "PD damping per joint"),
    Key("torque_limits", "list[number|null]", "N m", "servo torque limit per joint (null: none)"),
    Key("control_dt", "number", "s", "policy period (targets held between calls)"),
    Key("sim_dt", "number", "s", "physics timestep of training"),
    Key("decimation", "int", "", "physics steps per policy step"),
    Key("base_height", "number", "m", "start height of the base above the ground"),
    Key("episode_length_s", "number", "s", "training episode length"),
    Key("command_ranges", "object", "m/s, rad/s", "`lin_vel_x`, `lin_vel_y` (base frame, m/s), `yaw_rate` "
        "(rad/s): `[low, high]` of training"),
    Key("command_resample_s", "number", "s", "commands were redrawn this often"),
    Key("command_min_lin_vel", "number", "m/s", "smaller planar commands were zeroed"),
    Key("collisions", "str", "", "`full` or `feet`: what collided in training"),
    Key("termination_contact_sensors", "list[str]", "", "scene sensors whose contact force ends an episode"),
    Key("contact_force_threshold", "number", "N", "contact force that counts as a contact"),
    Key("success_distance", "number|null", "m", "distance from the start that counts as a success"),
    Key("height_scan", "object", "m", "scan grid: `points_x`, `points_y`, `size_x`, `size_y` (m), `offset`, "
        "`clip` (m); points x-major in the base's yaw frame", optional="policies with a height scan"),
    Key("terrain", "object", "m", "generated terrain: `config`, `tile_size`, `levels`, `columns`, "
        "`column_types`, `origins [levels][columns][x, y, z]`", optional="generated terrain"),
)
"""Keys several families write: a family's ``carries`` names those its exports hold (``obs_layout`` is listed
twice, the trailing space keys the gym one apart)."""

def family(meta: dict[str, Any]) -> str:
    """The task family the file names (``task_family``: a key of ``FAMILIES`` in our exports; '' when it names
    none). A file read through ``upgrade`` names one even when written before 2.4."""
    return str(meta.get("task_family", ""))


def guessed_family(meta: dict[str, Any]) -> str:
    """The family of a file written before 2.4, from its keys (the rule readers used then): ``task_family`` when
    it names one, else ``locomotion`` with a robot scene, else ``gym``."""
    if meta.get("task_family"):
        return str(meta["task_family"])
    return "locomotion" if ("scene_mjb" in meta or "robot_xml" in meta) else "gym"


def keys_of(fam: str) -> dict[str, Key]:
    """The keys a ``fam`` export may carry, by name: ``COMMON``, the ``SHARED`` ones its family carries, its own."""
    declared = FAMILIES.get(fam, Family(fam, ""))
    shared = [k for k in SHARED if k.name in declared.carries]
    return {k.name.strip(): k for k in (*COMMON, *shared, *declared.keys)}


def carriers(key: Key) -> str:
    """The family column of docs/deploy.md: ``all``, the families that carry a shared key, or a key's own family."""
    if key in COMMON:
        return "all"
    if key in SHARED:
        return ", ".join(name for name, f in FAMILIES.items() if key.name in f.carries)
    return key.family


def every_key() -> tuple[Key, ...]:
    """Every key of major version 2 in the docs' order: common, shared, then each family's own."""
    return (*COMMON, *SHARED, *(k for f in FAMILIES.values() for k in f.keys))


def version(value: Any) -> tuple[int, int]:
    """``(major, minor)`` of a ``format`` value; UserError when it is not a legged-mjx tag."""
    text = str(value)
    prefix, _, ver = text.partition("/")
    major, _, minor = ver.partition(".")
    if prefix != NAME or not major.isdigit() or (minor and not minor.isdigit()):
        raise ValueError(text)
    return int(major), int(minor or 0)


def check_version(value: Any, where: str) -> int:
    """The major version of a readable file; one UserError line for anything else."""
    try:
        major, _ = version(value)
    except ValueError:
        raise UserError(f"{where} was not exported by legged-mjx (metadata format={value!r}, expected "
                        f"{FORMAT!r})") from None
    if major not in READABLE_MAJORS:
        raise UserError(f"{where} has metadata format {value!r}; this legged-mjx reads majors "
                        f"{', '.join(map(str, READABLE_MAJORS))}: upgrade legged-mjx, or {REEXPORT}")
    return major


def upgrade(meta: dict[str, Any], where: str) -> dict[str, Any]:
    """``meta`` as the newest reader expects it: a file written before 2.4 names its family (``guessed_family``,
    once, here); a major-1 locomotion file is read as major 2 (``upgrade_major1``). Newer files pass unchanged."""
    ver = version(meta.get("format"))
    out = meta if "task_family" in meta or ver >= FAMILY_NAMED else {**meta, "task_family": guessed_family(meta)}
    if ver[0] == 1 and out["task_family"] == "locomotion":
        return upgrade_major1(out, where)
    return out


def upgrade_major1(meta: dict[str, Any], where: str) -> dict[str, Any]:
    """A major-1 locomotion file read as major 2: per-joint gains and action scale, no held joints, joint ranges
    from its scene. A file that names a robot file instead of carrying its scene is refused with the re-export
    command."""
    if "scene_mjb" not in meta:
        raise UserError(f"{where} is an early legged-mjx-policy/1 export (robot_xml, no stored scene); {REEXPORT}")
    out = dict(meta)
    n = len(meta["joint_names"])
    for key in ("kp", "kd", "torque_limits", "action_scale"):
        if not isinstance(out[key], list):
            out[key] = [out[key]] * n
    for key in HELD_SERVO_KEYS + ("held_joint_names", "held_joint_pos"):
        out.setdefault(key, [])
    out.setdefault("velocity_limits", [None] * n)
    if "joint_pos_limits" not in out:
        out["joint_pos_limits"] = joint_ranges(meta)
    return out


HELD_SERVO_KEYS = ("held_kp", "held_kd", "held_torque_limits")
"""The held joints' servos (minor 2.1)."""


@dataclass(frozen=True)
class Servos:
    """The servo of every joint a locomotion policy drives: its trained joints (policy order), then its held ones."""

    pose: list[float]
    """``default_joint_pos`` then ``held_joint_pos`` (rad): the stance targets."""
    kp: list[float]
    kd: list[float]
    torque_limits: list[float]
    """N m; inf where the file has none."""


def servos(meta: dict[str, Any], where: str) -> Servos:
    """The trained joints' servos followed by the held ones' (``held_servos``; ``where`` names the file in its
    one-line refusal)."""
    held_kp, held_kd, held_torque = held_servos(meta, where)
    torque = list(meta["torque_limits"]) + held_torque
    return Servos(list(meta["default_joint_pos"]) + list(meta.get("held_joint_pos", [])), list(meta["kp"]) + held_kp,
                  list(meta["kd"]) + held_kd, [math.inf if x is None else float(x) for x in torque])


def held_servos(meta: dict[str, Any], where: str) -> tuple[list[float], list[float], list[float | None]]:
    """``held_kp``, ``held_kd``, ``held_torque_limits`` of a file (empty without held joints); one UserError line
    for a file that holds joints but carries no servo for them (exported before 2.1) or not one per held joint."""
    held = list(meta.get("held_joint_names", []))
    if not held:
        return [], [], []
    missing = [k for k in HELD_SERVO_KEYS if k not in meta]
    if missing:
        raise UserError(f"{where} holds joints outside its action space ({', '.join(held)}) but carries no "
                        f"{' / '.join(missing)} (format {meta.get('format')!r}, written before "
                        f"{NAME}/2.1); {REEXPORT}")
    wrong = [k for k in HELD_SERVO_KEYS + ("held_joint_pos",) if len(meta[k]) != len(held)]
    if wrong:
        raise UserError(f"{where}: {', '.join(wrong)} must have one entry per held joint ({len(held)}); {REEXPORT}")
    return list(meta["held_kp"]), list(meta["held_kd"]), list(meta["held_torque_limits"])


def joint_ranges(meta: dict[str, Any]) -> list[list[float | None]]:
    """``[low, high]`` (rad; None unlimited) of each of ``joint_names`` in the stored scene (a format-1 file carries
    no ``joint_pos_limits``: reading its scene needs MuJoCo, which a robot computer may lack)."""
    try:
        import mujoco
    except ImportError:
        raise UserError(f"policy file of task {meta.get('task')!r} (format {meta.get('format')!r}) carries no "
                        f"joint_pos_limits, and reading them from its scene needs mujoco, which is not installed; "
                        f"{REEXPORT}") from None

    mjb = zlib.decompress(base64.b64decode(meta["scene_mjb"]))
    model = mujoco.MjModel.from_binary_path("scene.mjb", {"scene.mjb": mjb})
    out: list[list[float | None]] = []
    for name in meta["joint_names"]:
        j = model.joint(name)
        out.append([float(j.range[0]), float(j.range[1])] if model.jnt_limited[j.id] else [None, None])
    return out


def _is(value: Any, tag: str) -> bool:
    tag = tag.strip()
    if "|" in tag and not tag.startswith("list"):
        return any(_is(value, t) for t in tag.split("|"))
    if tag == "null":
        return value is None
    if tag == "str":
        return isinstance(value, str)
    if tag == "bool":
        return isinstance(value, bool)
    if tag == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if tag == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if tag == "object":
        return isinstance(value, dict)
    if tag.startswith("list[") and tag.endswith("]"):
        inner = tag[5:-1]
        if inner.startswith("[") and inner.endswith("]"):  # a fixed-length tuple
            parts = [p.strip() for p in inner[1:-1].split(",")]
            return isinstance(value, list) and all(
                isinstance(v, list) and len(v) == len(parts) and all(_is(x, p) for x, p in zip(v, parts, strict=True))
                for v in value)
        return isinstance(value, list) and all(_is(v, inner) for v in value)
    raise ValueError(f"unknown schema type {tag!r}")


def problems(meta: dict[str, Any]) -> list[str]:
    """What does not match the major-2 schema: unknown keys, missing required ones, wrong types, a family not in
    ``FAMILIES`` (empty: none); a file without ``task_family`` is checked as its guessed family."""
    fam = family(meta) or guessed_family(meta)
    known = keys_of(fam)
    out = [] if fam in FAMILIES else [f"task_family {fam!r} is not one of {', '.join(FAMILIES)}"]
    out += [f"unknown key {k!r}" for k in meta if k not in known]
    for name, key in known.items():
        if name not in meta:
            if not key.optional:
                out.append(f"missing key {name!r}")
        elif not _is(meta[name], key.type):
            out.append(f"key {name!r} is not {key.type}: {str(meta[name])[:60]!r}")
    return out


def markdown() -> str:
    """The tables of docs/deploy.md: every key, then the observation terms."""
    lines = ["| key | type | unit | family | meaning |", "|---|---|---|---|---|"]
    for k in every_key():
        fam = carriers(k) + (f" ({k.optional})" if k.optional else "")
        lines.append(f"| `{k.name.strip()}` | {k.type} | {k.unit} | {fam} | {k.meaning} |")
    lines += ["", "| term | unit | meaning | supplied by |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {t.unit} | {t.meaning} | {t.source} |" for name, t in TERMS.items()]
    lines += ["", "| source | a robot must supply it | what it is |", "|---|---|---|"]
    lines += [f"| {name} | {'yes' if src.robot else 'no'} | {src.meaning} |" for name, src in SOURCES.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
