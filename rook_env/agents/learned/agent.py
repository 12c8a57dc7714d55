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

from rook_env.games import DEFAULT_GAME, get_game, resolve_game

from ..base import check_batch, legal_from
from ..checkpoints import CHECKPOINT_DIR
from ..registry import make_agent, shipped_network
from .model import ActorCritic, CheckpointError, MaskedCategorical, load_checkpoint, model_from_checkpoint, prior_logits

# how the errors name a game (a game not listed: its registry title)
GAME_TITLES = {"partnership": "the partnership game", "call_partner": "call-your-partner Rook"}


def _title(game: str) -> str:
    return GAME_TITLES.get(game) or get_game(game).title


def check_checkpoint_game(ckpt: Mapping[str, Any], path: str, game: str, flags: Mapping[str, Any]) -> None:
    """Raise :class:`CheckpointError` unless the checkpoint was trained for ``game`` (and, for a game with several
    table sizes, call-your-partner Rook, the same number of ``players``; absent: the game's default)."""
    trained = ckpt.get("game", "partnership")  # checkpoints from before the second game record none
    if trained != game:
        title = _title(trained) if trained in GAME_TITLES else repr(trained)
        raise CheckpointError(f"checkpoint {path!r} was trained for {title} (game={trained!r}), "
                              f"so it cannot play {_title(game)} (game={game!r})")
    spec = get_game(game)
    if spec.takes_players:
        had = ckpt.get("env_flags", {}).get("players", spec.default_players)
        want = flags.get("players", spec.default_players)
        if had != want:
            table = _title(game).removeprefix("the ").removesuffix(" game").removesuffix(" Rook")
            raise CheckpointError(f"checkpoint {path!r} was trained at a {had}-player {table} table, "
                                  f"not a {want}-player one")


DEFAULT_CHECKPOINT = shipped_network(DEFAULT_GAME, {})  # the partnership game's shipped network


def heuristic_prior_agent(game: str, seed: int | None = None, **flags: Any) -> Any:
    """The game's heuristic, as the prior of a residual policy (``heuristic_prior`` > 0) at this table."""
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
        path = DEFAULT_CHECKPOINT if path is None else str(path)
        if os.path.dirname(os.path.abspath(path)) == CHECKPOINT_DIR and not os.path.isfile(path):
            raise CheckpointError(
                f"the shipped PPO checkpoint {path!r} is missing; train one with train.py (docs/training.md) and "
                f"ship it with `python tools/ship.py runs/<name> --to {os.path.splitext(path)[0]}`, or pass a "
                f"checkpoint path"
            )
        spec, config = resolve_game(game, **flags)
        ckpt = load_checkpoint(path, map_location=device)
        check_checkpoint_game(ckpt, path, game, config.to_dict() if spec.takes_players else flags)
        model = model_from_checkpoint(
            ckpt, path, obs_dim=spec.load("obs_layout")(config).size, n_actions=spec.load("layout")(config).n_actions
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
