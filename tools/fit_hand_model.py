"""Fit the heuristic's hand model (rook_env/agents/heuristic/bidding.py) to simulated hands.

    python tools/fit_hand_model.py                                  # every deck and Rook rank, printed
    python tools/fit_hand_model.py --deck tournament --rook-rank high --deals 1500 --seed 7001

For each seeded deal (``rook_env.evaluation.make_deal(seed, i, flags)``) every seat in turn is forced
to win the auction at the minimum bid (the others pass); the heuristic names trump, discards and
plays every seat. The target is the counter points (120-point scale, the nest included when won)
taken by the bidding side. Each forced hand gives two rows of :func:`hand_features` at the trump
that was named:

  * the dealt hand with ``nest_unseen`` (what bidding sees);
  * the hand kept after the discard, with the discarded points (what discard planning scores).

With ``--explore`` (default 0.5) the bidder of an extra play of the same hand takes a plan (trump
and discard) drawn at random from the planner's candidates instead of the best one; that hand
gives a kept-hand row only. These rows show the model the alternatives the planner ranks, not
just the plans it already prefers. One weight vector is then fitted to all rows by least squares
(a small ridge penalty keeps the collinear features, e.g. ``top1`` and ``top_run``, stable), and
printed as the ``HAND_WEIGHTS`` entry with the fit's R^2 and residual deviation. The bidding
calibration (``BID_CALIBRATION``: offset, slope) is the least-squares line of the points taken on
the fitted model's value of the dealt hands: the model's slopes are shared with the kept hands, whose
features tell more, so on a dealt hand its spread is too wide and is shrunk.

The hands are played through ``raw_env`` by the heuristic with a fixed reference planner
(:func:`reference_weights`: the hand-weighted value that planned discards before this model, written
as weights over the same features), not with the weights being fitted, so that the fit is
reproducible from the seed and the deal count alone.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rook_env.agents.heuristic import HeuristicAgent
from rook_env.agents.heuristic.bidding import HAND_FEATURES, HandModel, hand_features
from rook_env.evaluation import derive_seed, make_deal
from rook_env.games.partnership.cards import N_COLOURS, bits
from rook_env.games.partnership.env import raw_env
from rook_env.games.partnership.rules import BID, DISCARD, TRUMP

FIT_SEED = 7001  # the seed of the shipped fits (evaluation of the heuristic uses other seeds)
FIT_DEALS = 2000  # deals per deck and Rook rank (x 4 forced bidders, plus the explored plays)
EXPLORE = 0.5  # share of forced hands also played with a random plan
RIDGE = 1e-3  # ridge penalty per row on the weights other than the intercept
KEYS = [(deck, rank) for deck in ("tournament", "full") for rank in ("high", "low", "ten_and_half")]


def reference_weights(rook_rank: str) -> tuple[float, ...]:
    """The reference planner that plays the simulated hands: the former hand-weighted value of a kept
    hand (22 + 6 trumps + 4 top_run + 3 per honour (the top three trumps, the Rook Bird among them when
    high) + 6 (high) or 2 for the Rook Bird + 7 per master, half for its second + 2.5 per void and 1 per
    singleton, halved with fewer than 4 trumps - 0.15 per unguarded point + the nest term)."""
    high = rook_rank == "high"
    named = {"1": 22.0, "trumps": 6.0, "top_run": 4.0, "rook": 9.0 if high else 2.0, "top1": 3.0, "top2": 3.0,
             "top3": 0.0 if high else 3.0, "masters": 7.0, "master_seconds": 3.5, "voids": 1.25, "long_voids": 1.25,
             "singletons": 0.5, "long_singletons": 0.5, "unguarded": -0.15, "nest": 1.0}
    return tuple(named.get(name, 0.0) for name in HAND_FEATURES)


def simulate(flags: dict[str, Any], deals: int, seed: int, explore: float = EXPLORE,
             progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Rows (features, target) of ``deals`` seeded deals with every seat forced to bid in turn."""
    env = raw_env(**flags)
    agent = HeuristicAgent(**flags)
    agent.hand_model = HandModel(agent.tables, reference_weights(agent.config.rook_rank))
    tab, layout = agent.tables, agent.layout
    model = agent.hand_model
    rng = random.Random(derive_seed("fit-explore", seed))
    features: list[tuple[float, ...]] = []
    targets: list[float] = []
    start = time.perf_counter()
    for index in range(deals):
        options, env_seed = make_deal(seed, index, flags)
        for bidder in range(4):
            plays = [None]
            if rng.random() < explore:
                plays.append(rng)
            for chooser in plays:
                env.reset(seed=env_seed, options=options)
                agent.reset()
                dealt = sum(1 << c for c in options["hands"][bidder])
                played = _play(env, agent, bidder, chooser, model)
                game = env.game
                trump = game.trump
                if trump < 0 or played is None:
                    continue
                points = game.hand_result["counters"][bidder & 1] / tab.scale
                discards = game.discards
                kept = 0
                for card in range(layout.n_cards):  # the bidder's hand at the start of play
                    if game.played_by[card] == bidder and not discards >> card & 1:
                        kept |= 1 << card
                if chooser is None:
                    features.append(hand_features(tab, dealt, trump, nest_unseen=True))
                    targets.append(points)
                features.append(hand_features(tab, kept, trump, tab.points_of(discards)))
                targets.append(points)
        if progress and (index + 1) % 100 == 0:
            print(f"  {index + 1}/{deals} deals, {time.perf_counter() - start:.0f} s", flush=True)
    return np.array(features, np.float64), np.array(targets, np.float64)


