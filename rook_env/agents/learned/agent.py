"""A PPO-trained policy as an agent (see agents/base.py for the protocol).

``PPOAgent.load(None)`` loads the shipped checkpoint ``rook_env/agents/checkpoints/ppo_default.pt``;
``PPOAgent.load("runs/x/best.pt")`` any checkpoint written by train.py. It plays greedily
(the most probable legal action) unless ``greedy=False`` (sampled from the masked policy).
Only the actor is used; the critic (possibly centralized) is ignored at play time.

A checkpoint records the game it was trained for (``"game"``: ``"partnership"`` when absent, as
in checkpoints written before call-your-partner Rook) and its table's rule flags; loading it for
another game, or for a call-your-partner table of another size, raises :class:`CheckpointError`
saying so (``check_checkpoint_game``).

A checkpoint with ``heuristic_prior`` > 0 (a residual policy over the game's heuristic,
rook_env/agents/learned/model.py) plays with the game's heuristic beside it: the heuristic decides
on the same observation first (its card memory follows every decision, forced ones included) and its
action gets that many logits more. ``PPOAgent.load`` builds it; ``PPOAgent(model, prior=...)`` takes one.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np
import torch

from ..base import check_batch, legal_from
from ..registry import CHECKPOINT_DIR
from .model import ActorCritic, CheckpointError, MaskedCategorical, load_checkpoint, model_from_checkpoint, prior_logits

GAME_TITLES = {"partnership": "the partnership game", "call_partner": "call-your-partner Rook"}


def check_checkpoint_game(ckpt: Mapping[str, Any], path: str, game: str, flags: Mapping[str, Any]) -> None:
    """Raise :class:`CheckpointError` unless the checkpoint was trained for ``game`` (and, for
    call-your-partner Rook, the same number of ``players``; absent: 5, the game's default)."""
    trained = ckpt.get("game", "partnership")
    if trained != game:
        raise CheckpointError(
            f"checkpoint {path!r} was trained for {GAME_TITLES.get(trained, repr(trained))} (game={trained!r}), "
            f"so it cannot play {GAME_TITLES.get(game, repr(game))} (game={game!r})"
        )
    if game == "call_partner":
        had, want = ckpt.get("env_flags", {}).get("players", 5), flags.get("players", 5)
        if had != want:
            raise CheckpointError(f"checkpoint {path!r} was trained at a {had}-player call-your-partner table, "
                                  f"not a {want}-player one")


DEFAULT_CHECKPOINT = os.path.join(CHECKPOINT_DIR, "ppo_default.pt")


def heuristic_prior_agent(game: str, seed: int | None = None, **flags: Any) -> Any:
    """The game's heuristic, as the prior of a residual policy (``heuristic_prior`` > 0) at this table."""
    from rook_env.agents import make_agent
    from rook_env.games import get_game

    return make_agent(get_game(game).heuristic, seed=seed, game=game, **flags)


class PPOAgent:
    def __init__(self, model: ActorCritic, greedy: bool = True, seed: int | None = None,
                 device: str | torch.device = "cpu", prior: Any | None = None) -> None:
        if model.heuristic_prior and prior is None:
            raise ValueError(f"this network is a residual policy over the heuristic (heuristic_prior="
                             f"{model.heuristic_prior:g}): pass the game's heuristic as prior= "
                             "(PPOAgent.load does), e.g. heuristic_prior_agent(game, **flags)")
        self.prior = prior if model.heuristic_prior else None
        self.model = model.to(device).eval()
        self.actor = self.model.actor
        self.greedy = bool(greedy)
        self.device = torch.device(device)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(0 if seed is None else int(seed))
        self.seed = seed

    @classmethod
    def load(cls, path: str | None = None, seed: int | None = None, greedy: bool = True,
             device: str | torch.device = "cpu", game: str = "partnership", **flags: Any) -> "PPOAgent":
        """Load a checkpoint (None: the partnership game's shipped one; ``make_agent("ppo", ...)`` finds any
        game's in :attr:`rook_env.games.GameSpec.networks`). ``game`` and ``flags``
        describe the table (``game="call_partner"``, ``players=5``, ...): the checkpoint must have
        been trained for that game, with the same observation and action sizes."""
        if game == "call_partner":
            from rook_env.call_partner.config import make_config
            from rook_env.call_partner.layout import layout_for
            from rook_env.call_partner.observation import obs_layout
        else:
            from rook_env import make_config
            from rook_env.cards import layout_for
            from rook_env.observation import obs_layout

        path = DEFAULT_CHECKPOINT if path is None else str(path)
        if os.path.dirname(os.path.abspath(path)) == CHECKPOINT_DIR and not os.path.isfile(path):
            raise CheckpointError(
                f"the shipped PPO checkpoint {path!r} is missing; train one with train.py (docs/training.md) and "
                f"ship it with `python tools/ship.py runs/<name> --to {os.path.splitext(path)[0]}`, or pass a "
                f"checkpoint path"
            )
        config = make_config(**flags)
        ckpt = load_checkpoint(path, map_location=device)
        check_checkpoint_game(ckpt, path, game, config.to_dict() if game == "call_partner" else flags)
        model = model_from_checkpoint(
            ckpt, path, obs_dim=obs_layout(config).size, n_actions=layout_for(config).n_actions
        )
        prior = heuristic_prior_agent(game, seed=seed, **flags) if model.heuristic_prior else None
        agent = cls(model, greedy=greedy, seed=seed, device=device, prior=prior)
        agent.checkpoint_info = {k: ckpt.get(k) for k in ("game", "env_flags", "config", "decisions", "iteration")}
        return agent

    def reset(self) -> None:
        if self.prior is not None:
            self.prior.reset()

    def _hint(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None) -> torch.Tensor | None:
        """The prior's action on this observation (None without a prior)."""
        if self.prior is None:
            return None
        return torch.tensor([int(self.prior.act(observation, info))], device=self.device)

    def _dist(self, observation: Mapping[str, np.ndarray], hint: torch.Tensor | None) -> MaskedCategorical:
        obs = torch.as_tensor(np.asarray(observation["observation"], np.float32), device=self.device).unsqueeze(0)
        mask = torch.as_tensor(np.asarray(observation["action_mask"]), device=self.device).bool().unsqueeze(0)
        logits = self.model.actor_logits(obs, hint)
        return MaskedCategorical(prior_logits(logits, hint, self.model.heuristic_prior), mask)

    @torch.no_grad()
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        hint = self._hint(observation, info)  # first: the heuristic's memory follows forced moves too
        legal = legal_from(observation)
        if legal.size == 1:
            return int(legal[0])
        d = self._dist(observation, hint)
        a = d.mode() if self.greedy else d.sample(self.generator)
        return int(a.item())

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """Actions (N,) int64 for N seats' observations (N, obs_dim) and action masks (N, A): what ``act`` chooses
        for each row, in one forward pass (greedy: exactly ``act``'s choice; sampled: from the agent's generator in
        row order). ``keys`` (distinct per call, e.g. ``table * 4 + seat``) file the heuristic prior's card memory
        of a residual network; a plain network keeps none."""
        obs, masks, keys = check_batch(observations, masks, keys, self.model.obs_dim, self.model.n_actions)
        hint = None
        if self.prior is not None:
            if not hasattr(self.prior, "act_batch"):
                raise ValueError(f"this residual network's prior ({type(self.prior).__name__}) has no act_batch: "
                                 "decide row by row with act()")
            hint = torch.as_tensor(self.prior.act_batch(obs, masks, keys), device=self.device)
        x = torch.as_tensor(np.asarray(obs, np.float32), device=self.device)
        logits = prior_logits(self.model.actor_logits(x, hint), hint, self.model.heuristic_prior)
        d = MaskedCategorical(logits, torch.as_tensor(np.asarray(masks), device=self.device).bool())
        a = d.mode() if self.greedy else d.sample(self.generator)
        return a.cpu().numpy().astype(np.int64)

    @torch.no_grad()
    def action_probs(self, observation: Mapping[str, np.ndarray]) -> np.ndarray:
        """The policy's probabilities over all actions (0 for illegal ones)."""
        return self._dist(observation, self._hint(observation, None)).probs[0].cpu().numpy()
