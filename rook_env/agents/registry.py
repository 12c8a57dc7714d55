"""Building agents from specs: ``make_agent`` and the team specs of matches.

An *agent spec* is ``"random"``, ``"heuristic"``, ``"search"``, ``"ppo"`` (the shipped network), ``"ppo_v2"``,
``"ppo_v3"``, ``"ppo_v4"`` and ``"ppo_v5"`` (the partnership networks shipped until 0.6.0, in 0.7.0, in 0.8.0 and
from 0.9.0 to 0.12.0, :data:`EARLIER_NETWORKS`), a path to a checkpoint ending in ``.pt``, or ``"search:<spec>"`` (search plays the cards
on top of that agent, which bids, discards and names trump: ``"search:ppo"``), ``"search-auction"`` or
``"search-auction:<spec>"`` (search plays the cards and also bids, discards and names trump,
``SearchAgent(auction="search")``; ``<spec>`` only decides what the search leaves to it), ``"search-bids"`` or
``"search-bids:<spec>"`` (search plays the cards and bids, ``<spec>`` discards and names trump), each of these three
with ``SearchAgent`` arguments in brackets (``"search[samples=96,worlds=learned]:ppo"``, :data:`SEARCH_OPTIONS`) for
the partnership game; ``"random"``, ``"call_partner_heuristic"``, ``"ppo"`` (the shipped 5-player network) or a
train.py checkpoint given as ``"ppo:<path>"`` for call-your-partner Rook (``"ppo:<path>"`` works in both games).
``"ppo"`` is the game's shipped network for the table's size (:attr:`rook_env.games.GameSpec.networks`, files in
``rook_env/agents/checkpoints/``); a table size without one is refused, naming the sizes that have one. ``"best"``
is the strongest player the project ships for the table (:data:`BEST`, measured in docs/results.md): search on top
of the network shipped until 0.6.0 in the partnership game (worlds drawn from the learned model of the hidden cards,
played out on the batched engine where numba is installed, the network's auction made bolder); the shipped 5-player
network in call-your-partner Rook (it beats that game's heuristic); the game's heuristic wherever a table lacks the
network its best player needs. A checkpoint plays only the game (and call-your-partner table size) it was trained
for: loading it elsewhere raises ``CheckpointError`` saying which game it was trained for. The rule flags handed to
:func:`make_agent` pick the game with their ``game`` key (the game registry's games, :mod:`rook_env.games`; default
``"partnership"``, the four-player game of :mod:`rook_env`; ``"call_partner"``: :mod:`rook_env.call_partner`); each
game names its heuristic agent's spec there. The flags are validated against that game's rules
(:func:`game_config`), so ``make_agent("random", game="call_partner", players=5)`` accepts ``players`` and
``make_agent("random", players=5)`` refuses it.

A *member spec* is an agent spec or a callable ``factory(seed) -> agent`` (how a trainer or any
RL library hands over its own policy). A *team spec* is a member spec (both
partners), two agent specs joined by ``+`` (``"heuristic+random"``: the first plays the lower seat
of the pair, its partner the second), or a 2-tuple of member specs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rook_env.games import DEFAULT_GAME, game_names, get_game, resolve_game

from .base import Agent
from .heuristic.call_partner import CallPartnerHeuristic
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

__all__ = [
    "AGENT_SPECS", "BEST", "CHECKPOINT_DIR", "DEFAULT_GAME", "EARLIER_NETWORKS", "GAMES", "GAME_SPECS", "HEURISTICS",
    "ONE_GAME_SPECS",
    "SEARCH_OPTIONS", "TeamSpec", "build_agent", "check_team", "game_config", "game_specs", "make_agent",
    "parse_search", "parse_team", "shipped_network", "spec_game", "spec_label", "split_game",
]

GAMES = game_names()  # values of the ``game`` key of rule flags: the game registry's (rook_env.games)
# The games are the registry's, each with its heuristic agent's spec; an agent family that plays one
# game only says which here (a checkpoint path ending in .pt, "search:<spec>" and "rllib:<dir>" play
# the partnership game too; "random" and "ppo:<path>" play every game, "ppo" every game with a shipped network).
# earlier shipped networks that still ship, by spec (files in CHECKPOINT_DIR): "ppo_v2" is the partnership network
# shipped as "ppo" until 0.6.0, on which "best" searches (search over it measured stronger than over 0.7.0's and
# 0.8.0's); "ppo_v3" the one shipped as "ppo" in 0.7.0 (the base of 0.8.0's), "ppo_v4" in 0.8.0 (the base of 0.9.0's),
# "ppo_v5" from 0.9.0 to 0.12.0 (the base of 0.13.0's, and in its field of label opponents)
EARLIER_NETWORKS = {"ppo_v2": "ppo_v2.pt", "ppo_v3": "ppo_v3.pt", "ppo_v4": "ppo_v4.pt", "ppo_v5": "ppo_v5.pt"}
ONE_GAME_SPECS = {"search": "partnership", "search-auction": "partnership", "search-bids": "partnership",
                  "ppo_v2": "partnership", "ppo_v3": "partnership",
                  "ppo_v4": "partnership", "ppo_v5": "partnership"}
# search specs: SearchAgent's auction mode of each (search plays the cards; see make_agent)
SEARCH_AUCTION = {"search": "base", "search-auction": "search", "search-bids": "bids"}
# options a search spec may set in brackets ("search[samples=96,worlds=learned]:ppo"): SearchAgent's arguments,
# each a whole number, a number or a word (SearchAgent validates the values)
SEARCH_OPTIONS = {"samples": int, "worlds": str, "rollout": str, "engine": str, "auction_samples": int,
                  "boldness": float}
SEARCH_PREFIXES = tuple(head + sep for head in SEARCH_AUCTION for sep in ":[")  # "search:", "search[", ...
ONE_GAME_FORMS = {"partnership": "a checkpoint path ending in .pt, 'search:<spec>' (e.g. 'search:ppo'), "
                                 "'search-auction:<spec>', 'search-bids:<spec>', "
                                 "'search[samples=96,worlds=learned]:<spec>', 'rllib:<checkpoint dir>'"}
# "best" per game: the strongest player shipped (docs/agents.md gives its time per decision; docs/results.md how
# it was measured against the others); a game not listed, or a table without the shipped network it needs (a
# call-your-partner table of 4 or 6), gets its heuristic
# partnership: search with 96 worlds drawn from the learned model of the hidden cards, on the auction of the network
# shipped until 0.6.0 ("ppo_v2") made bolder (boldness 4: +2.3 [+0.4, +3.9] a deal over boldness 0 against the
# heuristic, held out; 192 worlds: +0.7 [-0.7, +1.9] over 96, held out, at 1.3x the time: not taken; on 0.7.0's
# network instead: -2.42 [-5.02, +0.12] against the heuristic on the same held-out deals, so not moved);
# call-your-partner: the shipped 5-player network (a residual policy fitted to counterfactual labels, which beats
# the heuristic on held-out deals; the heuristic at 4 or 6 players). docs/results.md has the matches.
BEST = {"partnership": "search[samples=96,worlds=learned,boldness=4]:ppo_v2", "call_partner": "ppo"}
# the shipped networks (rook_env.games.GameSpec.networks name the files; installed as package data)
CHECKPOINT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpoints")
HEURISTICS: dict[str, Callable[..., Agent]] = {"heuristic": HeuristicAgent,
                                               "call_partner_heuristic": CallPartnerHeuristic}


def _registry_specs(game: str) -> tuple[str, ...]:
    spec = get_game(game)
    heuristic = spec.heuristic
    return ("random", *((heuristic,) if heuristic else ()), *(s for s, sg in ONE_GAME_SPECS.items() if sg == game),
            *(("ppo",) if spec.networks else ()), *(("best",) if game in BEST or heuristic else ()))


# Agent specs per game, from the registry (the partnership game also takes a checkpoint path ending in .pt).
GAME_SPECS = {g: _registry_specs(g) for g in game_names()}
AGENT_SPECS = tuple(dict.fromkeys(s for specs in GAME_SPECS.values() for s in specs))  # besides .pt paths


def game_specs(game: str) -> tuple[str, ...]:
    """The agent specs of ``game`` (:data:`GAME_SPECS`; a game registered later: from the registry)."""
    return GAME_SPECS.get(game) or _registry_specs(game)


def _spec_help(game: str) -> str:
    """What agent specs ``game`` takes, for error messages."""
    specs = ", ".join(repr(s) for s in game_specs(game))
    forms = ONE_GAME_FORMS.get(game)
    return (f"the {game} game takes {specs}" + (f", {forms}" if forms else "")
            + f" or 'ppo:<path>' (a checkpoint trained with game: {game})")


def parse_search(spec: str) -> tuple[str, dict[str, Any], str] | None:
    """``(head, options, base spec)`` of a search spec (``"search[samples=96,worlds=learned]:ppo"`` gives
    ``("search", {"samples": 96, "worlds": "learned"}, "ppo")``), None for a spec that is not one. The options in
    brackets are :class:`~rook_env.agents.search.SearchAgent` arguments (:data:`SEARCH_OPTIONS`); ValueError names
    an unknown or malformed one."""
    head, colon, rest = spec.partition(":")
    name, bracket, inside = head.partition("[")
    if name not in SEARCH_AUCTION or (colon and not rest):
        return None
    options: dict[str, Any] = {}
    if bracket:
        if not inside.endswith("]") or inside == "]":
            raise ValueError(f"agent spec {spec!r}: search options are written {name}[key=value,...], "
                             f"keys {', '.join(SEARCH_OPTIONS)}")
        for item in inside[:-1].split(","):
            key, eq, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if key not in SEARCH_OPTIONS or not eq or not value:
                raise ValueError(f"agent spec {spec!r}: bad search option {item!r}; write key=value with a key "
                                 f"among {', '.join(SEARCH_OPTIONS)}")
            if key in options:
                raise ValueError(f"agent spec {spec!r}: search option {key!r} is given twice")
            if SEARCH_OPTIONS[key] is int:
                if not value.isdigit():
                    raise ValueError(f"agent spec {spec!r}: search option {key} must be a whole number, got {value!r}")
                options[key] = int(value)
            elif SEARCH_OPTIONS[key] is float:
                try:
                    options[key] = float(value)
                except ValueError:
                    raise ValueError(f"agent spec {spec!r}: search option {key} must be a number, got {value!r}") \
                        from None
            else:
                options[key] = value
    return name, options, rest


def spec_game(spec: str) -> str | None:
    """The game an agent spec plays, or None for a spec that plays every game (``random``, ``ppo:<path>``)."""
    for g in game_names():
        if get_game(g).heuristic == spec:
            return g
    if spec.endswith(".pt") or spec.startswith((*SEARCH_PREFIXES, "rllib:")):
        return "partnership"
    return ONE_GAME_SPECS.get(spec)


def _players(game: str, rules: Mapping[str, Any]) -> int:
    """The table's seat count (the game's default when ``players`` is not among the rule flags)."""
    return rules.get("players", get_game(game).default_players)


def shipped_network(game: str, rules: Mapping[str, Any]) -> str:
    """The path of ``game``'s shipped network for the table of ``rules`` (``make_agent("ppo")``); raises ValueError
    naming the table sizes that have one when this one has none."""
    spec = get_game(game)
    networks = spec.networks
    players = _players(game, rules)
    if players not in networks:
        has = (" and ".join(f"{p} players" for p in sorted(networks)) if networks else "no table size")
        raise ValueError(f"'ppo': {spec.title} ships a trained network for {has}, not for {players} players; "
                         f"train one (train.py with game: {game}, players: {players}) and play it as 'ppo:<path>', "
                         f"or use {spec.heuristic!r}")
    return os.path.join(CHECKPOINT_DIR, networks[players])


def _best(game: str, rules: Mapping[str, Any]) -> str | None:
    """The spec of ``"best"`` at this table (:data:`BEST`): the game's heuristic where the table lacks the shipped
    network its best player plays on."""
    best = BEST.get(game)
    uses_network = best is not None and best.split(":")[-1] in ("ppo", *EARLIER_NETWORKS)  # "ppo", "search:ppo"
    if best is None or (uses_network and _players(game, rules) not in get_game(game).networks):
        return get_game(game).heuristic
    return best


def split_game(flags: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """(game, the rule flags without ``game``); raises ValueError naming an unknown game."""
    rules = dict(flags or {})
    game = rules.pop("game", DEFAULT_GAME)
    get_game(game)  # raises ValueError naming the registry's games
    return game, rules


def game_config(flags: Mapping[str, Any] | None) -> Any:
    """The rules config of ``flags`` (``game`` picks the game in the registry,
    :func:`rook_env.games.resolve_game`); raises ValueError naming a bad flag."""
    game, rules = split_game(flags)
    return resolve_game(game, **rules)[1]


def make_agent(spec: str, seed: int | None = None, **flags: Any) -> Agent:
    """Build an agent from a spec string; ``flags`` are the environment's rule flags, ``game``
    included (validated for every agent against that game's rules, so a misspelt flag is an
    error, not ignored). A game's heuristic spec (``"call_partner_heuristic"``) implies its game."""
    if not isinstance(spec, str):
        game, _ = split_game(flags)
        raise TypeError(f"agent spec must be a string ({_spec_help(game)}), got {spec!r} ({type(spec).__name__})")
    plays = spec_game(spec)
    if spec in HEURISTICS and plays is not None and "game" not in flags:
        flags = {**flags, "game": plays}
    game, rules = split_game(flags)
    if spec == "best":
        best = _best(game, rules)
        if not best:
            raise ValueError(f"the {game} game has no 'best' player (no search and no heuristic); {_spec_help(game)}")
        return make_agent(best, seed=seed, **{**flags, "game": game})
    if spec == "random":
        game_config(flags)  # a random agent ignores the rules, but a bad flag is still the caller's error
        return RandomAgent(seed=seed)
    if spec.startswith("ppo:"):
        from .learned import PPOAgent  # needs torch (the [train] extra): imported only when asked for

        # the checkpoint's recorded game must be this table's (a CheckpointError says so otherwise)
        return PPOAgent.load(spec[len("ppo:"):], seed=seed, game=game, **rules)
    if plays is not None and plays != game:
        bare = f" (a bare checkpoint path; for a checkpoint of the {game} game write 'ppo:{spec}')" \
            if spec.endswith(".pt") else ""
        raise ValueError(f"agent spec {spec!r} plays the {plays} game ({get_game(plays).title}){bare}, not the "
                         f"{game} game; {_spec_help(game)}")
    if spec in HEURISTICS:
        return HEURISTICS[spec](seed=seed, **rules)
    search = parse_search(spec)
    if search is not None:
        from .search import SearchAgent

        # "search:<spec>": search plays the cards, the agent <spec> bids, discards and names trump;
        # "search-auction[:<spec>]": search also bids, discards and names trump (<spec>: what it leaves over);
        # "search-bids[:<spec>]": search also bids, <spec> discards and names trump
        head, options, rest = search
        base = make_agent(rest, seed=seed, **flags) if rest else None
        return SearchAgent(seed=seed, base=base, auction=SEARCH_AUCTION[head], **options, **rules)
    if spec == "ppo":
        from .learned import PPOAgent  # needs torch (the [train] extra): imported only when asked for

        game_config(flags)  # the table's flags first: a bad flag or table size is named as such
        return PPOAgent.load(shipped_network(game, rules), seed=seed, game=game, **rules)
    if spec in EARLIER_NETWORKS:
        from .learned import PPOAgent  # needs torch (the [train] extra): imported only when asked for

        return PPOAgent.load(os.path.join(CHECKPOINT_DIR, EARLIER_NETWORKS[spec]), seed=seed, game=game, **rules)
    if spec.endswith(".pt"):
        from .learned import PPOAgent  # needs torch (the [train] extra): imported only when asked for

        return PPOAgent.load(spec, seed=seed, **rules)
    if spec.startswith("rllib:"):
        from rook_env.rllib import RLlibAgent  # needs ray[rllib] (the [rllib] extra): imported only when asked for

        return RLlibAgent.load(spec[len("rllib:"):], seed=seed, **rules)
    raise ValueError(f"unknown agent spec {spec!r}; {_spec_help(game)}")


