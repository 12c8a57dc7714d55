"""The play loop: reset the agents, observe, act, step (one implementation, used by evaluation and play).

Works with any PettingZoo AEC environment whose agents act through ``act(observation, info)``
(the protocol of :mod:`rook_env.agents.base`)::

    from rook_env import raw_env
    from rook_env.agents import make_agent
    from rook_env.core.loop import play_episode

    env = raw_env()
    agents = [make_agent("heuristic"), make_agent("random"), make_agent("heuristic"), make_agent("random")]
    steps = play_episode(env, agents, seed=0)          # one hand (episode="hand", the default)
    env.infos["player_0"]["hand"]["hand_scores"]        # the hand's result

``agents`` maps seats to agents: a sequence indexed by seat (the position of the agent's name in
``env.possible_agents``), or a mapping keyed by seat or by agent name. One object may play several
seats. Hooks:

- ``on_step(step)``: called after every step with a :class:`Step` (seat, agent name, the observation
  and info the seat acted on, the action) and the environment still in hand, e.g. to record
  (observation, action) pairs or to show each move to a person; read ``env.rewards`` there for
  the rewards the step paid;
- ``on_illegal(step, error)``: an action the environment rejected (``ValueError``); return the
  action to play instead (evaluation counts and replaces). Without it the loop raises
  :class:`IllegalActionError` naming the seat, the agent and the environment's reason;
- ``stop(seat)`` (:func:`play_turns`): hand control back before that seat acts (a single-agent
  wrapper stops at its learner's seats).

Something to record before a step (e.g. a central critic's ``env.state_for(agent)``) is recorded
by a thin agent wrapper whose ``act`` records it, then delegates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

__all__ = ["IllegalActionError", "Step", "play_episode", "play_turns", "reset_agents", "seat_table"]


class IllegalActionError(ValueError):
    """An agent chose an action the environment rejected (not legal now, or not an action id)."""

    def __init__(self, message: str, seat: int, action: Any) -> None:
        super().__init__(message)
        self.seat = seat
        self.action = action


@dataclass(frozen=True)
class Step:
    """One decision: ``seat`` (index in ``env.possible_agents``) named ``agent`` saw ``observation``
    and ``info`` and chose ``action``."""

    seat: int
    agent: str
    observation: Mapping[str, Any]
    info: Mapping[str, Any]
    action: Any


def seat_table(env: Any, agents: Sequence[Any] | Mapping[Any, Any]) -> dict[str, Any]:
    """``{agent name: agent}`` for every agent of ``env`` from a seat-indexed sequence or a mapping
    keyed by seat or agent name; raises ValueError naming a seat without an agent."""
    names = list(env.possible_agents)
    table: dict[str, Any] = {}
    if isinstance(agents, Mapping):
        for key, agent in agents.items():
            table[names[key] if isinstance(key, int) and 0 <= key < len(names) else key] = agent
        unknown = sorted(str(k) for k in table if k not in names)
        if unknown:
            raise ValueError(f"agents given for unknown seats {unknown}; seats are 0..{len(names) - 1} or {names}")
    else:
        if len(agents) != len(names):
            raise ValueError(f"need one agent per seat ({len(names)}), got {len(agents)}")
        table = dict(zip(names, agents))
    for name, agent in table.items():
        if not callable(getattr(agent, "act", None)):
            raise ValueError(f"the agent for {name} ({agent!r}) has no act(observation, info) method")
    return table


def reset_agents(agents: Sequence[Any] | Mapping[Any, Any]) -> None:
    """Call ``reset()`` once on every distinct agent that has one."""
    values = agents.values() if isinstance(agents, Mapping) else agents
    for agent in {id(a): a for a in values}.values():
        reset = getattr(agent, "reset", None)
        if callable(reset):
            reset()


def play_turns(
    env: Any,
    agents: Sequence[Any] | Mapping[Any, Any],
    *,
    on_step: Callable[[Step], None] | None = None,
    on_illegal: Callable[[Step, ValueError], Any] | None = None,
    stop: Callable[[int], bool] | None = None,
) -> int:
    """From the environment's current state: observe, act, step until the episode ends (the
    selected agent is terminated or truncated) or ``stop(seat)`` is true for the seat to act.
    Returns the number of steps taken. Agents are not reset (see :func:`play_episode`)."""
    table = seat_table(env, agents)
    seat_of = {name: i for i, name in enumerate(env.possible_agents)}
    steps = 0
    while True:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            return steps
        seat = seat_of[name]
        if stop is not None and stop(seat):
            return steps
        observation = env.observe(name)
        info = env.infos[name]
        action = table[name].act(observation, info)
        try:
            env.step(action)
        except ValueError as exc:
            step = Step(seat, name, observation, info, action)
            if on_illegal is None:
                raise IllegalActionError(
                    f"{name} (seat {seat}, agent {_label(table[name])}) chose action {action!r}: {exc}", seat, action
                ) from exc
            action = on_illegal(step, exc)
            env.step(action)
        steps += 1
        if on_step is not None:
            on_step(Step(seat, name, observation, info, action))


def play_episode(
    env: Any,
    agents: Sequence[Any] | Mapping[Any, Any],
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    on_step: Callable[[Step], None] | None = None,
    on_illegal: Callable[[Step, ValueError], Any] | None = None,
) -> int:
    """Reset the environment (``seed``, ``options``) and the agents, then play the episode to its
    end (see :func:`play_turns`). Returns the number of steps."""
    table = seat_table(env, agents)
    env.reset(seed=seed, options=options)
    reset_agents(table)
    return play_turns(env, table, on_step=on_step, on_illegal=on_illegal)


def _label(agent: Any) -> str:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__
