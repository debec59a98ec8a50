"""The base of every batched MuJoCo task: physics, random stream, task state, CUDA graphs, checkpoints.

A task family (velocity tracking in ``envs/tasks/locomotion/``, reaching in ``envs/tasks/reach/``) builds its
``mujoco.MjModel``, declares its per-env state (``envs/tasks/state.py``) and hands both to ``MujocoTask``, which
owns what every such task does alike:

- the physics backend picked by ``env.backend`` (``envs/physics/factory.py``), stepped ``decimation`` substeps
  per control step, with the model fields it randomizes per env;
- one torch generator for every random draw (saved in checkpoints: a resumed CPU run continues bit-identically);
- the VecEnv calls ``reset`` / ``step`` (one torch thread for the task logic next to a CPU physics backend, or the
  task logic replayed as a CUDA graph after MuJoCo Warp's own graph: ``envs/tasks/graphed_step.py``);
- ``state_dict`` / ``load_state_dict`` (physics state, task state, generator);
- what play.py's video and viewer read (``model``, ``render_model``, ``camera``, ``track_body``).

The step is one recipe for every family (``_finish_step``, torch only, fixed shapes, no host sync):

    readout -> the family's quantities -> reward terms -> terminations (the shared divergence test, the family's
    failures and cuts, the time limit) -> commands / targets -> observation -> masked reset and restart -> info

and a family supplies its parts (``envs/tasks/parts.py``: ``self.parts``, a ``TaskParts[V, Q]`` typed by its view
and its quantities, built once from its job modules), not a copy of the recipe nor hooks of its env. Its
``__init__`` sets what the shared action step reads (``default_joint_pos``, ``action_scale``, ``clip_actions``,
``ctrl_order``, ``held_pos``), the reward terms (``_set_rewards``) and ``parts``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

import mujoco
import torch

from envs.physics.base import PhysicsReadout, PhysicsRequest
from envs.physics.cpu_threads import single_threaded
from envs.physics.factory import make_physics, resolve_backend
from envs.physics.registry import REGISTRY
from envs.tasks.bounds import every
from envs.tasks.graphed_step import GraphedStep
from envs.tasks.mujoco_config import MujocoEnvConfig
from envs.tasks.parts import TaskParts
from envs.tasks.reward_terms import RewardTerms, weight_column
from envs.tasks.state import TaskState
from rl_core.env_api import ActionSpec, Obs, StepInfo

WRITES = ("episode_length",)
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""

S = TypeVar("S", bound=TaskState)


class MujocoTask(Generic[S]):
    """``cfg.num_envs`` simulations of ``model`` with per-env task state ``state`` (see the module docstring)."""

    cfg: MujocoEnvConfig
    """The task's config."""
    action_spec: ActionSpec
    """What the policy outputs (the family sets it)."""
    obs_dims: dict[str, int]
    """Width of each observation group (the family sets it)."""
    camera: str | None = None
    """The camera a video films through (None: the renderer's free camera)."""
    track_body: int = 0
    """The body the interactive viewer's camera follows (0: the world)."""
    parts: TaskParts[Any, Any]
    """What the family's step runs (``envs/tasks/parts.py``; the family builds it in its ``__init__``)."""
    outputs_finite = True
    """``rl_core.env_api.FiniteOutputs``: the step replaces non-finite observations and rewards by 0 and marks
    those transitions ``invalid`` (the divergence guard), so the learner does not check them again."""

    def __init__(self, cfg: MujocoEnvConfig, model: mujoco.MjModel, randomized_fields: tuple[str, ...],
                 state: type[S], sizes: dict[str, int], device: torch.device | str):
        device = torch.device(device)
        self.cfg = cfg
        self.backend = resolve_backend(cfg.backend, device)
        self.model = model
        self.num_envs = cfg.num_envs
        self.physics = make_physics(self.backend, PhysicsRequest(
            model=model, num_envs=cfg.num_envs, nsubsteps=cfg.decimation, model_fields=randomized_fields,
            device=device, threads=cfg.physics_threads, mjx_impl=cfg.mjx_impl, nconmax=cfg.warp_nconmax,
            njmax=cfg.warp_njmax))
        self.device = self.physics.device
        self.dt = cfg.decimation * model.opt.timestep
        """Control period (s)."""
        self.generator = torch.Generator(self.device)
        """Every random draw of the task (saved in checkpoints)."""
        self.state: S = state.allocate(cfg.num_envs, sizes, self.device)
        """Per-env task state (checkpointed, reset by ``state.clear``, static in the CUDA graph)."""
        self._cpu = self.device.type == "cpu"
        self.rollout_torch_threads = 1 if self._cpu else 0
        """``rl_core.env_api.NativeThreads``: one torch thread over a CPU backend's rollout (physics/cpu_threads.py)."""
        self.fixed_shapes = not self._cpu
        """Masked updates run at fixed shapes whatever the mask (no host sync reads it): on a GPU. On the CPU an
        empty mask skips its work and freshly reset envs alone are observed (a test may switch it on there)."""
        self._all = torch.ones(cfg.num_envs, dtype=torch.bool, device=self.device)
        self.max_episode_length = self.episode_steps(cfg.episode_length_s)
        """Control steps of an episode (its time limit, truncated)."""
        self.randomize_initial_episode_length = cfg.randomize_initial_episode_length
        self.clip_actions = cfg.clip_actions
        """Actions are clipped to +-this before they become joint targets."""
        self.only_positive_rewards = False
        """Clip a step's total reward at 0 (legged_gym's ``only_positive_rewards``)."""
        self.resample_steps = 0
        """Steps between command / target resamples (the family sets it)."""
        self.default_joint_pos: torch.Tensor = torch.zeros(0, device=self.device)
        """Joint targets of a zero action (the family sets it)."""
        self.action_scale: float | torch.Tensor = 1.0
        """Joint target offset per unit of action: one number, or one per joint."""
        self.held_pos: torch.Tensor | None = None
        """Targets of the held joints, appended after the trained ones (None: none held)."""
        self.ctrl_order: torch.Tensor | None = None
        """Index into the targets of each actuator (None: the actuators are in target order)."""
        graphable = cfg.cuda_graph and REGISTRY[self.backend].graph_capturable and self.device.type == "cuda"
        self.graphed = self.graphed_step() if graphable else None
        """The step's task logic as a replayed CUDA graph (MuJoCo Warp on a GPU), else None."""

    def graphed_step(self) -> GraphedStep:
        """The step as ``GraphedStep`` wires it: ``_act`` eagerly, ``_finish_step`` captured with the task state as
        its static buffers (tests/envs/test_graphed_step_contract.py runs this wiring on the CPU with a stand-in
        graph)."""
        return GraphedStep(self.state, self._act, self._finish_step, type(self.state).names(), self.generator)

    def reset_envs(self, mask: torch.Tensor) -> None:
        """Fresh state for the masked envs (fixed shapes, no sync): the family's ``events.reset``."""
        self.parts.events.reset(mask)

    def _extra_state(self) -> dict[str, torch.Tensor]:
        """Task state outside ``state`` that checkpoints keep (CPU tensors)."""
        return {}

    def _load_extra_state(self, task: dict[str, torch.Tensor]) -> None:
        """Restore what ``_extra_state`` saved."""

    # ------------------------------------------------------------------------------------ the recipe
    def _set_rewards(self, terms: RewardTerms[Any], weights: Mapping[str, float]) -> None:
        """The family's reward table and weights: checked against each other (one line naming the odd one), and
        the switched-on terms kept with their weight times the control period."""
        terms.check(weights)
        self.rewards_table = terms
        self.reward_terms = {name: w * self.dt for name, w in weights.items() if w != 0.0}
        """Each switched-on reward term's weight times the control period."""
        self.reward_column = weight_column(self.reward_terms, self.device)
        """The same weights as one ``[terms, 1]`` tensor: the terms are weighted by one multiply."""

    def _act(self, actions: torch.Tensor) -> torch.Tensor:
        """Clip the actions, turn them into joint targets (held joints at their pose) and advance the physics by
        one control step; returns the clipped actions."""
        clip = self.clip_actions
        actions = actions.to(self.device).clamp(-clip, clip)
        applied = self.parts.applied
        targets = self.default_joint_pos + self.action_scale * (actions if applied is None else applied(actions))
        if self.held_pos is not None:
            targets = torch.cat([targets, self.held_pos.expand(targets.shape[0], -1)], dim=1)
        self.physics.step(targets if self.ctrl_order is None else targets[:, self.ctrl_order])
        return actions

    def _finish_step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        """Everything after the physics, top to bottom (torch only, fixed shapes, no host sync)."""
        state, parts, events, report = self.state, self.parts, self.parts.events, self.parts.report
        r = self.physics.read()
        v = parts.view(r)
        state.episode_length += 1
        q = parts.measure(v, actions)
        context = parts.reward_context(q, actions)
        self.rewards_table.update(context)  # the stateful terms' state moves, whatever their weights
        stacked = self.rewards_table.stacked(self.reward_terms, self.reward_column, context)
        reward = stacked.sum(0)  # stacked: [terms, N], weighted
        if self.only_positive_rewards:
            reward = reward.clamp(min=0.0)
        diverged = diverged_worlds(r, reward, parts.too_fast(r.qvel))
        failed = parts.ended(q, "fail")
        terminated = diverged if failed is None else failed | diverged
        cut = parts.ended(q, "cut")
        limit = state.episode_length >= self.max_episode_length
        truncated = (limit if cut is None else limit | cut) & ~terminated
        events.after_step(q, actions)
        self.rewards_table.settle(context)
        done = terminated | truncated
        parts.resample(q, (state.episode_length % self.resample_steps == 0) & ~done)
        # The observation of the state after this step; for done envs it is the final one of their episode.
        final_obs, bad_obs = parts.observe(v)
        assert bad_obs is not None
        late = bad_obs & ~diverged  # diverged in its observation only: ends here too
        diverged = diverged | bad_obs
        terminated, truncated, done = terminated | late, truncated & ~late, done | late
        reward = torch.where(diverged, 0.0, reward)  # a non-finite reward is a diverged world's
        valid = ~diverged
        # a diverged episode has no statistics (never a success)
        stats = {} if report.episode_stats is None else report.episode_stats(q, done & valid)
        if events.before_reset is not None:
            events.before_reset(q, done)
        obs = final_obs
        if self._needed(done):
            if events.episode_end is not None:
                events.episode_end(q, done & valid)  # not by a flight
            events.reset(done)
            obs = self._restarted(done, final_obs)
        if events.after_observation is not None:
            events.after_observation(obs)
        extra = {} if report.info is None else report.info(q)
        log = step_log(stacked, list(self.reward_terms), valid, report.measures(q), terminated, truncated, diverged)
        log.update(extra.pop("log", {}))
        info: StepInfo = {"final_obs": final_obs if self._needed(truncated) else None, "log": log,
                          "invalid": diverged, "episode_stats": stats, "metrics": report.metrics(q)}
        info.update(extra)  # type: ignore[typeddict-item]
        return obs, reward, terminated, truncated, info

    def _restarted(self, done: torch.Tensor, final_obs: Obs) -> Obs:
        """``final_obs`` with the rows of the envs just reset replaced by their first observation. On the CPU only
        those rows are observed (reading the mask costs nothing there; the height scan of every env was a third of
        the task logic's time on quadruped-rough); elsewhere all rows, at fixed shapes."""
        r = self.physics.read()
        if not self.fixed_shapes:
            rows = done.nonzero().squeeze(1)
            sub = PhysicsReadout(r.qpos[rows], r.qvel[rows], r.sensordata[rows], r.actuator_force[rows])
            fresh = self.parts.observe(self.parts.view(sub), rows, check=False)[0]
            return {g: final_obs[g].index_copy(0, rows, fresh[g]) for g in final_obs}
        fresh = self.parts.observe(self.parts.view(r), check=False)[0]  # (the step's observation was the one checked)
        return {g: torch.where(done.unsqueeze(1), fresh[g], final_obs[g]) for g in final_obs}

    def _reset_all(self) -> Obs:
        """Reset every env; with ``randomize_initial_episode_length`` their clocks start spread over an episode
        (time-outs do not synchronize); returns the first observations."""
        events = self.parts.events
        if events.start_all is not None:
            events.start_all()
        events.reset(self._all)
        if self.randomize_initial_episode_length:
            self.state.episode_length = torch.randint(0, self.max_episode_length, (self.num_envs,),
                                                      generator=self.generator, device=self.device)
        obs = self.parts.observe(self.parts.view(self.physics.read()), check=False)[0]
        if events.after_observation is not None:
            events.after_observation(obs)
        return obs

    # ------------------------------------------------------------------------------------ VecEnv API
    def reset(self, seed: int | None = None) -> Obs:
        with single_threaded(self._cpu):
            if seed is not None:
                self.generator.manual_seed(seed)
            return self._reset_all()

    def step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        if self.graphed is not None:
            return self.graphed(actions)
        with single_threaded(self._cpu):
            return self._finish_step(self._act(actions))

    def close(self) -> None:
        pass

    def render_model(self, index: int) -> mujoco.MjModel:
        """The model to film env ``index`` with from now on (the simulated one unless a task lightens it)."""
        return self.model

    def caption(self, index: int) -> str:
        """What a video frame of env ``index`` says (a task tells its command and what the robot does)."""
        return ""

    # ----------------------------------------------------------------------------------- checkpoint
    def state_dict(self) -> dict[str, Any]:
        task = self.state.state_dict() | self._extra_state()
        return {"physics": self.physics.state_dict(), "task": task, "generator": self.generator.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.physics.load_state_dict(state["physics"])
        self.state.load_state_dict(state["task"])
        self._load_extra_state(state["task"])
        self.generator.set_state(state["generator"])

    # ------------------------------------------------------------------------------------ helpers
    def _needed(self, mask: torch.Tensor) -> bool:
        """Whether masked work must run: on the CPU skip an empty mask (reading it is free); on a GPU always run
        the fixed-shape masked update instead of reading the mask back (a host sync)."""
        return self.fixed_shapes or bool(mask.any())

    def _uniform(self, shape: tuple[int, ...], low: float, high: float) -> torch.Tensor:
        """Uniform draws in [low, high) from the task's generator."""
        return torch.rand(shape, generator=self.generator, device=self.device) * (high - low) + low

    def episode_steps(self, seconds: float) -> int:
        """Control steps in ``seconds`` (rounded up)."""
        return math.ceil(seconds / self.dt)


def diverged_worlds(r: PhysicsReadout, reward: torch.Tensor, too_fast: torch.Tensor) -> torch.Tensor:
    """The divergence test every family shares, ``[N]`` bool: a non-finite ``qpos`` or ``reward``, ``too_fast``
    (the family's speed bounds, true for a non-finite ``qvel``: ``~(|qvel| <= bound)``) or the backend's own alarm
    (the observation's own check comes later, in the step). A diverged world is terminated, ``invalid`` (never
    learned from, never a success), its reward zeroed and reset."""
    out = ~every(torch.isfinite(r.qpos)) | too_fast
    out |= ~torch.isfinite(reward)
    if r.unstable is not None:
        out |= r.unstable.to(reward.device)
    return out


def step_log(terms: torch.Tensor, names: list[str], valid: torch.Tensor, measures: dict[str, torch.Tensor],
             terminated: torch.Tensor, truncated: torch.Tensor, is_diverged: torch.Tensor) -> dict[str, torch.Tensor]:
    """``Env/<name>`` of one step: each reward term's mean (``terms [T, N]``, weighted), the family's ``measures``
    and the done shares, over the worlds that did not diverge (a diverged world's values can be huge or NaN); the
    diverged share. One reduction for all, no host sync."""
    n = valid.float().sum().clamp(min=1.0)
    rows = [*measures.values(), terminated.float(), truncated.float()]
    stacked = torch.cat([terms, torch.stack(rows)])
    means = torch.where(valid, stacked, 0.0).sum(1) / n
    keys = [f"rew_{name}" for name in names] + [*measures, "terminated", "truncated"]
    out = dict(zip(keys, means.unbind(), strict=True))
    out["diverged"] = is_diverged.float().mean()
    return out


def columns(addresses: tuple[int, ...], device: torch.device) -> slice | torch.Tensor:
    """Index of the given columns: a slice (a view, no copy) when they are contiguous, else an index tensor."""
    if addresses and list(addresses) == list(range(addresses[0], addresses[0] + len(addresses))):
        return slice(addresses[0], addresses[0] + len(addresses))
    return torch.tensor(addresses, dtype=torch.long, device=device)