def spec_label(member: Any) -> str:
    """A display name for a member spec: the string itself, a callable's ``name`` attribute or
    ``__name__`` (``"callable"`` for a lambda)."""
    if isinstance(member, str):
        return member
    name = getattr(member, "name", None)
    if isinstance(name, str) and name:
        return name
    label = getattr(member, "__name__", None) or type(member).__name__
    return "callable" if label == "<lambda>" else label


@dataclass(frozen=True)
class TeamSpec:
    """Two member specs: the first plays the lower seat of the pair (seat 0 or 1), the second
    its partner (seat 2 or 3)."""

    members: tuple[Any, Any]
    name: str

    def __str__(self) -> str:
        return self.name


def parse_team(spec: Any, name: str | None = None) -> TeamSpec:
    """A team spec: ``"random"``, ``"heuristic+random"``, a callable ``factory(seed)``, a 2-tuple
    of member specs, or a :class:`TeamSpec` (returned as is, renamed if ``name`` is given)."""
    if isinstance(spec, TeamSpec):
        return spec if name is None else TeamSpec(spec.members, name)
    if isinstance(spec, str):
        parts = [p.strip() for p in spec.split("+")]
        if len(parts) > 2 or not all(parts):
            raise ValueError(
                f"bad team spec {spec!r}: use one agent spec (e.g. 'random') or two joined by '+' "
                f"(e.g. 'heuristic+random')"
            )
        members = (parts[0], parts[-1])
    elif isinstance(spec, (tuple, list)):
        if len(spec) != 2:
            raise ValueError(f"a team given as a sequence needs exactly 2 member specs, got {len(spec)}")
        members = (spec[0], spec[1])
    elif callable(spec):
        members = (spec, spec)
    else:
        raise ValueError(f"bad team spec {spec!r}: expected a string, a callable factory(seed) or a 2-tuple")
    for m in members:
        if not (isinstance(m, str) or callable(m)):
            raise ValueError(f"bad member spec {m!r}: expected a string or a callable factory(seed)")
    if name is None:
        a, b = (spec_label(m) for m in members)
        name = a if (a == b and members[0] == members[1]) else f"{a}+{b}"
    return TeamSpec(members, name)


