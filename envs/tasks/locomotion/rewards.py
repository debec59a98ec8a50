"""Reward terms of velocity tracking (legged_gym's set plus foot slip, and biped terms), each a small function.

A term is a function of the step's ``Context`` returning ``[N]`` values before weighting, registered under its
own name with ``@term`` (``envs/tasks/reward_terms.py``); its weight is the field of that name in ``RewardScales``
(``locomotion/config.py``; a zero weight switches it off). A new reward is one function here and one weight
there; a quantity no term had yet is one property of ``Step`` (``step.py``). At start-up ``check_weights`` makes
sure the weights and the table name the same terms. Terms are pure: tests check each on hand-built contexts.

A term with memory owns it (``reward_terms.StatefulTerm``): ``feet_air_time`` declares the feet's clocks
(``FootClocks``), advances them before the rewards, restarts the landed feet's air clocks after the step; the env
merges the fields into ``LocomotionState`` (checkpoints keep their names) and the task base calls the updates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch

from envs.tasks.locomotion.config import RewardParams
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.locomotion.step import Step
from envs.tasks.reward_terms import RewardTerms, StatefulTerm
from envs.tasks.rotations import yaw_of
from envs.tasks.state import TaskState, per_env

WRITES = ("air_time", "contact_time", "last_contacts")
"""The task state fields this module writes (the feet's clocks ``feet_air_time`` owns)."""


@dataclass(frozen=True)
class Constants:
    """What the terms read that never changes during a run (built once with the env)."""

    foot_names: tuple[str, ...]
    """The robot's feet, in foot-column order."""
    left_feet: torch.Tensor
    """Foot columns of the left feet, paired with ``right_feet`` (``envs/robots/mirror.py``)."""
    right_feet: torch.Tensor
    """Foot columns of the right feet."""
    dt: float
    """Control period (s)."""
    params: RewardParams
    """Targets and thresholds of the terms."""


@dataclass(frozen=True)
class Context:
    """What a reward term may read after a step (``[N, ...]`` tensors on the env device)."""

    s: Step
    """The step's quantities (base and joint velocities, feet, contact forces, torques)."""
    state: LocomotionState
    """Task state: ``commands``, ``last_actions`` and ``last_joint_vel`` of before this step; the stateful terms'
    fields (``clocks``) already advanced by it."""
    actions: torch.Tensor
    """This step's (clipped) actions ``[N, J]``."""
    contact: torch.Tensor
    """Feet on the ground ``[N, F]`` bool."""
    penalized_contact: torch.Tensor
    """Penalized bodies touching the floor ``[N, B]`` bool."""
    base_height: torch.Tensor
    """Base height above the ground below it ``[N]`` (m)."""
    joint_offset: torch.Tensor
    """The ``RewardParams.deviation_joints`` minus their default angles ``[N, K]``."""
    k: Constants
    """The run's constants (also read as ``x.dt``, ``x.params``, ``x.left_feet``, ``x.right_feet``)."""

    @property
    def dt(self) -> float:
        return self.k.dt

    @property
    def params(self) -> RewardParams:
        return self.k.params

    @property
    def left_feet(self) -> torch.Tensor:
        return self.k.left_feet

    @property
    def right_feet(self) -> torch.Tensor:
        return self.k.right_feet


TERMS = RewardTerms[Context]()
"""Reward term name -> its function (filled by ``@term``, in definition order)."""
term = TERMS.add
"""Register a function as the reward term of its own name."""


@term
def tracking_lin_vel(x: Context) -> torch.Tensor:
    error = torch.sum(torch.square(x.state.commands[:, :2] - x.s.lin_vel_b[:, :2]), dim=1)
    return torch.exp(-error / x.params.tracking_sigma)


@term
def tracking_ang_vel(x: Context) -> torch.Tensor:
    return torch.exp(-torch.square(x.state.commands[:, 2] - x.s.ang_vel_b[:, 2]) / x.params.tracking_sigma)


@term
def lin_vel_z(x: Context) -> torch.Tensor:
    return torch.square(x.s.lin_vel_b[:, 2])


@term
def ang_vel_xy(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.s.ang_vel_b[:, :2]), dim=1)


@term
def orientation(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.s.gravity_b[:, :2]), dim=1)


@term
def torques(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.s.torques), dim=1)


@term
def dof_acc(x: Context) -> torch.Tensor:
    return torch.sum(torch.square((x.s.joint_vel - x.state.last_joint_vel) / x.dt), dim=1)


@term
def action_rate(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.actions - x.state.last_actions), dim=1)


@dataclass(eq=False)
class FootClocks(TaskState):
    """The feet's clocks, owned by ``feet_air_time`` (``feet_air_time_biped`` reads them too); zero after a reset."""

    air_time: torch.Tensor = per_env("feet")
    """Seconds each foot has been off the ground."""
    contact_time: torch.Tensor = per_env("feet")
    """Seconds each foot has been on the ground (0 in the air)."""
    last_contacts: torch.Tensor = per_env("feet", dtype=torch.bool)
    """Feet on the ground after the previous step."""


