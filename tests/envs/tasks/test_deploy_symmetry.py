"""Symmetry augmentation of the deployable tasks (issue 45): ``menagerie:NAME:deploy`` of a robot with twin joints
trains with ``algorithm.symmetry=augment``, and its env mirrors both observation groups exactly (the policy's 5
frames without base velocity, the critic's every term): the mirror of each group's observation of a state is that
group's observation of the mirrored state. On the served Unitree-style test models (tests/menagerie_models.py)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from configs.catalog import get_task
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import NoiseConfig, RandomizationConfig
from rl_core.env_api import Symmetric
from tests.menagerie_models import menagerie_root, seed_fix_cache
from tests.mirrored_states import mirrored_pair

pytest.importorskip("mujoco_menagerie")
GO2, G1 = "menagerie:unitree_go2:deploy", "menagerie:unitree_g1@g1_mjlab:deploy"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """MENAGERIE_ROOT at a folder of the test models, the fix cache holding the draft's own settings (no search)."""
    from envs import registry

    for name in [n for n in registry.registered_so_far() if n.startswith("menagerie:")]:
        monkeypatch.delitem(registry._REGISTRY, name)
    monkeypatch.setenv("MENAGERIE_ROOT", str(menagerie_root(tmp_path / "menagerie")))
    monkeypatch.setenv("LEGGED_MJX_CACHE", str(tmp_path / "cache"))
    for task in (GO2, G1):
        seed_fix_cache(task)


def _quiet_env(task: str) -> LocomotionEnv:
    """The task's env without noise, randomization or pushes, 4 envs on the native backend."""
    spec = get_task(task)
    cfg = dataclasses.replace(spec.default_config().env, num_envs=4, backend="native", noise=NoiseConfig(scale=0.0),
                              randomization=RandomizationConfig(push_interval_s=0.0, init_base_vel=0.0))
    assert spec.validate is not None
    spec.validate(cfg)
    env = spec.make_env(cfg, torch.device("cpu"))
    assert isinstance(env, LocomotionEnv)
    return env


@pytest.mark.parametrize("task", [GO2, G1])
def test_a_deploy_task_mirrors_both_groups_and_trains_with_augment(served, task):
    assert get_task(task).default_config().algorithm.symmetry == "augment"
    env = _quiet_env(task)
    assert isinstance(env, Symmetric) and env.history.frames == 5
    obs = mirrored_pair(env)
    assert set(obs) == {"policy", "critic"}
    for group, o in obs.items():
        assert not torch.allclose(o[0], o[1], atol=1e-2), group  # the state is not its own mirror
        torch.testing.assert_close(env.mirror_obs(o[:1], group), o[1:2], atol=1e-5, rtol=0.0)
        x = torch.randn(3, env.obs_dims[group])
        assert torch.equal(env.mirror_obs(env.mirror_obs(x, group), group), x), group
    env.close()


def test_the_rough_task_of_a_drafted_robot_trains_without_augmentation(served):
    """Its height scan has no mirror rule, so its env offers no mirror (augment would stop the run at start-up)."""
    cfg = get_task("menagerie:unitree_go2:rough").default_config()
    assert cfg.env.height_scan.enabled and cfg.algorithm.symmetry == "none"
