"""Expert iteration's online labels at ``act_batch``'s rate: the current network plays ``tables`` tables of the
batched engine at once (sampling its actions, as PPO's collector does), and search rates the card-play positions
the network itself reaches, every table's decision of a step in one ``SearchAgent.act_batch`` call.

Search only labels: the network's card is played, and search's memory of each seat (keyed ``table * 4 + seat``)
follows that card (``act_batch(played=...)``), so the voids a seat saw earlier in the hand stay known. Search
reads nothing but the seat's observation and that memory. A record is what
:func:`rook_env.training.expert.distill_loss` reads: the seat's observation, its mask, ``q`` (search's mean score
difference per card tried, NaN elsewhere), ``cin`` (``state_for(seat)``, the central critic's input; training
only) and, when the hand ends, ``outcome`` (the seat's team's hand score minus the other's). Decisions with one
legal card are not searched and not recorded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from rook_env.agents.learned.model import ActorCritic
from rook_env.agents.search import SearchAgent
from rook_env.games.partnership.rules import PLAY
from rook_env.vector import RookVectorEnv

RECORD_KEYS = ("obs", "mask", "q", "cin", "seat")  # per decision, before the hand's outcome


class TableLabeller:
    """``tables`` tables played by ``model`` (its actor: the caller loads new weights into it), deals from
    ``seed``, search's ``samples`` worlds per decision drawn as ``worlds`` says (SearchAgent's argument: "uniform",
    "learned"); :meth:`step` advances every table one decision and returns the records of the hands that ended."""

    def __init__(self, model: ActorCritic, tables: int, seed: int, samples: int, flags: dict[str, Any],
                 worlds: str = "uniform") -> None:
        self.model = model
        self.env = RookVectorEnv(tables, **flags)
        self.seats = self.env.n_seats
        self.obs, self.info = self.env.reset(seed=seed)
        self.search = SearchAgent(seed=seed, samples=samples, worlds=worlds, **flags)
        self.gen = torch.Generator().manual_seed(seed)
        self.pending: list[list[dict[str, np.ndarray]]] = [[] for _ in range(tables)]  # the hand so far, per table
        self.rated = 0  # decisions searched so far (labels, counted before their hands end)

    @torch.no_grad()
    def step(self) -> dict[str, np.ndarray] | None:
        """One decision at every table: the network's action (sampled), search's values where it is a card
        play; the records (RECORD_KEYS and ``outcome``) of the hands that ended, None if none did."""
        env, obs, seat, mask = self.env, self.obs, self.info["seat"], self.info["action_mask"]
        m = mask.view(np.bool_)
        actions = self.model.dist(torch.from_numpy(obs), torch.from_numpy(m)).sample(self.gen).numpy()
        play = np.flatnonzero(env.phase == PLAY)
        if play.size:  # forced plays too: each seat's memory follows every trick
            _, q = self.search.act_batch(obs[play], mask[play], play * self.seats + seat[play], return_values=True,
                                         played=actions[play])
            rated = np.flatnonzero(np.isfinite(q).any(axis=1))
            self.rated += rated.size
            if rated.size:
                rows = play[rated]
                cin = env.state_for(seat)[rows]
                for j, t in enumerate(rows.tolist()):
                    self.pending[t].append({"obs": obs[t].copy(), "mask": m[t].copy(), "q": q[rated[j]],
                                            "cin": cin[j], "seat": seat[t]})
        self.obs, _, _, _, self.info = env.step(actions)
        ended = np.flatnonzero(self.info["hand_over"])
        done = []
        for t in ended.tolist():
            if not self.pending[t]:
                continue
            scores = self.info["hand"]["hand_scores"][t]
            recs, self.pending[t] = self.pending[t], []
            out = {k: np.stack([r[k] for r in recs]) for k in RECORD_KEYS}
            team = out["seat"] % 2
            out["outcome"] = (scores[team] - scores[1 - team]).astype(np.float32)
            done.append(out)
        if not done:
            return None
        return {k: np.concatenate([d[k] for d in done]) for k in done[0]}