def _play(env: raw_env, agent: HeuristicAgent, bidder: int, chooser: random.Random | None, model) -> int | None:
    """Play the hand: ``bidder`` bids the minimum, the others pass; with ``chooser`` the bidder's trump
    and discard follow a random candidate plan. Returns 1 when the hand was played out, else None."""
    layout = agent.layout
    plan: tuple[int, int] | None = None  # (trump, discard) of an explored plan
    while not all(env.terminations.values()):
        name = env.agent_selection
        seat = env.possible_agents.index(name)
        obs = env.observe(name)
        legal = sum(1 << a for a in np.flatnonzero(obs["action_mask"]).tolist())
        phase = env.game.phase
        if phase == BID:
            bids = legal & layout.bid_mask
            if seat == bidder and bids:
                action = (bids & -bids).bit_length() - 1
            elif legal >> layout.PASS & 1:
                action = layout.PASS
            else:
                return None  # a forced bid by another seat (cannot happen with the default all_pass)
        elif chooser is not None and seat == bidder and phase in (DISCARD, TRUMP):
            if plan is None:
                fourteen = env.game.hands[bidder] | env.game.discards
                fixed = env.game.trump if phase == DISCARD and model.forced_discard else -1
                candidates = [(t, d) for t in ([fixed] if fixed >= 0 else range(N_COLOURS))
                              for d in model._discard_options(fourteen, t)]
                plan = chooser.choice(candidates)
            trump, discard = plan
            if phase == TRUMP:
                action = layout.TRUMP0 + trump
            else:
                todo = [c for c in bits(discard & legal) if not env.game.discards >> c & 1]
                todo.sort(key=lambda c: agent.tables.points[c] > 0)
                action = todo[0] if todo else agent.act(obs)
            if not legal >> action & 1:
                action = agent.act(obs)
        else:
            action = agent.act(obs)
        env.step(action)
    return 1


def fit(features: np.ndarray, targets: np.ndarray, ridge: float = RIDGE) -> tuple[np.ndarray, float, float]:
    """Least-squares weights (intercept unpenalised), R^2 and the residual standard deviation."""
    n, k = features.shape
    penalty = np.eye(k) * ridge * n
    penalty[0, 0] = 0.0
    # Features that never vary (e.g. the Rook Bird of a deck variant that lacks it) get weight 0.
    constant = np.flatnonzero(features[:, 1:].std(axis=0) == 0) + 1
    penalty[constant, constant] = 1.0
    weights = np.linalg.solve(features.T @ features + penalty, features.T @ targets)
    residual = targets - features @ weights
    r2 = 1.0 - residual.var() / targets.var()
    return weights, float(r2), float(residual.std())


def calibrate(features: np.ndarray, targets: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """(offset, slope) of the least-squares line of the target on the model's value, dealt hands only."""
    dealt = features[:, HAND_FEATURES.index("nest_unseen")] == 1.0
    slope, offset = np.polyfit(features[dealt] @ weights, targets[dealt], 1)
    return float(offset), float(slope)


def format_weights(key: tuple[str, str], weights: Sequence[float]) -> str:
    return f"    {key!r}: ({', '.join(f'{w:.2f}' for w in weights)}),"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deck", choices=["tournament", "full"], help="one deck (default: both)")
    parser.add_argument("--rook-rank", choices=["high", "low", "ten_and_half"], help="one rank (default: all)")
    parser.add_argument("--deals", type=int, default=FIT_DEALS, help=f"deals per key (default {FIT_DEALS})")
    parser.add_argument("--seed", type=int, default=FIT_SEED, help=f"deal seed (default {FIT_SEED})")
    parser.add_argument("--explore", type=float, default=EXPLORE, help=f"share of random plans (default {EXPLORE})")
    parser.add_argument("--progress", action="store_true", help="print progress every 100 deals")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals must be positive, got {args.deals}")
    if not 0.0 <= args.explore <= 1.0:
        parser.error(f"--explore must be in [0, 1], got {args.explore}")
    keys = [k for k in KEYS if args.deck in (None, k[0]) and args.rook_rank in (None, k[1])]
    print(f"# features: {HAND_FEATURES}")
    print(f"# python tools/fit_hand_model.py --deals {args.deals} --seed {args.seed} --explore {args.explore}")
    for deck, rank in keys:
        start = time.perf_counter()
        x, y = simulate({"deck": deck, "rook_rank": rank}, args.deals, args.seed, args.explore, args.progress)
        weights, r2, sd = fit(x, y)
        offset, slope = calibrate(x, y, np.round(weights, 2))
        print(f"# {deck}/{rank}: {len(y)} rows, R^2 {r2:.3f}, residual sd {sd:.1f} points, "
              f"{time.perf_counter() - start:.0f} s")
        print(format_weights((deck, rank), weights))
        print(f"    # BID_CALIBRATION {(deck, rank)!r}: ({offset:.2f}, {slope:.3f}),", flush=True)


if __name__ == "__main__":
    main()
