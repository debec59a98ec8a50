"""Small configs and runners shared by tests (they live with the fault harness, which uses them too)."""

from fault_injection.cartpole import make_runner, tiny_cartpole

__all__ = ["make_runner", "model_field", "tiny_cartpole", "transition"]


def transition(obs, critic_obs, actions, log_probs, dist_params, values, rewards, terminated, truncated,
               final_values=None, invalid=None, hidden=None, teacher_actions=None):
    """A PPO step for a storage filled by hand, its fields in the order of a rollout (weight 1 unless ``invalid``,
    zero bootstrap values unless ``final_values``)."""
    import torch

    from rl_core.transition import Transition

    n = terminated.shape[0]
    return Transition(obs=obs, critic_obs=critic_obs, actions=actions, log_probs=log_probs, dist_params=dist_params,
                      values=values, rewards=rewards, terminated=terminated, truncated=truncated,
                      final_values=torch.zeros(n, device=rewards.device) if final_values is None else final_values,
                      weights=torch.ones(n, device=rewards.device) if invalid is None else (~invalid).float(),
                      hidden=hidden, teacher_actions=teacher_actions)


def model_field(physics, name: str):
    """The current per-simulation values ``[N, ...]`` (float32, on the CPU) of a model field the physics was built
    to vary per simulation: read from its ``state_dict``, which saves them with the state."""
    return physics.state_dict()[name].float()
