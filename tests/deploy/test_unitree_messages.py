"""Unitree's low-level messages as deploy/unitree defines them: layouts, the checksum, the DDS types, the slot
mapping of the robot profiles and the wireless remote. No network, no child process.

Where the expected values come from (none of them were computed by the code under test):
- C sizes 812 / 1180 / 1004 / 2092 bytes: the comments beside the packing formats in Unitree's
  unitree_sdk2_python (unitree_sdk2py/utils/crc.py).
- CRC-32/MPEG-2 of b"123456789" = 0x0376E6E7: the catalogued check value of that CRC.
- The checksums of the messages below: Unitree's own CRC code (unitree_sdk2py/utils/crc.py of
  unitreerobotics/unitree_sdk2_python at commit 37116c5, run on its own generated message classes, once with its
  shipped lib/crc_amd64.so and once with its pure-Python ``_crc_py``; both gave the same numbers) on messages
  built as ``_go2_command`` / ``_g1_command`` build them: the blank ones (its ``idl/default.py`` constructors)
  and one command of each family.
- The XTypes type identifiers and the serialized bytes' SHA-256: the same generated classes of Unitree's
  (``T.__idl__.get_type_id()``, ``msg.serialize()``) under cyclonedds 11.0.1 and under 0.10.2 (built from
  source against Debian's cyclonedds-dev). The bytes are the same under both; the identifiers are not (the two
  versions encode type objects differently, which is why they do not match each other's nested types), so each
  type may have either version's identifier, never a third. Equal identifiers mean a DDS stack of the same
  version sees our types as Unitree's own.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from contract.errors import UserError
from deploy.unitree.crc import checksum, crc32_mpeg2, crc32_words
from deploy.unitree.messages import FAMILIES, blank, c_size, pack
from deploy.unitree.profiles import PROFILES, for_policy, get
from deploy.unitree.remote import Remote, StickMap, decode, encode
from deploy.unitree.robot import fill_command, idle_command, state_of

ROOT = Path(__file__).resolve().parents[2]
HUMANOID = ROOT / "docs" / "humanoid_policy.onnx"
QUADRUPED = ROOT / "tests" / "data" / "quadruped_policy_format1.onnx"

SIZES = {("unitree_go", "LowCmd_"): 812, ("unitree_go", "LowState_"): 1180, ("unitree_hg", "LowCmd_"): 1004,
         ("unitree_hg", "LowState_"): 2092}
BLANK_CRC = {("unitree_go", "LowCmd_"): 1264208000, ("unitree_go", "LowState_"): 2247171750,
             ("unitree_hg", "LowCmd_"): 4262932383, ("unitree_hg", "LowState_"): 3595284554}
GO2_COMMAND_CRC, G1_COMMAND_CRC = 337054116, 3990442299
TYPE_IDS = {("unitree_go", "LowCmd_"): ("12da99179559f14db8b7ab23acdd", "52cc8eb0d427d692aa2b20a90540"),
            ("unitree_go", "LowState_"): ("ef1819d05896c24741d6dbde9167", "08f239c471d3a27e67e7c7723184"),
            ("unitree_hg", "LowCmd_"): ("ef636a54656de1d49ca65377b07c", "42b0283aa7e1bb592ec898a0dbed"),
            ("unitree_hg", "LowState_"): ("860cfa7cbdcd87fbdb066de53c1d", "2be9706c9587e8d8afd8bfc6de7b")}
"""Hash of the complete TypeObject (XTypes EK_COMPLETE, discriminator 242): under cyclonedds 11.0.1, 0.10.2."""
SERIALIZED_SHA256 = {"unitree_go": "e8a14c08d20905dedd7789d49b4bab7a449744a39df7a26b03416c3369b57de2",
                     "unitree_hg": "1f9b52fbacdd8839fc1d0566dbb2f74b69cf6e46ea43b9532596aa0fa2985f48"}
"""Of the two commands below with their ``crc`` set, as CDR with its 4-byte header."""


def _go2_command(msg):
    """A Go2 low-level command: header for low-level control, 12 motors in servo mode, 8 idle slots."""
    msg.head, msg.level_flag, msg.gpio = [0xFE, 0xEF], 0xFF, 0
    for i, m in enumerate(msg.motor_cmd):
        if i < 12:
            m.mode, m.q, m.dq, m.tau, m.kp, m.kd = 1, 0.1 * (i - 6), 0.0, 0.25 * (i % 3), 20.0, 0.5
        else:
            m.mode, m.q, m.dq, m.tau, m.kp, m.kd = 0, 2.146e9, 16000.0, 0.0, 0.0, 0.0
    return msg


def _g1_command(msg):
    """A G1 command: pitch-roll mode, mode_machine 5, 29 motors enabled, 6 slots left zero."""
    msg.mode_pr, msg.mode_machine = 0, 5
    for i, m in enumerate(msg.motor_cmd[:29]):
        m.mode, m.q, m.dq, m.tau, m.kp, m.kd = 1, 0.05 * i - 0.7, 0.0, 0.0, 100.0 + i, 2.0
    return msg


@pytest.mark.parametrize("family,name", list(SIZES))
def test_c_layouts_have_unitrees_sizes_and_blank_checksums(family, name):
    msg = FAMILIES[family][name]
    assert c_size(msg) == SIZES[family, name] == len(pack(msg, blank(msg)))
    assert checksum(msg, blank(msg)) == BLANK_CRC[family, name]


def test_the_crc_is_crc32_mpeg2_fed_by_words():
    assert crc32_mpeg2(b"123456789") == 0x0376E6E7
    data = bytes(range(256)) * 3
    words = [int.from_bytes(data[i:i + 4], "big") for i in range(0, len(data), 4)]
    assert crc32_words(words) == crc32_mpeg2(data)


def test_known_commands_of_both_families_get_unitrees_checksum():
    go, hg = FAMILIES["unitree_go"]["LowCmd_"], FAMILIES["unitree_hg"]["LowCmd_"]
    assert checksum(go, _go2_command(blank(go))) == GO2_COMMAND_CRC
    assert checksum(hg, _g1_command(blank(hg))) == G1_COMMAND_CRC
    changed = _g1_command(blank(hg))
    changed.motor_cmd[28].kp = 100.5  # one field of the last motor: a different checksum
    assert checksum(hg, changed) != G1_COMMAND_CRC


def test_the_profiles_commands_carry_unitrees_header_and_idle_slots():
    from deploy.runtime.robot import JointCommand

    go2 = get("unitree_go2")
    msg = FAMILIES["unitree_go"]["LowCmd_"]
    i = np.arange(12)
    cmd = fill_command(go2, idle_command(go2, blank(msg)),
                       JointCommand(0.1 * (i - 6), np.full(12, 20.0), np.full(12, 0.5), 0.25 * (i % 3)))
    assert cmd.crc == GO2_COMMAND_CRC  # the same message as _go2_command, built by the adapter's code


def test_dds_types_are_unitrees_types():
    pytest.importorskip("cyclonedds", reason="cyclonedds is not installed (pip install -e '.[unitree]')")
    from deploy.unitree import idl

    for (family, name), type_ids in TYPE_IDS.items():
        t = idl.idl_class(FAMILIES[family][name]).__idl__.get_type_id()
        assert t.discriminator == 242 and t.value.hex() in type_ids, (family, name)
    go = _go2_command(idl.new(FAMILIES["unitree_go"]["LowCmd_"]))
    hg = _g1_command(idl.new(FAMILIES["unitree_hg"]["LowCmd_"]))
    go.crc, hg.crc = GO2_COMMAND_CRC, G1_COMMAND_CRC
    for family, msg in (("unitree_go", go), ("unitree_hg", hg)):
        assert hashlib.sha256(msg.serialize()).hexdigest() == SERIALIZED_SHA256[family]
        back = type(msg).deserialize(msg.serialize())
        assert checksum(FAMILIES[family]["LowCmd_"], back) == msg.crc


def test_profiles_name_their_slots_after_the_menagerie_models():
    go2, g1 = PROFILES["unitree_go2"], PROFILES["unitree_g1"]
    assert len(go2.slots) == 20 and go2.joints[:3] == ("FR_hip_joint", "FR_thigh_joint", "FR_calf_joint")
    assert go2.joints[9:] == ("RL_hip_joint", "RL_thigh_joint", "RL_calf_joint")
    assert len(g1.slots) == 35 and len(g1.joints) == 29
    assert g1.slot_of["left_hip_pitch_joint"] == 0 and g1.slot_of["waist_yaw_joint"] == 12
    assert g1.slot_of["left_shoulder_pitch_joint"] == 15 and g1.slot_of["right_wrist_yaw_joint"] == 28
    with pytest.raises(UserError, match="--robot='unitree_h9' is not a known Unitree profile; known: unitree_go2"):
        get("unitree_h9")


def test_a_model_whose_joints_are_in_another_order_maps_by_name():
    """The shipped humanoid's legs go hip yaw, roll, pitch; the G1's slots pitch, roll, yaw. Through the runtime's
    controller and the adapter's mapping every slot gets its own joint's gains and sample, and the joints the
    policy neither trains nor holds (waist, wrists) and the spare slots get zero gains."""
    from deploy.onnx_policy import OnnxPolicy
    from deploy.runtime.controller import Controller

    policy = OnnxPolicy(HUMANOID, threads=1)
    meta = policy.metadata
    g1 = for_policy(meta)
    assert g1.name == "unitree_g1"
    hg = FAMILIES["unitree_hg"]
    low = blank(hg["LowState_"])
    low.imu_state.quaternion = [1.0, 0.0, 0.0, 0.0]
    for i, m in enumerate(low.motor_state):
        m.q, m.dq = 0.01 * i, -0.01 * i
    state = state_of(g1, low, 1.0, base_lin_vel=np.zeros(3))
    ctl = Controller(policy, g1.joints)
    obs_q = ctl.obs.values(state, np.zeros(3), np.zeros(12))["joint_pos"] + ctl.obs.constants.default_joint_pos
    np.testing.assert_allclose(obs_q, [0.01 * g1.slot_of[n] for n in meta["joint_names"]])
    ctl.safety.check(state, 1.0)
    cmd = fill_command(g1, idle_command(g1, blank(hg["LowCmd_"])), ctl.command(state, None), mode_machine=5)
    kp = {n: k for n, k in zip(meta["joint_names"], meta["kp"], strict=True)}
    kp.update(zip(meta["held_joint_names"], meta["held_kp"], strict=True))
    for name, slot in g1.slot_of.items():
        assert cmd.motor_cmd[slot].kp == kp.get(name, 0.0), name
    assert cmd.motor_cmd[g1.slot_of["left_hip_yaw_joint"]].kp != cmd.motor_cmd[0].kp  # 100 vs 200: not positional
    assert [m.kp for m in cmd.motor_cmd[29:]] == [0.0] * 6 and cmd.mode_machine == 5
    assert cmd.crc == checksum(hg["LowCmd_"], cmd)


def test_a_policy_no_profile_drives_is_refused_in_one_line():
    meta = {"task": "x", "joint_names": ["FR_hip_joint", "tail_joint"]}
    with pytest.raises(UserError, match=r"no robot profile drives every joint .*\(unitree_go2 lacks tail_joint; "):
        for_policy(meta)


def test_the_remote_round_trips_and_its_sticks_command_within_the_training_ranges():
    r = Remote(frozenset({"A", "select"}), lx=-0.25, ly=0.5, rx=0.75, ry=0.0)
    raw = encode(r)
    assert len(raw) == 40 and raw[2:4] == [0b1000, 0b1] and decode(raw) == r
    sticks = StickMap({"command_ranges": {"lin_vel_x": [-0.5, 1.0], "lin_vel_y": [-0.3, 0.3],
                                          "yaw_rate": [-1.0, 1.0]}})
    np.testing.assert_allclose(sticks.command(r), [0.5, 0.075, -0.75])
    np.testing.assert_allclose(sticks.command(Remote(ly=-1.0, lx=0.02)), [-0.5, 0.0, 0.0])  # low end, deadzone
    np.testing.assert_allclose(sticks.command(sticks.sticks((0.5, -0.2, 0.3))), [0.5, -0.2, 0.3], atol=1e-6)


def _walk(obj, name):
    for part in name.split("."):
        obj = obj[int(part)] if part.isdigit() else getattr(obj, part)
    return obj


@pytest.mark.parametrize("family,name", list(SIZES))
def test_packed_messages_are_cyclonedds_bytes_and_unitrees_checksum(family, name):
    """The simulated robot's fast path (deploy/unitree/packed.py): every field set to a random value in place
    gives CycloneDDS's own serialization of the same sample, and the numpy checksum the plain one."""
    pytest.importorskip("cyclonedds", reason="cyclonedds is not installed (pip install -e '.[unitree]')")
    from deploy.unitree import idl
    from deploy.unitree.packed import Packed

    rng = np.random.default_rng(7)
    msg = FAMILIES[family][name]
    sample, packed = idl.new(msg), Packed(msg)
    for field, (kind, _off, count) in packed.c.fields.items():
        if field == "crc":
            continue
        v = rng.normal(size=count).astype(np.float32) if kind == "f32" else rng.integers(0, 120, size=count)
        parent, _, leaf = field.rpartition(".")
        setattr(_walk(sample, parent) if parent else sample, leaf, [x.item() for x in v] if count > 1 else v[0].item())
        packed.set(field, v if count > 1 else v[0])
    data = packed.seal()
    sample.crc = checksum(msg, sample)
    assert packed.cdr.get("crc") == sample.crc
    reference = sample.serialize()
    assert data[:len(reference) - 4] == reference[4:]  # after CDR's 4-byte encapsulation header


def test_the_keyboard_fallback_reads_typed_letters_without_blocking():
    from deploy.unitree.operator import Keys

    r, w = os.pipe()
    with os.fdopen(r) as reader, os.fdopen(w, "w") as writer:
        keys = Keys(reader)
        assert keys.poll() == ""  # nothing typed: returns at once
        writer.write("S\na\n")
        writer.flush()
        assert keys.poll() == "sa"
        writer.close()
        assert keys.poll() == "" and not keys.open  # end of input: stops reading


def test_the_robot_side_imports_neither_torch_nor_mujoco_and_cyclonedds_only_when_it_connects():
    import subprocess
    import sys

    code = ("import sys, deploy.unitree.__main__, deploy.unitree.operator, deploy.unitree.robot, "
            "deploy.unitree.packed; "
            "print('torch' in sys.modules, 'mujoco' in sys.modules, 'cyclonedds' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.split() == ["False", "False", "False"], out.stderr
