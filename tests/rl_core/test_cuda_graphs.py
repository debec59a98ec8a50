"""CUDA graphs: the captured env step (MuJoCo Warp + task logic) and the captured PPO minibatch update behave as
their eager versions. Needs an NVIDIA GPU (skipped elsewhere; run on a GPU machine with ``pytest -m cuda``)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from tests.helpers import transition

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]
N = 64


def make_env(cuda_graph: bool, **kw):
    pytest.importorskip("mujoco_warp")
    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv
    from envs.tasks.locomotion.config import LocomotionEnvConfig

    cfg = LocomotionEnvConfig(num_envs=N, backend="warp", cuda_graph=cuda_graph, **kw)
    return LocomotionEnv(cfg, QUADRUPED, "cuda")


def quiet(**kw):
    """No observation noise, pushes or random episode clocks: steps then do not depend on random numbers."""
    from envs.tasks.locomotion.config import LocomotionEnvConfig

    base = LocomotionEnvConfig()
    return dict(noise=dataclasses.replace(base.noise, scale=0.0), randomize_initial_episode_length=False,
                randomization=dataclasses.replace(base.randomization, push_interval_s=0.0), **kw)


def test_graphed_env_step_matches_the_eager_step():
    graphed, eager = make_env(True, **quiet()), make_env(False, **quiet())
    a, b = graphed.reset(seed=3)["policy"], eager.reset(seed=3)["policy"]
    torch.testing.assert_close(a, b)
    g = torch.Generator(device="cuda").manual_seed(0)
    for _ in range(10):
        actions = 0.3 * torch.randn(N, 12, device="cuda", generator=g)
        (oa, ra, ta, ua, _), (ob, rb, tb, ub, _) = graphed.step(actions), eager.step(actions)
        # contacts are gathered with atomics on the GPU: the same step can sum in another order
        torch.testing.assert_close(oa["policy"], ob["policy"], atol=1e-3, rtol=1e-3)
        torch.testing.assert_close(ra, rb, atol=1e-4, rtol=1e-3)
        assert torch.equal(ta, tb) and torch.equal(ua, ub)
    assert graphed.graphed is not None and graphed.graphed.captures == 1 and eager.graphed is None


def test_graphed_env_recaptures_after_reset_and_resumes_exactly():
    env = make_env(True)
    env.reset(seed=1)
    actions = torch.zeros(N, 12, device="cuda")
    for _ in range(3):
        env.step(actions)
    state = env.state_dict()
    first = [env.step(actions)[0]["policy"].clone() for _ in range(5)]
    env.load_state_dict(state)  # replaces the task's state tensors: the next step re-captures
    second = [env.step(actions)[0]["policy"].clone() for _ in range(5)]
    for x, y in zip(first, second, strict=True):
        torch.testing.assert_close(x, y, atol=1e-3, rtol=0)  # atomics: summation order may differ
    captures = env.graphed.captures
    env.reset(seed=2)
    env.step(actions)
    assert env.graphed.captures == captures + 1


def test_graphed_env_detects_nan_physics_and_recovers():
    env = make_env(True)
    env.reset(seed=6)
    actions = torch.zeros(N, 12, device="cuda")
    env.step(actions)
    env.step(actions)  # captured from here on
    mask = torch.zeros(N, dtype=torch.bool, device="cuda")
    mask[[2, 9]] = True
    env.physics.set_velocity(mask, torch.full((N, env.model.nv), float("nan"), device="cuda"))
    obs, rew, term, trunc, info = env.step(actions)
    assert torch.equal(info["invalid"], mask) and torch.equal(term, mask)
    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
    obs, rew, term, trunc, info = env.step(actions)
    assert torch.isfinite(env.physics.read().qvel).all() and not info["invalid"].any()


@pytest.mark.parametrize("symmetry", [False, True], ids=["plain", "symmetry"])
def test_graphed_ppo_update_matches_the_eager_update(symmetry: bool):
    from rl_core.config import AlgorithmConfig, PolicyConfig
    from rl_core.env_api import ActionSpec
    from rl_core.modules.actor_critic import ActorCritic
    from rl_core.ppo import PPO
    from rl_core.storage import RolloutStorage
    from rl_core.symmetry import Mirrors

    def mirror(width: int):
        sign = torch.tensor([(-1.0) ** i for i in range(width)], device="cuda")
        return lambda x: torch.flip(x, [-1]) * sign

    def build(cuda_graph: bool):
        torch.manual_seed(0)
        config = PolicyConfig(actor_hidden_dims=(128, 64, 32), critic_hidden_dims=(128, 64, 32), activation="elu")
        policy = ActorCritic((48,), None, ActionSpec(discrete=False, n=12), config).cuda()
        cfg = AlgorithmConfig(num_mini_batches=4, num_learning_epochs=5, cuda_graph=cuda_graph,
                              symmetry="augment" if symmetry else "none")
        return policy, PPO(policy, cfg, 10, torch.device("cuda"), 256, 24, torch.Generator(device="cuda"),
                           mirrors=Mirrors(mirror(48), mirror(12)) if symmetry else None)

    (pa, alg_a), (pb, alg_b) = build(True), build(False)
    assert alg_a.graphed_update is not None and alg_b.graphed_update is None
    storage = RolloutStorage(24, 256, torch.device("cuda"))
    for it in range(3):  # iteration 1 warms up, 2 captures, 3 replays
        gen = torch.Generator(device="cuda").manual_seed(100 + it)
        for _t in range(24):
            obs = torch.randn(256, 48, device="cuda", generator=gen)
            with torch.no_grad():
                params, values = pa.params_and_value(obs, obs)
                actions = pa.head.sample(params, gen)
                storage.add(transition(obs, None, actions, pa.head.log_prob(params, actions), params, values,
                            torch.randn(256, device="cuda", generator=gen),
                            torch.zeros(256, dtype=torch.bool, device="cuda"),
                            torch.zeros(256, dtype=torch.bool, device="cuda"), None, None))
        storage.compute_returns(torch.zeros(256, device="cuda"), 0.99, 0.95)
        adv = storage.advantages.clone()
        alg_a.storage, alg_b.storage = storage, storage
        alg_a.generator.manual_seed(it)
        out_a = alg_a.update()
        storage.advantages = adv
        alg_b.generator.manual_seed(it)
        out_b = alg_b.update()
        for k in ("surrogate_loss", "value_loss", "kl", "learning_rate"):
            torch.testing.assert_close(out_a[k], out_b[k], atol=1e-5, rtol=1e-4)
        for x, y in zip(pa.parameters(), pb.parameters(), strict=True):
            torch.testing.assert_close(x, y, atol=1e-5, rtol=1e-4)
        storage.clear()
    assert alg_a.graphed_update is not None and alg_a.graphed_update.graph is not None


def test_runner_trains_on_the_warp_backend_with_graphs(tmp_path):
    """A few iterations of the real runner: the env step and the update are captured, and the run saves."""
    pytest.importorskip("mujoco_warp")
    from configs.catalog import get_task
    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv
    from rl_core.ppo import PPO
    from rl_core.runner import OnPolicyRunner

    cfg = get_task("quadruped-flat").default_config()
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=N, backend="warp"),
                              runner=dataclasses.replace(cfg.runner, device="cuda", max_iterations=4, save_interval=2))
    env = LocomotionEnv(cfg.env, QUADRUPED, "cuda")
    runner = OnPolicyRunner(env, cfg, task="quadruped-flat", run_dir=tmp_path, quiet=True)
    summary = runner.learn()
    assert summary["iterations"] == 4 and isinstance(runner.alg, PPO)
    assert runner.alg.graphed_update is not None and runner.alg.graphed_update.graph is not None
    assert env.graphed is not None and env.graphed.captures == 1
    assert all(torch.isfinite(p).all() for p in runner.policy.parameters())
    assert (tmp_path / "checkpoints" / "model_4.pt").exists()
