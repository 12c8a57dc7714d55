"""Counterfactual labels: what each legal action of a decision is worth when the base policy plays on, for either
game.

One step of rollout policy improvement (Bertsekas and Tsitsiklis, "Neuro-Dynamic Programming", 1996; Tesauro and
Galperin 1996). Deals are played by the base policy at every seat, each seat acting on its own observation (the
*trunk*); a ``label_prob`` share of the decisions that have a choice (or per phase, ``phase_label_prob``) is
labelled. For a labelled decision every other legal action is a *branch*: the same deal at the same point, that
action played instead, and the hand played out by the base policy; the acting seat's result is that action's value
``q[a]``. The base policy is deterministic, so its own action (the *hint*) needs no branch: its value is the trunk's
result. ``q[a] - q[hint]`` is what playing ``a`` instead would have changed *on this deal*; averaged over the deals
consistent with what the seat saw it is the base policy's advantage ``A(obs, a)``, which
:mod:`rook_env.training.labels.fit` regresses from the observation alone. Play-outs read the true deal; the network
fitted to the labels never does.

How the play-outs run is the game's (:data:`PLAY_OUTS`, by game name):

- **partnership** (:class:`NetworkPlayOut`): the base policy is a *network* (its greedy action), the work done by
  the batched engine (:class:`rook_env.vector.RookVectorEnv`). A shard's deals are the engine's deals of its seed,
  one table each; every branch is a table dealt the same cards that replays the trunk's actions up to the decision,
  plays the action instead and lets the network play on, ``tables`` branches at a time in lock step. With an
  ``opponent`` (an agent that decides in batches: the heuristic, a past network, a best response) the network plays
  one team of each deal (seats 0 and 2 at even tables, 1 and 3 at odd ones) and the opponent the other, in the trunk
  and the branches; only the network's decisions are labelled. A seat's value is its team's hand score minus the
  other team's. Deals where a seat threw its hand in (the redeal, which deals anew from the engine's stream) are
  not labelled.
- **call_partner** (:class:`HeuristicPlayOut`): the base policy is the game's heuristic, the hands dealt from
  seeds ``seed``, ``seed + 1``, ... on the rules state; a branch is the true state at the decision, cloned, the
  action applied and the hand played out by the heuristic; a seat's value is its reward (its ``score_diff``).

Records (one per labelled decision): ``obs`` (float32), ``mask``, ``hint`` (the base policy's action), ``q`` (the
seat's value per legal action, NaN elsewhere), ``outcome`` (``q[hint]``), ``phase`` (the game's ``PHASE_NAMES``
index), ``prob`` (the decision's chance of a label: the fit's per-hand weights), ``seat`` and ``hand`` (the deal's
id: partnership, the shard's seed times 2^16 plus the table; call_partner, the deal's seed). :func:`write_labels`
writes them in shards ``<out>/shard_<seed>_<k>.npz``, by processes on this machine or label workers on a Ray
cluster; a rerun with the same arguments skips the shards written.

    rook-train labels --network rook_env/agents/checkpoints/ppo_default.pt --out runs/net_labels --hands 20000
    rook-train labels --game call_partner --players 5 --out runs/cp_labels --hands 20000 --processes 2
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rook_env.agents import make_agent
from rook_env.agents.call_partner_search.agent import CallPartnerSearch
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic
from rook_env.agents.learned.playout import branch_values, card_memory, network_turns, opponent_turns, team_value
from rook_env.agents.learned.model import model_from_checkpoint
from rook_env.core.observation import unpack_mask
from rook_env.games.call_partner.config import make_config
from rook_env.games.call_partner.env import hand_rewards
from rook_env.games.call_partner.observation import encode, obs_layout
from rook_env.games.call_partner.rules import PHASE_NAMES as CALL_PARTNER_PHASES
from rook_env.games.call_partner.rules import CallPartnerState
from rook_env.games.partnership.rules import PHASE_NAMES as PARTNERSHIP_PHASES
from rook_env.games.partnership.rules import RookState
from rook_env.vector import RookVectorEnv

from .config import phase_probs
from .ray_workers import label_on_ray
from .shards import ShardDone, run_label_jobs, shard_plan, write_shard

__all__ = ["PLAY_OUTS", "HeuristicPlayOut", "Labeler", "NetworkPlayOut", "Trunk", "label_deals", "opponent_agent",
           "write_labels"]


@dataclass
class Trunk:
    """The labelled decisions of the trunk: their records (``obs``, ``mask``, ``hint``, ``phase``, ``seat``,
    ``hand``), each one's value of the trunk's own action (``outcome``, float32) and where the play-out branches
    from (``starts``: the play-out's own, one per decision)."""

    obs: np.ndarray
    mask: np.ndarray
    hint: np.ndarray
    phase: np.ndarray
    seat: np.ndarray
    hand: np.ndarray
    outcome: np.ndarray
    starts: Any


# ================================================================================================ partnership
def _deal_options(env: Any) -> list[dict]:
    """Every table's deal as ``reset`` options: the hands, the nest and the dealer."""
    n = env.layout.n_cards
    bits = lambda x: np.flatnonzero((int(x) >> np.arange(n)) & 1).tolist()
    return [{"hands": [bits(h) for h in env.hands[t]], "nest": bits(env.nest[t]), "dealer": int(env.dealer[t])}
            for t in range(env.num_envs)]


def _deal_states(env: Any) -> list[RookState]:
    """Every table's deal as a rules state before its first action (what ``reset`` with :func:`_deal_options`
    deals): a branch table loads its deal's state, checked and encoded once per deal, not once per branch."""
    states = []
    for opt in _deal_options(env):
        st = RookState(env.config)
        st.new_game(dealer=opt["dealer"], hands=opt["hands"], nest=opt["nest"])
        states.append(st)
    return states


class NetworkPlayOut:
    """The partnership game's play-outs: ``network`` (an actor-critic) plays on, on the batched engine, against
    itself or against ``opponent`` (module docstring); ``tables`` branches at a time."""

    game = "partnership"
    default_seed, default_shard_hands = 95_000_000, 256

    def __init__(self, network: Any, opponent: Any, tables: int, flags: dict[str, Any]) -> None:
        if network is None:
            raise ValueError("the partnership game's labels are a network's: give the network that plays on")
        if flags.get("episode", "hand") != "hand":
            raise ValueError(f"labels are per hand: episode must be 'hand', got {flags['episode']!r}")
        if flags.get("all_pass", "dealer_forced") != "dealer_forced":
            raise ValueError("labels replay deals: all_pass must be 'dealer_forced' (a redeal after four passes "
                             f"would deal the branches other cards), got {flags['all_pass']!r}")
        self.model, self.opponent, self.tables, self.flags = network, opponent, tables, flags

    @staticmethod
    def phases() -> tuple[str, ...]:
        """The game's phase names (a record's ``phase`` indexes them)."""
        return PARTNERSHIP_PHASES

    @staticmethod
    def plan(out: str, hands: int, seed: int, shard_hands: int) -> list[tuple[str, int, int]]:
        """The shards: (path, seed, deals); one engine seed per shard, the shard's deals that seed's tables."""
        return [(os.path.join(out, f"shard_{seed + k}_{k:05d}.npz"), seed + k, min(shard_hands, hands - lo))
                for k, lo in enumerate(range(0, hands, shard_hands))]

    def _play(self, env: Any, probs: np.ndarray, rng: np.random.Generator) -> tuple[dict, list, np.ndarray]:
        """Play the trunk's tables to the end of their hands; the picked decisions (lists of arrays by field; with
        the heuristic as the opponent, its card memory at each, ``memory``), every table's action per step and
        every table's hand scores."""
        deals = env.num_envs
        learner = np.arange(deals) & 1  # the network's team per table (with an opponent)
        kept = None if self.opponent is None else card_memory(self.opponent)
        done = np.zeros(deals, bool)
        result = np.zeros((deals, 2), np.int64)
        actions: list[np.ndarray] = []
        rec: dict[str, list] = {k: [] for k in ("obs", "mask", "hint", "phase", "seat", "table", "step", "memory")}
        acts = np.zeros(deals, np.int64)
        obs, mask, now = env.observation, env.action_mask, env.current_player
        while not done.all():
            live = np.flatnonzero(~done)
            if self.opponent is not None:
                theirs = (now[live] & 1) != learner[live]
                if theirs.any():
                    acts[live[theirs]] = opponent_turns(self.opponent, obs, mask, now, live[theirs])
                live = live[~theirs]  # the network's turns
            network_turns(self.model, obs, live, mask, acts)
            fin = np.flatnonzero(done)
            acts[fin] = mask[fin].argmax(1)
            pick = live[(mask[live].sum(1) > 1) & (rng.random(len(live)) < probs[env.phase[live]])]
            if len(pick):
                for key, value in (("obs", obs[pick]), ("mask", mask[pick].astype(bool)),
                                   ("hint", acts[pick]), ("phase", env.phase[pick]),
                                   ("seat", now[pick]), ("table", pick),
                                   ("step", np.full(len(pick), len(actions)))):
                    rec[key].append(value)
                if kept is not None:  # the opponent's memory at the decision: what its branches start from
                    rec["memory"] += [{s: kept[k] for s in range(4) if (k := t * 4 + s) in kept} for t in pick.tolist()]
            actions.append(acts.copy())
            obs, _, term, trunc, info = env.step(acts)
            mask, now = info["action_mask"], info["seat"]
            ended = np.flatnonzero((term | trunc) & ~done)
            result[ended] = info["hand"]["hand_scores"][ended]
            done[ended] = True
        return rec, actions, result

    def trunk(self, deals: int, seed: int, probs: np.ndarray) -> Trunk:
        """Play ``deals`` deals (the engine's deals of ``seed``) and pick the decisions to label."""
        rng = np.random.default_rng(seed)  # which decisions are labelled: a function of the shard's seed
        env = RookVectorEnv(deals, backend="numba", **self.flags)
        env.reset(seed=seed)
        self.deals = _deal_states(env)
        if self.opponent is not None:
            self.opponent.reset()
        rec, actions, result = self._play(env, probs, rng)
        self.prefix = np.stack(actions, 1)  # (deals, steps): every table's actions, step by step
        redealt = (self.prefix == env.layout.REDEAL).any(1)  # dealt anew from the engine's stream: not replayable
        memory = rec.pop("memory")
        obs = np.concatenate(rec["obs"]) if rec["obs"] else np.zeros((0, env.obs_dim), np.float32)
        cat = {k: (np.concatenate(v) if v else np.zeros(0, np.int64)) for k, v in rec.items() if k != "obs"}
        keep = ~redealt[cat["table"]]
        obs, cat = obs[keep], {k: v[keep] for k, v in cat.items()}
        memory = [m for m, kept in zip(memory, keep.tolist()) if kept] if memory else None
        mask = cat["mask"].reshape(len(cat["hint"]), env.n_actions).astype(bool)
        return Trunk(obs, mask, cat["hint"], cat["phase"], cat["seat"], seed * 2**16 + cat["table"],
                     team_value(result[cat["table"]], cat["seat"]), (cat["table"], cat["step"], memory))

    def branch_values(self, trunk: Trunk, dec: np.ndarray, alt: np.ndarray, seed: int) -> np.ndarray:
        """The value of playing ``alt[i]`` at decision ``dec[i]`` of the trunk."""
        table, step, memory = trunk.starts
        tab = table[dec]
        return branch_values(self.model, self.flags, [self.deals[t] for t in tab], self.prefix[tab], step[dec],
                             alt, trunk.seat[dec], self.tables, self.opponent, seed,
                             None if memory is None else [memory[d] for d in dec.tolist()])


# =============================================================================================== call_partner
class HeuristicPlayOut:
    """Call-your-partner Rook's play-outs: the game's heuristic (stateless and deterministic: one instance plays
    every seat) plays on from a clone of the true state (module docstring)."""

    game = "call_partner"
    default_seed, default_shard_hands = 90_000_000, 100

    def __init__(self, network: Any, opponent: Any, tables: int, flags: dict[str, Any]) -> None:
        if network is not None or opponent is not None:
            raise ValueError("call-your-partner labels are the heuristic's, at every seat: no network, no opponent")
        self.config = make_config(**flags)
        if self.config.episode != "hand":
            raise ValueError(f"rollout labels are per hand: episode must be 'hand', got {self.config.episode!r}")
        self.ol = obs_layout(self.config)
        self.heuristic = CallPartnerHeuristic(**flags)
        self.card_play = CallPartnerSearch(seed=0, worlds=1, **flags)  # its rollout rule: the heuristic's cards
        self.n_actions = self.heuristic.L.n_actions

    @staticmethod
    def phases() -> tuple[str, ...]:
        """The game's phase names (a record's ``phase`` indexes them)."""
        return CALL_PARTNER_PHASES

    @staticmethod
    def plan(out: str, hands: int, seed: int, shard_hands: int) -> list[tuple[str, int, int]]:
        """The shards: (path, first deal seed, hands); one seed per hand (:func:`.shards.shard_plan`)."""
        return shard_plan(out, hands, seed, shard_hands)

    def _heuristic_action(self, state: Any) -> tuple[np.ndarray, np.ndarray, int, int]:
        """The acting seat's observation and mask (what the env would give it), the legal actions as a bitmask and
        the heuristic's action (the only legal one where there is one)."""
        legal = state.legal_mask()
        obs = {"observation": encode(state, state.current, ol=self.ol), "action_mask": unpack_mask(legal, self.n_actions)}
        action = legal.bit_length() - 1 if legal & (legal - 1) == 0 else int(self.heuristic.act(obs))
        return obs["observation"], obs["action_mask"], legal, action

    def _play_out(self, state: Any) -> list[float]:
        """Every seat's reward once the heuristic has played ``state`` to the end of its hand (``state`` changes):
        the auction and the contract by the heuristic on each seat's observation, card play by its rule on card
        bitmasks (:meth:`CallPartnerSearch.play_out`: the same cards, tested, 20 times faster)."""
        while not state.is_over and state.phase != state.PLAY:
            _, _, legal, action = self._heuristic_action(state)
            state.apply(action, legal)
        if not state.is_over:
            return self.card_play.play_out(state)
        return hand_rewards(self.config, state.hand_result["hand_scores"], -1)

    def trunk(self, deals: int, seed: int, probs: np.ndarray) -> Trunk:
        """Play ``deals`` hands (deal seeds ``seed``, ``seed + 1``, ...) and pick the decisions to label; each one's
        start is a clone of the state before its action."""
        rng = np.random.default_rng(seed)  # which decisions are labelled: a function of the shard's first seed
        rec: dict[str, list] = {k: [] for k in ("obs", "mask", "hint", "phase", "seat", "hand", "outcome")}
        starts: list[tuple[Any, int]] = []
        for h in range(deals):
            state = CallPartnerState(self.config, seed=seed + h)
            state.new_game()
            first = len(rec["obs"])
            while not state.is_over:
                obs, mask, legal, hint = self._heuristic_action(state)
                if legal & (legal - 1) and rng.random() < probs[state.phase]:
                    for key, value in (("obs", obs), ("mask", mask.astype(bool)), ("hint", hint),
                                       ("phase", state.phase), ("seat", state.current), ("hand", seed + h)):
                        rec[key].append(value)
                    starts.append((state.clone(), legal))
                state.apply(hint, legal)
            rewards = self._play_out(state)  # over already: the hand's rewards
            rec["outcome"] += [rewards[s] for s in rec["seat"][first:]]
        return Trunk(np.asarray(rec["obs"], np.float32).reshape(-1, self.ol.size),
                     np.asarray(rec["mask"], bool).reshape(-1, self.n_actions), np.asarray(rec["hint"], np.int64),
                     np.asarray(rec["phase"], np.int64), np.asarray(rec["seat"], np.int64),
                     np.asarray(rec["hand"], np.int64), np.asarray(rec["outcome"], np.float32), starts)

    def branch_values(self, trunk: Trunk, dec: np.ndarray, alt: np.ndarray, seed: int) -> np.ndarray:
        """The value of playing ``alt[i]`` at decision ``dec[i]``: its start cloned, the action applied, the hand
        played out; the seat's reward."""
        values = np.zeros(len(dec), np.float32)
        for i, (d, a) in enumerate(zip(dec.tolist(), alt.tolist())):
            state, legal = trunk.starts[d]
            branch = state.clone()
            branch.apply(a, legal)
            values[i] = self._play_out(branch)[trunk.seat[d]]
        return values


PLAY_OUTS: dict[str, type] = {p.game: p for p in (NetworkPlayOut, HeuristicPlayOut)}


def play_out_of(game: str) -> type:
    """The play-outs of ``game`` (:data:`PLAY_OUTS`); a ValueError names the games that have labels."""
    try:
        return PLAY_OUTS[game]
    except KeyError:
        raise ValueError(f"no counterfactual labels for game {game!r}; they exist for {', '.join(PLAY_OUTS)}") from None


# ===================================================================================================== labels
def label_deals(game: str, deals: int, seed: int, label_prob: float = 0.25, *, network: Any = None,
                opponent: Any = None, tables: int = 2048, phase_label_prob: dict[str, float] | None = None,
                verify: bool = False, **flags: Any) -> dict[str, np.ndarray]:
    """Play ``deals`` deals of ``game`` from ``seed`` by the base policy at every seat (``network``: the
    partnership game's network; call_partner: the heuristic) and label a ``label_prob`` share of the decisions with
    a choice (``phase_label_prob``: other shares for the phases it names: a branch of a bid or a discard plays the
    whole hand out, a card's the rest of it); the records as arrays (module docstring). ``opponent`` (partnership,
    an agent with ``act_batch``): the other team's player. ``verify``: branch the base policy's own actions too and
    raise if a branch does not reproduce the trunk's result (the branches' self-check; a branch more per decision).
    ``flags``: the game's rule flags."""
    play = play_out_of(game)(network, opponent, tables, flags)
    probs = np.array(phase_probs(label_prob, phase_label_prob, names=play.phases()))
    trunk = play.trunk(deals, seed, probs)
    dec, alt = np.nonzero(trunk.mask)  # the branches: every legal action but the base policy's own
    if not verify:
        keep = alt != trunk.hint[dec]
        dec, alt = dec[keep], alt[keep]
    q = np.full(trunk.mask.shape, np.nan, np.float32)
    q[dec, alt] = play.branch_values(trunk, dec, alt, seed)
    rows = np.arange(len(trunk.mask))
    if verify and not np.array_equal(q[rows, trunk.hint], trunk.outcome):
        bad = np.flatnonzero(q[rows, trunk.hint] != trunk.outcome)
        raise RuntimeError(f"{len(bad)} of {len(rows)} branches of the base policy's own action did not reproduce "
                           f"the trunk's result (decisions {bad[:10].tolist()})")
    q[rows, trunk.hint] = trunk.outcome
    return {"obs": trunk.obs.astype(np.float32), "mask": trunk.mask, "hint": trunk.hint.astype(np.int16), "q": q,
            "outcome": q[rows, trunk.hint].copy(), "phase": trunk.phase.astype(np.int8),
            "prob": probs[trunk.phase].astype(np.float32), "seat": trunk.seat.astype(np.int8),
            "hand": trunk.hand.astype(np.int64)}


OPPONENT_SEED = 0  # the seed of every label opponent (a seeded agent: random, search, pimc)


def opponent_agent(spec: str, flags: dict[str, Any]) -> Any:
    """The other team's agent of a label set: None for "self" (the network at every seat), else
    ``make_agent(spec, seed=OPPONENT_SEED)``: the heuristic, a past network or a best response
    (``ppo:<checkpoint>``), a search player (``search...``, ``pimc``), which must decide in batches (``act_batch``);
    a ValueError names a spec that is neither. Seeded, so that a seeded agent's labels are a function of the seed."""
    if spec == "self":
        return None
    try:
        agent = make_agent(spec, seed=OPPONENT_SEED, **flags)
    except Exception as exc:  # noqa: BLE001 - an unknown name, a missing or corrupt checkpoint: all name the spec
        raise ValueError(f"opponent {spec!r}: {exc}") from None
    if not hasattr(agent, "act_batch"):
        raise ValueError(f"opponent {spec!r} ({type(agent).__name__}) does not decide in batches (act_batch): the "
                         "labels' tables need an agent that does (heuristic, random, ppo:<checkpoint>)")
    return agent


class Labeler:
    """:func:`label_deals` as a label process or a Ray label worker calls a labelling function (``(hands, seed,
    base, samples, **flags)``; ``base`` and ``samples``, search's, are not used). It carries the network's
    checkpoint *bytes* (partnership), so that workers on other machines need no copy of the file, and builds the
    network and the opponent (an agent spec, "self": none) where it runs."""

    def __init__(self, game: str, network: str | None = None, label_prob: float = 0.25, tables: int = 2048,
                 opponent: str = "self", phase_label_prob: dict[str, float] | None = None) -> None:
        self.checkpoint = None
        if network:
            with open(network, "rb") as fh:
                self.checkpoint = fh.read()
        self.game, self.network, self.label_prob, self.tables = game, network, label_prob, tables
        self.opponent, self.phase_label_prob = opponent, dict(phase_label_prob or {})
        self._model = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_model": None}  # the bytes travel, not the network built from them

    def model(self) -> Any:
        """The network (None: the game's heuristic plays on), built from the bytes once."""
        if self._model is None and self.checkpoint is not None:
            ckpt = torch.load(io.BytesIO(self.checkpoint), map_location="cpu", weights_only=True)
            self._model = model_from_checkpoint(ckpt, self.network).eval()
        return self._model

    def __call__(self, hands: int, seed: int, base: Any = None, samples: Any = None, **flags: Any) -> dict:
        return label_deals(self.game, hands, seed, self.label_prob, network=self.model(),
                           opponent=opponent_agent(self.opponent, flags), tables=self.tables,
                           phase_label_prob=self.phase_label_prob, **flags)


def _label_shard(job: tuple[Labeler, str, int, int, dict]) -> tuple[str, int, float]:
    labeler, path, first, n, flags = job
    torch.set_num_threads(1)  # one core per process: the processes are the parallelism
    t0 = time.perf_counter()
    rec = labeler(n, first, **flags)
    write_shard(path, rec)
    return path, len(rec["obs"]), time.perf_counter() - t0


def write_labels(game: str, out: str, hands: int, seed: int | None = None, *, network: str | None = None,
                 shard_hands: int | None = None, label_prob: float = 0.25, tables: int = 2048,
                 opponent: str = "self", processes: int = 1, flags: dict[str, Any] | None = None, workers: int = 0,
                 ray_address: str = "", log: Callable[[str], None] | None = None,
                 phase_label_prob: dict[str, float] | None = None, on_shard: ShardDone | None = None) -> int:
    """Label ``hands`` deals of ``game`` in shards of ``shard_hands`` deals written to ``out`` (the play-outs'
    ``plan``; None: the game's default seed and shard size), ``network`` (a checkpoint, partnership) playing on
    against ``opponent`` ("self", or the other team's agent spec, :func:`opponent_agent`), by ``processes``
    processes on this machine, or, with ``workers`` > 0, by that many label-worker actors on the Ray cluster at
    ``ray_address`` ("auto", HOST:PORT; "": a private local Ray), the same shards (docs/cluster.md). Shards already
    written are skipped (a rerun resumes); each shard written is a ``log`` line and an ``on_shard`` call. Returns the labelled decisions
    written by this call."""
    play = play_out_of(game)
    seed = play.default_seed if seed is None else seed
    plan = play.plan(out, hands, seed, shard_hands or play.default_shard_hands)
    flags = dict(flags or {})
    labeler = Labeler(game, network, label_prob, tables, opponent, phase_label_prob)
    # a bad flag, share or opponent fails here, before any process or actor starts
    play(labeler.model(), opponent_agent(opponent, flags), tables, flags)
    phase_probs(label_prob, phase_label_prob, names=play.phases())
    os.makedirs(out, exist_ok=True)
    if workers > 0:
        ledger = label_on_ray(labeler, out, hands, seed, network, 0, shard_hands, workers, ray_address, flags,
                              log=log, plan=plan, on_shard=on_shard)
        return ledger["decisions"]
    jobs = [(labeler, path, first, n, flags) for path, first, n in plan if not os.path.exists(path)]
    return run_label_jobs(_label_shard, jobs, processes, log, on_shard) if jobs else 0