def build_agent(member: str | Callable[[int | None], Agent], seed: int | None, flags: Mapping[str, Any]) -> Agent:
    """Build one agent from a member spec (a spec string via :func:`make_agent`, or a callable
    ``factory(seed)``); the result must have an ``act(observation, info)`` method."""
    agent = make_agent(member, seed=seed, **dict(flags)) if isinstance(member, str) else member(seed)
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"spec {spec_label(member)!r} built {agent!r}, which has no act(observation, info) method")
    return agent


def check_team(team: TeamSpec, flags: Mapping[str, Any]) -> None:
    """Build each member once so that a bad spec fails early, as a ValueError naming the spec."""
    members = team.members if team.members[0] != team.members[1] else team.members[:1]
    for m in members:
        try:
            build_agent(m, 0, flags)
        except ModuleNotFoundError as exc:
            raise ValueError(f"agent {spec_label(m)!r} is not available ({exc}); the PPO agent needs torch: "
                             f"pip install -e \".[train]\"") from exc
        except (FileNotFoundError, ValueError, TypeError) as exc:
            raise ValueError(f"agent {spec_label(m)!r}: {exc}") from exc
        except Exception as exc:  # e.g. a checkpoint that does not load
            raise ValueError(f"agent {spec_label(m)!r} could not be built: {type(exc).__name__}: {exc}") from exc
