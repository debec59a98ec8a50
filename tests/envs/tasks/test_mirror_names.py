"""Mirror from names: each common convention (and a declared map) pairs twins, flips roll / yaw / abduction, and
mirrored twice is the identity, on the names and on the tensors; an ANYbotics-style robot offers the mirror."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch

from contract.errors import UserError
from envs.robots.mirror import foot_pairs, joint_mirror, side_pairs
from envs.robots.quadruped import QUADRUPED
from envs.robots.sides import MirrorMap, has_twins, missing_twins, twins
from envs.robots.spec import ActuatorGroup
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig, NoiseConfig, RandomizationConfig
from rl_core.config import AlgorithmConfig, PolicyConfig
from rl_core.env_api import Symmetric
from rl_core.modules.actor_critic import ActorCritic
from rl_core.ppo import PPO
from rl_core.symmetry import SAME_KEYS, Mirrors, augment

CONVENTIONS = {  # names, their twins, the joints whose angle flips
    "legged_gym": (["FR_hip_joint", "FR_thigh_joint", "FL_hip_joint", "FL_thigh_joint", "RR_calf_joint",
                    "RL_calf_joint"],
                   ["FL_hip_joint", "FL_thigh_joint", "FR_hip_joint", "FR_thigh_joint", "RL_calf_joint",
                    "RR_calf_joint"],
                   {"FR_hip_joint", "FL_hip_joint"}),
    "anybotics": (["LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE", "LH_HAA", "RH_HAA"],
                  ["RF_HAA", "RF_HFE", "RF_KFE", "LF_HAA", "LF_HFE", "LF_KFE", "RH_HAA", "LH_HAA"],
                  {"LF_HAA", "RF_HAA", "LH_HAA", "RH_HAA"}),
    "words": (["left_hip_roll_joint", "left_knee_joint", "waist_yaw_joint", "right_hip_roll_joint", "right_knee_joint"],
              ["right_hip_roll_joint", "right_knee_joint", "waist_yaw_joint", "left_hip_roll_joint", "left_knee_joint"],
              {"left_hip_roll_joint", "right_hip_roll_joint", "waist_yaw_joint"}),
    "l_r": (["l_hip_pitch", "l_hip_roll", "r_hip_pitch", "r_hip_roll", "waist_r"],
            ["r_hip_pitch", "r_hip_roll", "l_hip_pitch", "l_hip_roll", "waist_r"],  # waist_r: a roll, no side
            {"l_hip_roll", "r_hip_roll"}),
    "L_R": (["L_hip_yaw", "L_knee", "R_hip_yaw", "R_knee"], ["R_hip_yaw", "R_knee", "L_hip_yaw", "L_knee"],
            {"L_hip_yaw", "R_hip_yaw"}),
    "suffix": (["hip_pitch_l", "hip_pitch_r", "ankle_roll_l", "ankle_roll_r"],
               ["hip_pitch_r", "hip_pitch_l", "ankle_roll_r", "ankle_roll_l"], {"ankle_roll_l", "ankle_roll_r"}),
}


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
def test_each_convention_pairs_twins_and_mirrored_twice_is_identity(convention):
    names, expected, flips = CONVENTIONS[convention]
    assert list(twins(names)) == expected and has_twins(names) and not missing_twins(names)
    assert list(twins(list(twins(names)))) == names  # on the names
    m = joint_mirror(names)
    assert [names[p] for p in m.perm] == expected
    assert {n for n, s in zip(names, m.sign, strict=True) if s < 0} == flips
    x = torch.randn(7, len(names))
    assert torch.equal(m(m(x)), x) and not torch.equal(m(x), x)  # on the tensors


def test_a_declared_map_for_names_no_convention_covers():
    names = ["arm_links", "arm_rechts", "knie_links_roll", "knie_rechts_roll", "rumpf"]
    assert not has_twins(names)
    mirror = MirrorMap(swap=(("links", "rechts"),), flipped="roll")
    assert list(twins(names, mirror)) == ["arm_rechts", "arm_links", "knie_rechts_roll", "knie_links_roll", "rumpf"]
    m = joint_mirror(names, mirror)
    assert m.sign == (1.0, 1.0, -1.0, -1.0, 1.0)
    x = torch.randn(3, 5)
    assert torch.equal(m(m(x)), x)
    assert side_pairs(names, mirror) == ((0, 2), (1, 3))


def test_side_and_foot_pairs_of_each_kind_of_feet():
    assert side_pairs(("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT")) == ((0, 2), (1, 3))
    assert foot_pairs(("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT")) == ((), ())  # not a biped
    assert foot_pairs(("l_foot", "r_foot")) == ((0,), (1,))
    assert foot_pairs(("left_ankle_roll_link", "right_ankle_roll_link")) == ((0,), (1,))


def anybotics_style(tmp_path: Path, mirror: MirrorMap | None = None):
    """The built-in quadruped with ANYbotics names (LF/RF/LH/RH legs, HAA/HFE/KFE joints), written to tmp_path."""
    legs = {"FR": "RF", "FL": "LF", "RR": "RH", "RL": "LH"}
    parts = {"hip_joint": "HAA", "thigh_joint": "HFE", "calf_joint": "KFE"}

    def rename(text: str) -> str:
        text = re.sub(r"\b(FR|FL|RR|RL)_", lambda m: legs[m.group(1)] + "_", text)
        return re.sub(r"_(hip_joint|thigh_joint|calf_joint)\b", lambda m: "_" + parts[m.group(1)], text)

    xml = tmp_path / "anymal_like.xml"
    xml.write_text(rename(QUADRUPED.mjcf.read_text()))
    return dataclasses.replace(
        QUADRUPED, name="anymal_like", mjcf=xml, joints=("LF_.*", "RF_.*", "LH_.*", "RH_.*"),
        default_pose=(("(RF|RH)_HAA", -0.1), ("(LF|LH)_HAA", 0.1), (".F_HFE", 0.8), (".H_HFE", 1.0), (".*_KFE", -1.5)),
        actuators=(ActuatorGroup(".*_(HAA|HFE)", kp=20.0, kd=0.5, effort_limit=23.7),
                   ActuatorGroup(".*_KFE", kp=20.0, kd=0.5, effort_limit=35.55)),
        foot_geoms=("LF_foot", "RF_foot", "LH_foot", "RH_foot"), termination_contacts=("torso", ".*_thigh"),
        penalized_contacts=(".*_calf",), mirror=mirror)


def _env(robot) -> LocomotionEnv:
    cfg = LocomotionEnvConfig(num_envs=2, backend="native", noise=NoiseConfig(scale=0.0),
                              randomization=RandomizationConfig(push_interval_s=0.0, init_base_vel=0.0))
    return LocomotionEnv(cfg, robot, torch.device("cpu"))


def test_an_anybotics_style_robot_offers_the_mirror_to_the_augmentation(tmp_path):
    env = _env(anybotics_style(tmp_path))
    assert isinstance(env, Symmetric)
    obs, actions = torch.randn(5, env.obs_dims["policy"]), torch.randn(5, env.action_spec.n)
    assert torch.equal(env.mirror_obs(env.mirror_obs(obs)), obs)
    assert torch.equal(env.mirror_actions(env.mirror_actions(actions)), actions)
    names = env.robot.joint_names
    mirrored = env.mirror_actions(torch.eye(len(names)))  # row i: the mirror of a unit action on joint i
    for i, n in enumerate(names):
        j = int(mirrored[i].abs().argmax())
        assert names[j] == twins(names)[i] == {"L": "R", "R": "L"}[n[0]] + n[1:]
        assert float(mirrored[i, j]) == (-1.0 if n.endswith("HAA") else 1.0)
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, PolicyConfig())
    PPO(policy, AlgorithmConfig(symmetry="augment"), 1, torch.device("cpu"), 2, 2, torch.Generator(),
        mirrors=Mirrors(env.mirror_obs, env.mirror_actions))
    n = 5  # the augmented batch: its mirrored half, mirrored again, is the original
    batch = {"obs": obs, "actions": actions, "weights": torch.ones(n), **{k: torch.randn(n) for k in SAME_KEYS
                                                                         if k not in ("weights",)}}
    out = augment(batch, env.mirror_obs, env.mirror_actions)
    assert torch.equal(env.mirror_obs(out["obs"][n:]), obs)
    assert torch.equal(env.mirror_actions(out["actions"][n:]), actions)


def test_a_declared_map_that_pairs_nothing_is_one_line(tmp_path):
    with pytest.raises(UserError, match=r"field mirror: no twin for joints LF_HAA.*the actuated joints: LF_HAA"):
        _env(anybotics_style(tmp_path, MirrorMap(swap=(("LF", "XX"),))))
