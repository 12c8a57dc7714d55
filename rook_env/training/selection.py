"""Evaluation and checkpoint selection.

Every ``eval_every`` iterations the greedy policy plays each of ``eval_opponents`` on the same seeded deals
(``eval_seed``) by the game's fair match: partnership duplicate (each deal with both seatings; points per
deal) or call-your-partner rotation (each deal in all n rotations, the policy in one chair and the opponent
in the others; the policy's hand score minus the others' mean), with 95% intervals. A checkpoint's score
over that field is ``select_by`` (:func:`score_of`: the weakest result, the mean, or one opponent's).
``best.pt`` has the best periodic score (:func:`new_best`). The periodic evaluations' few deals rank close
checkpoints only roughly, so with ``playoff_candidates`` the best few are kept (:func:`keep_candidate`) and
played again at the end on ``playoff_deals`` fresh deals (:func:`run_playoff`); the winner becomes
``agent.pt``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from rook_env.agents.learned.agent import PPOAgent, heuristic_prior_agent
from rook_env.agents.learned.model import ActorCritic, load_checkpoint, model_from_checkpoint
from rook_env.evaluation.deals import hand_flags
from rook_env.games import Game

from .config import Config, game_of, play_by_agent


def evaluate_policy(model: ActorCritic, opponent: str, deals: int, seed: int, cfg: Config,
                    game: Game | None = None) -> dict:
    """Evaluation of the greedy policy by the game's fair match (:attr:`Game.match`): partnership
    duplicate (rook_env.evaluation.play_match) or call-your-partner rotation (play_rotation_match).
    ``opponent``: random, heuristic (the game's heuristic) or a checkpoint path. ``game``: the run's
    (built from ``cfg`` when not given)."""
    game = game or game_of(cfg)
    frozen = copy.deepcopy(model).cpu().eval()

    def factory(seed: int) -> PPOAgent:  # the matches' callable member spec: factory(seed) -> agent
        prior = heuristic_prior_agent(game.name, seed=seed, **game.flags) if frozen.heuristic_prior else None
        net = PPOAgent(frozen, greedy=True, seed=seed, prior=prior)
        # with play_by, search plays the cards and the network bids, discards and names trump (what was trained)
        return play_by_agent(cfg.play_by, game.flags, seed, base=net) if cfg.play_by else net

    factory.name = "ppo(training)"
    spec = game.heuristic if opponent == "heuristic" else opponent
    # Matches play single hands and build games to target_score from the deal stream (games-to-target win
    # rates), so a game-episode run (env_flags.episode=game) is evaluated on the same deals hand by hand,
    # each hand dealt with the running score of its game (the agent was trained to read it).
    flags, game_level = hand_flags(game.agent_flags)
    # a match without game scores (a rotation match) plays every hand at 0-0
    extra = {"game_scores": True} if game_level and "game_scores" in game.spec.match_options else {}
    if cfg.eval_engine == "tables":  # only where the game's match has the engine (the config checks it)
        extra["engine"] = "tables"
    mean, (lo, hi) = game.match(factory, spec, deals, seed, flags, **extra)
    return {"opponent": opponent, "mean": mean, "ci95": [lo, hi], "half_width": (hi - lo) / 2, "deals": deals}


def evaluate_field(model: ActorCritic, cfg: Config, deals: int, seed: int, game: Game | None = None) -> dict[str, dict]:
    """:func:`evaluate_policy` against each of ``eval_opponents`` on the same deals, by opponent name."""
    return {opp: evaluate_policy(model, opp, deals, seed, cfg, game) for opp in cfg.eval_opponents}


def score_of(ev: dict, cfg: Config) -> float:
    """A checkpoint's score over the evaluated field (``select_by``): the weakest result, the mean, or one."""
    means = [ev[opp]["mean"] for opp in cfg.eval_opponents]
    if cfg.select_by == "min":
        return min(means)
    if cfg.select_by == "mean":
        return float(np.mean(means))
    return ev[cfg.select_by]["mean"]


def new_best(state: Any, ev: dict, cfg: Config) -> bool:
    """Book an evaluation of the model at ``state``'s iteration (a RunState); True when it is the best so far
    (``state.best`` then holds it, and the caller writes best.pt)."""
    score = score_of(ev, cfg)
    if state.best is not None and score <= state.best["score"]:
        return False
    state.best = {"score": score, "iteration": state.iteration, "decisions": state.decisions, "eval": ev}
    return True


def keep_candidate(state: Any, ev: dict, cfg: Config, out_dir: str) -> str | None:
    """Book the evaluated model as a playoff candidate: ``state.candidates`` keeps the ``playoff_candidates``
    best by periodic score (a tie goes to the later iteration) and the dropped ones' files are deleted. Returns
    the file the caller writes the model to when it is among them (None: it is not, or there is no playoff)."""
    if not cfg.playoff_candidates:
        return None
    cands = state.candidates
    entry = {"score": score_of(ev, cfg), "iteration": state.iteration, "decisions": state.decisions,
             "path": os.path.join(out_dir, "candidates", f"it{state.iteration}.pt")}
    cands.append(entry)
    cands.sort(key=lambda c: (-c["score"], -c["iteration"]))
    for dropped in cands[cfg.playoff_candidates:]:
        if os.path.exists(dropped["path"]):
            os.remove(dropped["path"])
    del cands[cfg.playoff_candidates:]
    if entry not in cands:
        return None
    os.makedirs(os.path.dirname(entry["path"]), exist_ok=True)
    return entry["path"]


def run_playoff(cfg: Config, candidates: list[dict], log: Callable[[str], None],
                game: Game | None = None) -> tuple[list[dict], tuple[dict, ActorCritic] | None]:
    """Play the kept candidates again on ``playoff_deals`` deals of ``playoff_seed`` (the same deals for all).
    Returns each candidate's record (``playoff``, ``playoff_score``; the winner's with ``winner: True``) and
    the winner's (checkpoint, model), or None without candidates. The best playoff score wins; a tie goes to
    the better periodic score (the candidates' order)."""
    playoff, models = [], []
    for cand in candidates if cfg.playoff_candidates else []:
        ckpt = load_checkpoint(cand["path"])
        models.append((ckpt, model_from_checkpoint(ckpt, cand["path"])))
        res = evaluate_field(models[-1][1], cfg, cfg.playoff_deals, cfg.playoff_seed, game)
        playoff.append({**cand, "playoff_score": score_of(res, cfg), "playoff": res})
        log(f"playoff: iteration {cand['iteration']} (periodic {cand['score']:+.1f}): "
            + ", ".join(f"vs {o} {res[o]['mean']:+.1f}" for o in cfg.eval_opponents))
    if not playoff:
        return playoff, None
    win = max(range(len(playoff)), key=lambda i: (playoff[i]["playoff_score"], -i))
    playoff[win]["winner"] = True
    return playoff, models[win]
