"""Learned players (needs torch, the ``[train]`` extra): :class:`PPOAgent` over the network of :mod:`.model`.

- :mod:`.agent`: the agent that plays a checkpoint, and the shipped checkpoint's path;
- :mod:`.model`: the actor-critic network, its masked distribution and checkpoint loading.
"""

from .agent import DEFAULT_CHECKPOINT, PPOAgent, check_checkpoint_game

__all__ = ["DEFAULT_CHECKPOINT", "PPOAgent", "check_checkpoint_game"]
