"""Transitional: the parts of a family still written as hooks of its env (removed once every family assembles
its own ``TaskParts``)."""

from __future__ import annotations

from typing import Any

from envs.tasks.parts import Events, Report, TaskParts, Termination


def hook_parts(env: Any) -> TaskParts[Any, Any]:
    """``env``'s hook methods (``_view``, ``_measure``, ...) as parts."""
    def hook(name: str) -> Any:
        return getattr(env, name, None)

    terminations = (Termination("failed", "fail", env._failed), Termination("cut", "cut", env._cut))
    events = Events(reset=env.reset_envs, after_step=env._after_rewards, start_all=hook("_start_all"),
                    before_reset=hook("_before_reset"), episode_end=hook("_episodes_end"),
                    after_observation=hook("_after_observation"))
    report = Report(measures=env._measures, metrics=env._metrics, episode_stats=env._episode_stats, info=env._info)
    return TaskParts(view=env._view, measure=env._measure, reward_context=env._reward_context,
                     too_fast=env._too_fast, terminations=terminations, resample=env._resample,
                     observe=env._observe, events=events, report=report, applied=hook("_applied"))
