"""A determinised-search Rook player that acts only on its own observation.

``SearchAgent(seed=None, samples=24, rollout="greedy", **flags)`` (``flags``: the environment's
rule flags). Each card-play decision:

1. reads the seat's observation (the heuristic's fast reader) and its own memory of the hand
   (the heuristic's memory: who failed to follow suit, hence voids);
2. samples ``samples`` *worlds*: deals of the unseen cards drawn uniformly among those
   consistent with what the seat knows (hand sizes, voids, cards played, the nest and discards
   for the bidder, the announced nest counters; :mod:`.worlds`); with ``worlds="learned"`` (or a
   path to a holder model ``.npz``) they are drawn, within the same constraints, in proportion to a
   learned model of where each unseen card lies (:mod:`.inference`);
3. for every legal card, plays the hand out in every world with the rollout policy
   (:mod:`.rollout`) and scores the hand as the environment does: the hand score of the
   seat's team minus the other team's (contract made or set, bonuses, nest included);
4. plays the card with the best mean (ties: the cheaper card, by points then rank). Every
   card is scored on the same worlds (common random numbers).

Bidding, discarding and naming trump are the heuristic's (:mod:`.heuristic`), or those of any
``base`` agent given (``SearchAgent(base=PPOAgent.load())``, spec ``"search:ppo"``: search at play
time on top of a trained network, which bids, discards and names trump). With ``auction="search"`` (spec
``"search-auction"``) bids, discards and trump are searched too (:mod:`.auction`: every legal action played out
on sampled deals; ``base`` then decides only what that search leaves over); ``auction="bids"`` (spec
``"search-bids"``) searches the bids only, ``base`` discards and names trump; ``auction="values"`` (spec
``"search-values:<network>"``) values the network's ``values_top`` likeliest bids, discards and trumps by the network
playing each out on ``auction_samples`` sampled deals (:mod:`.values`). ``boldness=b`` (a ``base`` with
``action_probs``, a network) takes ``b`` off the base's pass in log-probability when it bids: search plays the
cards better than the base its bids were learned for (``make_agent("best")`` uses 4). One legal card is
played without search. If something goes wrong (an observation it cannot read, no consistent
deal) it plays the heuristic's card and counts a ``fallback``.

Information and determinism: the agent reads nothing but the observations it is given and its
own memory of them. The sampler's random stream of a decision is seeded from ``seed`` and the
observation itself, so a choice is a function of (seed, observation, memory): the same for any
order of calls, and unchanged when only cards the seat cannot see are changed. ``seed=None``
draws a seed at construction.

``rollout``: ``"greedy"`` (fast bitmask rules), ``"heuristic"`` (the heuristic agent on each
seat's observation of the world; about 10x slower), or a callable ``policy(state, legal) -> card``
acting on a :class:`rook_env.games.partnership.rules.RookState` (seat to act ``state.current``).
Memory is filed under the seat's hand after its play, as the heuristic's, so one instance may
serve several seats and ``reset()`` is optional.

``act_batch(observations, masks, keys=None, return_values=False)`` decides many seats at once, each row
exactly as ``act`` (memory filed under ``keys[i]``, as the heuristic's ``act_batch``); on the batched engine
the searches of all its card-play rows share one load, play-out and scoring of their tables. With
``return_values`` it also returns each row's values per card tried (NaN elsewhere).
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping

import numpy as np

from rook_env.core.optional import load
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.rules import BID, PLAY, RookState

from ..base import check_batch
from ..heuristic.agent import MEMORY_LIMIT, HeuristicAgent
from ..heuristic.play import Memory, known_voids
from ..heuristic.tables import card_tables, seat_reader
from .rollout import GreedyRollout, HeuristicRollout, hand_score_diff, play_out
from .batched import BatchedRollouts, holder_arrays, sample_many, supported, world_cards
from .auction import AUCTION_MODES, AUCTION_SAMPLES, AuctionSearch
from .inference import HolderModel, learned_sampler, load_model
from .worlds import WorldSampler, fork, holders_for, make_world, world_template

__all__ = ["ENGINES", "ROLLOUTS", "SearchAgent"]

ROLLOUTS = ("greedy", "heuristic")
ENGINES = ("auto", "batched", "python")  # where the rollouts run (see the module docstring)
WORLDS = ("uniform", "learned")
MAX_SAMPLES = 10_000


class SearchAgent:
    """Determinised search for card play; the heuristic's (or ``base``'s) bidding, discards and trump
    (see the module docstring)."""

    strict = False  # tests set this to re-raise internal errors instead of falling back
    exact_worlds = False  # tests set this: the batched engine then draws the Python engine's worlds

    def __init__(self, seed: int | None = None, samples: int = 24,
                 rollout: str | Callable[[RookState, int], int] = "greedy", base: Any = None,
                 engine: str = "auto", worlds: str = "uniform", auction: str = "base",
                 auction_samples: int = AUCTION_SAMPLES, boldness: float = 0.0, values_top: int | None = None,
                 **flags: Any) -> None:
        self.config = make_config(**flags)
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        fast = rollout == "greedy" and supported(self.config)
        if engine == "batched" and not fast:
            raise ValueError("engine='batched' needs rollout='greedy', numba and trump_calls='colour' "
                             f"(got rollout={rollout!r}, trump_calls={self.config.trump_calls!r}); use engine='python'")
        self.engine = "batched" if fast and engine != "python" else "python"
        self._batched: BatchedRollouts | None = None  # made on the first searched decision
        if base is not None and not callable(getattr(base, "act", None)):
            raise ValueError(f"base must be an agent with an act(observation, info) method or None, got {base!r}")
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"samples must be an integer in 1..{MAX_SAMPLES}, got {samples!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"seed must be an integer or None, got {seed!r}")
        self.samples = int(samples)
        if isinstance(auction_samples, bool) or not isinstance(auction_samples, (int, np.integer)) \
                or not 1 <= auction_samples <= MAX_SAMPLES:
            raise ValueError(f"auction_samples must be an integer in 1..{MAX_SAMPLES}, got {auction_samples!r}")
        self.tables = card_tables(self.config)
        self.layout = self.tables.layout
        self.reader = seat_reader(self.config)
        self.heuristic = HeuristicAgent(seed=seed, **flags)  # card-play fallback, and the default base
        self.base = self.heuristic if base is None else base  # bids, discards, names trump
        if isinstance(boldness, bool) or not isinstance(boldness, (int, float)) or not 0 <= boldness < float("inf"):
            raise ValueError(f"boldness must be a finite number >= 0, got {boldness!r}")
        if boldness and not callable(getattr(base, "action_probs", None)):
            raise ValueError("boldness needs a base that gives its action probabilities (action_probs: a network, "
                             f"e.g. 'search[boldness=4]:ppo'), got {'no base' if base is None else type(base).__name__}")
        self.boldness = float(boldness)
        if isinstance(rollout, str):
            if rollout == "greedy":
                self._rollout = GreedyRollout(self.tables).play_out
            elif rollout == "heuristic":
                self._rollout = HeuristicRollout(HeuristicAgent(**flags)).play_out
            else:
                raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)} or a callable "
                                 f"policy(state, legal) -> card, got {rollout!r}")
        elif callable(rollout):
            self._rollout = lambda state: play_out(state, rollout)
        else:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)} or a callable "
                             f"policy(state, legal) -> card, got {rollout!r}")
        self.rollout = rollout
        self.worlds = worlds
        self._world_model = _world_model(worlds, self.reader.size)
        self.seed = int(seed) if seed is not None else random.SystemRandom().getrandbits(63)
        self._fallbacks = 0
        self._memory: dict[int, Memory] = {}  # act(): by hand after the play
        self._keyed_memory: dict[int, Memory] = {}  # act_batch(keys=...): by key
        self.auction = auction
        self.auction_samples = int(auction_samples)
        self.values_top = values_top
        self._auction = self._auction_search(auction, self.auction_samples)
        self.last_values: dict[int, float] | None = None  # the last searched decision: card -> mean score diff

    @property
    def fallbacks(self) -> int:
        """Decisions where the search found no move (and the heuristic's card was played), plus the
        heuristic's and the base's own fallbacks."""
        base = 0 if self.base is self.heuristic else getattr(self.base, "fallbacks", 0)
        return self._fallbacks + self.heuristic.fallbacks + base

    def reset(self) -> None:
        """Forget the memories (optional: a memory that does not match the hand is ignored anyway)."""
        self._memory.clear()
        self._keyed_memory.clear()
        self.heuristic.reset()
        if self.base is not self.heuristic and callable(getattr(self.base, "reset", None)):
            self.base.reset()

    # ------------------------------------------------------------------ decisions
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        self.last_values = None
        mask = np.asarray(observation["action_mask"])
        legal = int.from_bytes(np.packbits(mask != 0, bitorder="little").tobytes(), "little")
        if not legal:
            raise ValueError("the action mask is empty: this seat has no legal action (not its turn, or the hand is over)")
        vec = np.asarray(observation["observation"])
        try:
            packed = int.from_bytes(np.packbits(vec > 0.5, bitorder="little").tobytes(), "little")
            view = self.reader.read(vec, packed)
        except Exception:
            if self.strict:
                raise
            view = None
        if view is None or view.phase != PLAY:
            if self._auction is not None and view is not None:
                action = self._search_auction(view, vec, packed, legal)
                if action >= 0:
                    return action
            return self._base_act(observation, info, mask)
        cards = legal & self.layout.card_mask
        if not cards:
            return self.base.act(observation, info)
        play = self._play_decision(view, vec, packed, cards, self._memory.pop(view.hand, None))
        self._search_all([play])
        card = self._conclude(play, observation, None)
        self.last_values = play.values
        return card

    def _base_act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None,
                  mask: np.ndarray) -> int:
        """The base's bid, discard or trump. With ``boldness`` a bid takes the base's most probable action once
        its pass has lost ``boldness`` in log-probability: search plays the cards better than the base (whose
        bids were learned for its own card play), so it can afford to bid more."""
        pass_id = self.layout.PASS
        if self.boldness and mask[pass_id] and np.count_nonzero(mask) > 1:
            probs = np.asarray(self.base.action_probs(observation), np.float64)
            with np.errstate(divide="ignore"):
                score = np.where(mask != 0, np.log(probs), -np.inf)
            score[pass_id] -= self.boldness
            return int(np.argmax(score))
        return self.base.act(observation, info)

    # ------------------------------------------------------------------ many decisions
    def act_batch(self, observations: np.ndarray, masks: np.ndarray, keys: np.ndarray | None = None,
                  return_values: bool = False, played: np.ndarray | None = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Actions (N,) int64 for N seats' observations (N, obs_dim) and action masks (N, A), each what
        ``act`` would choose (a function of the seed, the row's observation and the seat's memory), the
        card-play searches of all rows run together (one load, play-out and scoring of all their tables).

        ``keys``: row ``i`` continues the card memory of key ``keys[i]`` (e.g. ``table * 4 + seat``; distinct
        within a call), as one ``act``-agent per key would; without keys, rows use ``act``'s memory (filed by
        hand). ``return_values``: also return ``(N, A)`` float32, the mean score difference search measured
        for each card it tried (``act``'s ``last_values``), NaN elsewhere (not tried, no search). Other
        phases (bids, discards, trump) are ``act``'s, row by row. ``played`` (with ``keys``): the actions the
        seats really take, one legal action per row, when another player acts and search only rates its
        positions (expert iteration's labels): each key's memory then follows the card played, not search's
        (a memory of a card not played would not match the seat's next decision and its voids would be lost)."""
        n_actions = self.layout.n_actions
        obs, masks, keys = check_batch(observations, masks, keys, self.reader.size, n_actions)
        n = obs.shape[0]
        if played is not None:
            played = np.asarray(played)
            if keys is None or played.shape != (n,) or not np.issubdtype(played.dtype, np.integer):
                raise ValueError(f"played must be one integer action per row ({n}) and needs keys, got "
                                 f"{played.dtype} of shape {played.shape}{'' if keys is not None else ' without keys'}")
            legal = (played >= 0) & (played < n_actions)
            legal[legal] = masks[np.flatnonzero(legal), played[legal]] != 0
            if not legal.all():
                bad = int(np.flatnonzero(~legal)[0])
                raise ValueError(f"played: row {bad}'s action {int(played[bad])} is not legal there")
        out = np.empty(n, np.int64)
        values = np.full((n, n_actions), np.nan, np.float32) if return_values else None
        packed_obs = np.packbits(obs > 0.5, axis=1, bitorder="little")
        packed_masks = np.packbits(masks != 0, axis=1, bitorder="little")
        plays = []
        for i in range(n):
            vec = obs[i]
            legal = int.from_bytes(packed_masks[i].tobytes(), "little")
            cards = legal & self.layout.card_mask
            packed = int.from_bytes(packed_obs[i].tobytes(), "little")
            try:
                view = self.reader.read(vec, packed) if cards else None
            except Exception:
                if self.strict:
                    raise
                view = None
            if view is None or view.phase != PLAY:  # act's path: the base's decisions, and its fallbacks
                out[i] = self.act({"observation": vec, "action_mask": masks[i]})
                continue
            key = None if keys is None else int(keys[i])
            memory = self._memory.pop(view.hand, None) if key is None else self._keyed_memory.get(key)
            play = self._play_decision(view, vec, packed, cards, memory)
            play.row = i
            plays.append(play)
        self._search_all(plays)
        for play in plays:
            i = play.row
            out[i] = self._conclude(play, {"observation": obs[i], "action_mask": masks[i]},
                                    None if keys is None else int(keys[i]), -1 if played is None else int(played[i]))
            if values is not None and play.values:
                values[i, list(play.values)] = list(play.values.values())
        self.last_values = None
        return (out, values) if return_values else out

    # ------------------------------------------------------------------ the card-play search
    def _play_decision(self, view: Any, vec: np.ndarray, packed: int, cards: int, memory: Memory | None) -> _Play:
        """One card-play decision to make: what the seat knows (its view, its memory's voids)."""
        trump = view.trump if view.trump >= 0 else 0
        return _Play(view, vec, packed, cards, known_voids(self.tables, view, trump, memory))

    def _conclude(self, play: _Play, observation: Mapping[str, np.ndarray], key: int | None, played: int = -1) -> int:
        """The card of a searched decision (the heuristic's where search found none) and the memory filed
        (under the hand after the play, or under ``key``; after the card ``played`` when one is given)."""
        view, cards, card = play.view, play.cards, play.card
        if not cards & (cards - 1):
            card = cards.bit_length() - 1
        elif card < 0 or not cards >> card & 1:
            self._fallbacks += 1
            if key is None:
                card = self.heuristic.act(observation)
            else:
                card = int(self.heuristic.act_batch(observation["observation"][None], observation["action_mask"][None],
                                                    keys=np.array([key]))[0])
        lead = view.trick[0][1] if view.trick else -1
        memory = Memory(view.hand & ~(1 << (card if played < 0 else played)), tuple(view.played), lead,
                        tuple(play.voids))
        if key is not None:
            self._keyed_memory[key] = memory
        else:
            if len(self._memory) >= MEMORY_LIMIT:
                self._memory.clear()
            self._memory[memory.hand] = memory
        return card

    def _auction_search(self, auction: str, samples: int) -> AuctionSearch | None:
        """The auction search of ``auction`` (:mod:`.auction`), None for the base agent's auction."""
        if auction not in AUCTION_MODES:
            raise ValueError(f"auction must be one of {', '.join(AUCTION_MODES)}, got {auction!r}")
        if auction == "base":
            return None
        if auction == "values":  # its play-outs run a network: torch, loaded on first use
            values = load("rook_env.agents.search.values:NetworkValues", ("torch",), "auction='values'")
            return values(self.config, self.base, samples, self.values_top, self.seed)
        if self.engine == "batched":
            def score(template: RookState, holders: list, deals: list) -> np.ndarray:
                if self._batched is None:
                    self._batched = BatchedRollouts(self.config)
                return self._batched.score_deals(template, holders, deals, [-1])[:, 0]
        else:
            def score(template: RookState, holders: list, deals: list) -> np.ndarray:
                out = []
                for deal in deals:
                    world = make_world(template, holders, deal)
                    self._rollout(world)
                    out.append(hand_score_diff(world))
                return np.array(out)
        phases = (BID,) if auction == "bids" else None
        return AuctionSearch(self.config, self.tables, self.reader, samples, self.seed, score, phases)

    def _search_auction(self, view: Any, vec: np.ndarray, packed: int, legal: int) -> int:
        """The auction search's bid, discard or trump (-1: the base agent decides); files its values."""
        try:
            action = self._auction.decide(view, vec, packed, legal)
        except Exception:
            if self.strict:
                raise
            self._fallbacks += 1
            return -1
        self.last_values = self._auction.last_values
        return action if action >= 0 and legal >> action & 1 else -1

    def _search_all(self, plays: list[_Play]) -> None:
        """Search every decision with a choice of cards: sets its ``card`` (-1: none found) and ``values``."""
        plays = [p for p in plays if p.cards & (p.cards - 1)]
        if not plays:
            return
        if self.engine == "python":
            for p in plays:
                try:
                    self._search(p)
                except Exception:
                    if self.strict:
                        raise
            return
        if self._batched is None:
            self._batched = BatchedRollouts(self.config)
        tab = self.tables
        ready, templates, holders, unseen, seeds, deals = [], [], [], [], [], []
        for p in plays:
            try:
                u, hs, template, rng = self._world_setup(p)
                p.actions = self._distinct_cards(p.view, p.cards)
                seed, d = -1, None
                if self.exact_worlds or self._world_model is not None:
                    # the Python engine's worlds (tests compare the engines' values on them); learned worlds
                    # are drawn by the weighted sampler, in Python
                    sampler = self._sampler(p, u, hs)
                    d = np.zeros((self.samples, 4), np.uint64)
                    if self._world_model is not None:  # compiled, the same draws as sample()'s loop
                        d[:, :len(hs)] = sampler.sample_many(rng, self.samples)
                    else:
                        d[:, :len(hs)] = [sampler.sample(rng) for _ in range(self.samples)]
                else:  # the same distribution, drawn by compiled code from a seed of the decision's stream
                    seed = rng.getrandbits(32)
            except Exception:
                if self.strict:
                    raise
                continue
            ready.append(p)
            templates.append(template)
            holders.append(hs)
            unseen.append(u)
            seeds.append(seed)
            deals.append(d)
        try:
            drawn = [j for j, d in enumerate(deals) if d is None]
            if drawn:
                fast, ok = sample_many([unseen[j] for j in drawn], [holders[j] for j in drawn], tab.counter_mask,
                                       self.samples, [seeds[j] for j in drawn])
                for i, j in enumerate(drawn):
                    deals[j] = fast[i] if ok[i] else None
            keep = [j for j, d in enumerate(deals) if d is not None]  # no consistent deal: the heuristic's card
            if not keep:
                return
            who = holder_arrays([holders[j] for j in keep])[-1]
            t_cards = np.array([[*templates[j].hands, templates[j].nest, templates[j].discards] for j in keep],
                               np.uint64)
            cards = world_cards(t_cards, who, np.stack([deals[j] for j in keep]))
            scores = self._batched.score_worlds([templates[j] for j in keep], cards, [ready[j].actions for j in keep])
        except Exception:  # the heuristic's cards for these decisions
            if self.strict:
                raise
            return
        for j, sc in zip(keep, scores):
            self._choose(ready[j], sc.sum(axis=0).tolist())

    def _world_setup(self, play: _Play) -> tuple[int, list, RookState, random.Random]:
        """A decision's unseen cards, their holders, its template world and its random stream (a function of
        the seed and of the observation only)."""
        tab, view, vec = self.tables, play.view, play.vec
        unseen, holders = holders_for(tab, view, play.voids)
        ol = self.reader.ol
        total = tab.total_points
        counters = (round(float(vec[ol.COUNTERS]) * total), round(float(vec[ol.COUNTERS + 1]) * total))
        template = world_template(self.config, view, counters)
        return unseen, holders, template, random.Random((play.packed << 64) | self.seed)

    def _sampler(self, play: _Play, unseen: int, holders: list) -> Any:
        """The Python sampler of a decision's worlds (uniform, or the learned model's)."""
        tab = self.tables
        if self._world_model is None:
            return WorldSampler(unseen, holders, tab.counter_mask)
        return learned_sampler(self._world_model, play.vec, play.voids, unseen, holders, tab.counter_mask)

    def _search(self, play: _Play) -> None:
        """One decision on the Python engine: every world played out card by card."""
        unseen, holders, template, rng = self._world_setup(play)
        sampler = self._sampler(play, unseen, holders)
        actions = play.actions = self._distinct_cards(play.view, play.cards)
        totals = [0] * len(actions)
        rollout = self._rollout
        for _ in range(self.samples):
            world = make_world(template, holders, sampler.sample(rng))
            legal = world.legal_mask()
            for i, a in enumerate(actions):
                st = fork(world)
                st.apply(a, legal)
                rollout(st)
                totals[i] += hand_score_diff(st)
        self._choose(play, totals)

    def _choose(self, play: _Play, totals: list[int]) -> None:
        """The card of the best total (ties: the cheaper card) and the mean values, into ``play``."""
        tab = self.tables
        actions = play.actions
        play.values = {a: totals[i] / self.samples for i, a in enumerate(actions)}  # shown by the showdown server
        pts, rp = tab.points, tab.rank_power
        best = max(range(len(actions)), key=lambda i: (totals[i], -pts[actions[i]], -rp[actions[i]]))
        play.card = actions[best]

    def _distinct_cards(self, view: Any, cards: int) -> list[int]:
        """One card (the lowest) of each set of equivalent legal cards: cards of one effective suit
        worth the same points with no card between them that another seat may hold (every card
        between is this seat's or played) win and lose the same tricks."""
        tab = self.tables
        order = tab.order[view.trump]
        pts = tab.points
        mine_or_gone = view.hand | view.played_all
        out = []
        for suit_order in order:
            last = -1  # the lowest card of the current run of equivalent legal cards
            for c in suit_order:  # strongest first
                if cards >> c & 1:
                    if last >= 0 and pts[c] == pts[last]:
                        last = c
                        continue
                    if last >= 0:
                        out.append(last)
                    last = c
                elif not mine_or_gone >> c & 1:
                    if last >= 0:
                        out.append(last)
                    last = -1
            if last >= 0:
                out.append(last)
        return out


class _Play:
    """One card-play decision in the making: what the seat knows, the cards tried, the outcome."""

    __slots__ = ("view", "vec", "packed", "cards", "voids", "actions", "card", "values", "row")

    def __init__(self, view: Any, vec: np.ndarray, packed: int, cards: int, voids: list[int]) -> None:
        self.view, self.vec, self.packed, self.cards, self.voids = view, vec, packed, cards, voids
        self.actions: list[int] = []
        self.card = -1  # -1: no card found (the heuristic's is played)
        self.values: dict[int, float] | None = None  # card -> mean score difference, where search ran
        self.row = -1


def _world_model(worlds: str, obs_size: int) -> HolderModel | None:
    """The holder model of ``worlds``: None for ``"uniform"``, the shipped one for ``"learned"``, else a
    path to a model ``.npz`` (:mod:`.inference`)."""
    if not isinstance(worlds, str):
        raise ValueError(f"worlds must be one of {', '.join(WORLDS)} or a path to a holder model .npz, got {worlds!r}")
    if worlds == "uniform":
        return None
    if worlds != "learned" and not worlds.endswith(".npz"):
        raise ValueError(f"worlds must be one of {', '.join(WORLDS)} or a path to a holder model .npz, got {worlds!r}")
    model = load_model(None if worlds == "learned" else worlds)
    if model.obs_size != obs_size:
        raise ValueError(f"holder model {worlds!r} reads observations of size {model.obs_size}, but these rule "
                         f"flags give {obs_size}")
    return model