def clocks(state: object) -> FootClocks:
    """The feet's clocks of a task state (the env's state class merges ``FootClocks``)."""
    return cast(FootClocks, state)


class FeetAirTime(StatefulTerm[Context]):
    """Air time of each foot at its touchdown minus ``air_time_offset`` (0.5 s, legged_gym's); zero when no linear
    velocity is commanded."""

    name = "feet_air_time"
    State = FootClocks
    first_contact: torch.Tensor
    """Feet touching down this step ``[N, F]`` bool (set by ``update``)."""

    def update(self, x: Context) -> None:
        """Touchdowns of this step (a foot in the air until now, on the ground now or after the last step); every
        air clock advances, the contact clocks of the feet on the ground too."""
        c = clocks(x.state)
        self.first_contact = (c.air_time > 0) & (x.contact | c.last_contacts)
        c.air_time += x.dt
        c.contact_time = (c.contact_time + x.dt) * x.contact

    def settle(self, x: Context) -> None:
        """The air clocks of the feet on the ground restart; this step's contacts become the last ones."""
        c = clocks(x.state)
        c.air_time *= ~(x.contact | c.last_contacts)  # contact_filt: this step's or the last one's
        c.last_contacts = x.contact

    def __call__(self, x: Context) -> torch.Tensor:
        moving = torch.norm(x.state.commands[:, :2], dim=1) > 0.1
        return torch.sum((clocks(x.state).air_time - x.params.air_time_offset) * self.first_contact, dim=1) * moving


feet_air_time = term(FeetAirTime())


@term
def feet_slip(x: Context) -> torch.Tensor:
    """Horizontal speed squared of the feet in contact."""
    return torch.sum(torch.sum(torch.square(x.s.foot_vel_w[:, :, :2]), dim=2) * x.contact, dim=1)


@term
def collision(x: Context) -> torch.Tensor:
    return torch.sum(x.penalized_contact.float(), dim=1)


@term
def feet_air_time_biped(x: Context) -> torch.Tensor:
    """Single stance only: the shorter of the stance foot's contact time and the swing foot's air time, capped at
    ``air_time_threshold``; zero in double stance, in flight and when no linear velocity is commanded (Isaac
    Lab's)."""
    contact = x.contact
    c = clocks(x.state)
    in_mode = torch.where(contact, c.contact_time, c.air_time)
    single = torch.sum(contact.int(), dim=1) == 1
    reward = torch.where(single.unsqueeze(1), in_mode, torch.zeros_like(in_mode)).min(dim=1).values
    moving = torch.norm(x.state.commands[:, :2], dim=1) > 0.1
    return reward.clamp(max=x.params.air_time_threshold) * moving


@term
def feet_clearance(x: Context) -> torch.Tensor:
    """Swing feet away from the clearance height, weighted by how fast they move horizontally:
    (z - h)^2 tanh(2 |v_xy|)."""
    err = torch.square(x.s.foot_pos_w[:, :, 2] - x.params.feet_clearance_height)
    speed = torch.tanh(2.0 * torch.norm(x.s.foot_vel_w[:, :, :2], dim=2))
    return torch.sum(err * speed * ~x.contact, dim=1)


def _has_foot_pairs(k: Constants) -> str | None:
    return None if k.left_feet.numel() else f"needs left_*/right_* feet; the feet: {', '.join(k.foot_names)}"


@term(requires=_has_foot_pairs)
def feet_distance(x: Context) -> torch.Tensor:
    """How far each left foot is less than ``feet_min_distance`` to the left of its right foot, in the heading
    frame (a crossed pair counts its whole overlap); summed over the pairs."""
    foot_pos_w = x.s.foot_pos_w
    d = foot_pos_w[:, x.left_feet, :2] - foot_pos_w[:, x.right_feet, :2]  # [N, P, 2]
    yaw = yaw_of(x.s.base_quat).unsqueeze(1)
    sideways = -torch.sin(yaw) * d[:, :, 0] + torch.cos(yaw) * d[:, :, 1]
    return torch.sum((x.params.feet_min_distance - sideways).clamp(min=0.0), dim=1)


@term
def base_height(x: Context) -> torch.Tensor:
    return torch.square(x.base_height - x.params.base_height_target)


@term
def joint_deviation(x: Context) -> torch.Tensor:
    """Squared offset of the selected joints from their default angles."""
    return torch.sum(torch.square(x.joint_offset), dim=1)


@term
def energy(x: Context) -> torch.Tensor:
    return torch.sum(torch.abs(x.s.joint_torques * x.s.joint_vel), dim=1)


@term
def alive(x: Context) -> torch.Tensor:
    return torch.ones_like(x.state.commands[:, 0])


check_weights = TERMS.check
"""The weights and the table must name the same terms; otherwise one line names the odd one out."""
