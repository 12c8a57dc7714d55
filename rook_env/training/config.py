"""The training configs, one class per algorithm: :class:`PPOConfig` (PPO self-play, every option with its default
and what it means, its sections :class:`RayConfig` and :class:`ExitConfig`; ``Config`` is its other name) and
:class:`LabelRoundsConfig` (rounds of counterfactual labels: a run's name and folder and the :class:`RoundsConfig`
section). The checks (one function per concern), how a YAML file and the command line override a config
(:func:`make_train_config`, which takes the class from the ``algorithm`` field), and the schedules that move with
the training progress (:func:`linear`, :func:`mix_at`).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rook_env.agents.learned.model import GRAD_PRECISIONS
from rook_env.agents.registry import GAMES, family_of, game_config
from rook_env.agents.search import SearchAgent, parse_search
from rook_env.games import Game, get_game

from .labels.config import RANDOM_NETWORK, SEED_STRIDE, RoundsConfig  # noqa: F401 - the rounds section

OPPONENT_KINDS = ("self", "pool", "heuristic", "random")
EVAL_NAMES = ("random", "heuristic", "search")  # besides checkpoint paths; "heuristic" is the game's heuristic


@dataclass
class RayConfig:
    """The ``ray`` section: collectors as Ray actors on a cluster (rook_env.training.ray_collection,
    docs/cluster.md). ``collectors: 0`` (the default) is the in-process loop, which never imports ray."""

    collectors: int = 0  # Ray collector actors; 0: collect in this process (no Ray)
    address: str = ""  # the cluster to join: "auto", "HOST:PORT"; "": start a private local Ray instance
    tables: int = 0  # tables (batched-engine rows) per collector; 0: the config's num_envs
    num_cpus: float = 1.0  # CPUs each collector reserves (it is one process: 1 keeps one collector per core)
    resources: dict[str, float] = field(default_factory=dict)  # custom resources each collector asks for
    spread: bool = True  # place collectors on as many nodes as possible (Ray's SPREAD scheduling)
    # A rollout played by weights more than max_lag updates older than the learner's is dropped (not booked, its
    # decisions not counted) and its collector gets the current weights; PPO's clipping handles the lag below it.
    max_lag: int = 4


@dataclass
class ExitConfig:
    """The ``exit`` section: expert iteration (rook_env.training.expert, docs/training.md). Each PPO minibatch adds
    ``coef`` times the distillation loss of ``batch`` labelled decisions (search's card values) drawn from a buffer
    of the newest ``buffer`` ones. ``source: ""`` (the default) is plain PPO and never imports the module."""

    source: str = ""  # "": off; "offline": the shards of ``labels``; "online": search on top of the current network
    # The folder of search_labels shards (shard_*.npz): offline, the labels; online, optional: they fill the buffer
    # at the start, the newest online labels then push them out
    labels: str = ""
    coef: float = 1.0  # weight of the distillation loss beside PPO's
    temperature: float = 10.0  # points: the policy target is softmax(q / temperature) over the tried cards
    batch: int = 512  # labelled decisions per PPO minibatch
    buffer: int = 200_000  # labelled decisions kept (the newest)
    samples: int = 24  # online: search's worlds per decision
    # online: how search draws its worlds: "uniform" among the consistent deals, "learned" (the shipped holder model
    # of the hidden cards, as make_agent("best") does) or a path to a holder model .npz
    worlds: str = "uniform"
    seed: int = 80_000_000  # online: the label tables' deal seed (apart from every evaluation seed)
    tables: int = 64  # online: tables the network plays at once, their card-play positions searched together
    # Distil only search's clear choices: decisions whose best card beats the second by at least this many points
    # (0: every searched decision); the others are held at the initial network by kl_coef (expert.hold_unclear)
    min_gap: float = 0.0
    kl_coef: float = 0.0  # weight of the KL to init_checkpoint's policy on the searched decisions min_gap leaves out


@dataclass
class LabelRoundsConfig:
    """The config of ``algorithm: label_rounds`` (rook_env.training.labels.rounds): the run's folder and its
    ``rounds`` section."""

    algorithm: str = "label_rounds"
    name: str = "default"  # run directory runs/<name>/ (the rounds' ``out`` when that is "")
    run_dir: str = "runs"
    rounds: RoundsConfig = field(default_factory=RoundsConfig)

    def check(self) -> LabelRoundsConfig:
        """Raise ValueError naming the first field out of range; returns the config."""
        self.rounds.check("config field rounds.")
        return self


@dataclass
class PPOConfig:
    """Every option of PPO self-play (rook_env.training.loop). A YAML file and the command line override these
    defaults (OmegaConf checks the types); :meth:`check` checks the values.

    The budget: a run stops at ``total_decisions`` learner decisions or when its wall time reaches
    ``max_minutes``, whichever comes first. ``max_minutes`` is the budget of the whole run, across
    resumes: the wall time a run has spent (behaviour cloning, collection, updates and periodic
    evaluation) is recorded in every checkpoint (``wall_seconds``) and a resumed run goes on counting
    from it. A run resumed after its cap stops at once (it finishes: final evaluation, playoff,
    ``agent.pt``); give it more time with ``--resume ... --max_minutes <larger>`` (or 0: no cap). Time
    spent after the checkpoint a run is resumed from is not counted (it is lost with the work done in
    it). The playoff and the held-out evaluation at the end run after the cap.
    """

    algorithm: str = "ppo"  # the algorithm of make_train_config's config classes (ALGORITHMS)
    name: str = "default"  # run directory runs/<name>/
    run_dir: str = "runs"
    seed: int = 1
    device: str = "auto"  # auto (cuda when present), cpu, cuda, cuda:0 ...
    torch_threads: int = 1
    game: str = "partnership"  # partnership (4 seats, fixed teams) or call_partner (4-6 seats, individual scores)
    players: int = 0  # seats at the table: call_partner 4, 5 or 6; 0: the game's own (partnership 4, call_partner 5)
    env_flags: dict[str, Any] = field(default_factory=dict)  # the game's rule flags (RULES.md); {} = default rules
    # Game episodes (env_flags.episode=game) end after this many hands at the latest (truncated, no reward:
    # a draw for win_loss). Needed: early policies can play a game for ever, both scores sinking below zero.
    max_hands: int = 0  # 0: no limit
    # --- budget
    total_decisions: int = 20_000_000  # learner decisions to train on
    max_minutes: float = 0.0  # the run's wall-time budget across resumes, BC included (0: no limit); see above
    # --- collection
    num_envs: int = 64
    rollout_decisions: int = 16384  # learner decisions per PPO update (at least; hands in progress finish)
    reward_scale: float = 0.01  # score_diff 125 -> 1.25
    skip_forced: bool = True  # moves with one legal action are played without recording a decision
    # Collect the next rollout while the update runs (asynchronous PPO, one update of policy lag): the update in
    # a second thread, so the loop keeps two cores busy. False: collect, then update, in turn.
    overlap: bool = True
    # --- PPO
    lr: float = 3e-4
    lr_end: float = 3e-5  # linear schedule from lr to lr_end over total_decisions
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 4
    minibatch_size: int = 2048
    clip_coef: float = 0.2
    clip_vloss: bool = True
    norm_adv: bool = True
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    ent_coef_end: float = 0.002  # linear schedule
    max_grad_norm: float = 0.5
    target_kl: float = 0.0  # > 0: stop an update's epochs early when approx_kl exceeds it
    # --- network
    hidden: list[int] = field(default_factory=lambda: [256, 256, 256])
    critic_hidden: list[int] = field(default_factory=list)  # the critic's hidden layers; [] = the same as hidden
    central_critic: bool = True
    # The dense layers' gradient products in training: auto (bfloat16 on a CPU that multiplies it in hardware,
    # AVX-512 BF16 or AMX; float32 elsewhere), float32 or bfloat16. The forward pass and the weights stay float32.
    grad_precision: str = "auto"
    init_checkpoint: str = ""  # start from this checkpoint's weights (a fresh run otherwise: new optimizer, counters)
    # A residual policy over the game's heuristic (rook_env/agents/learned/model.py): > 0 adds this many logits to
    # the heuristic's action at every decision, so a fresh network plays the heuristic greedily and PPO learns
    # where to play otherwise. 0: a plain network. Not with cloning, expert iteration, a league or Ray collectors.
    heuristic_prior: float = 0.0
    # The first critic_warmup updates train the critic alone (a fresh critic's advantages are noise; the actor,
    # e.g. a residual policy, waits for them)
    critic_warmup: int = 0
    # Card play by search (partnership game): a search spec without a base ("search[samples=96,worlds=learned]")
    # plays every card-play decision of the learner's seats, and those decisions are not recorded, so PPO trains
    # the auction (bids, discard, trump) for the card play that search will make; evaluation plays search with the
    # network as its base. "": the network plays its cards.
    play_by: str = ""
    # --- opponents
    opponent_mix: dict[str, float] = field(
        default_factory=lambda: {"self": 0.4, "pool": 0.2, "heuristic": 0.3, "random": 0.1})
    opponent_mix_end: dict[str, float] = field(default_factory=dict)  # {} = constant mix; else linear interpolation
    pool_size: int = 10  # past snapshots kept
    pool_every: int = 10  # iterations between snapshots
    # Fixed league members: checkpoints (same game) whose actors join the pool for the whole run, beside the
    # snapshots (pool_size counts snapshots only): past shipped agents, a frozen target (benchmarks/exploitability.py).
    league: list[str] = field(default_factory=list)
    # --- behaviour-cloning warm start from the heuristic agent
    bc_steps: int = 0
    bc_hands: int = 2000
    bc_batch: int = 512
    bc_lr: float = 1e-3
    bc_label_smoothing: float = 0.05  # spread over the legal actions: keeps some entropy for PPO
    # Every bc_eval_every steps the held-out imitation accuracy is measured and the weights with the best one are
    # kept (early stopping against overfitting a small set of hands); 0: the last step's weights, measured once.
    bc_eval_every: int = 0
    # float16 halves the memory of the cloned hands' observations and critic inputs (about 2,500 floats a decision
    # at 5 players; the values are multiples of 1/40, stored to within 2e-4): many more hands fit in memory.
    bc_dtype: str = "float32"
    # --- evaluation, checkpoints
    eval_every: int = 10  # iterations; 0 = only at the end
    eval_deals: int = 200  # duplicate deals per opponent (each played with both seatings)
    # "env": the matches through raw_env hand by hand; "tables": on the batched engine, the network deciding for all
    # its seats in one forward pass (rook_env.evaluation.tables; partnership, hands at 0-0): many more deals in the
    # same time, so selection by far smaller intervals
    eval_engine: str = "env"
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    # Checkpoint selection over the evaluated field: "min" (the weakest result over eval_opponents), "mean", or
    # one eval opponent's name (select on that result only).
    select_by: str = "min"
    eval_seed: int = 1_000  # seed of the checkpoint-selection deals (keep held-out evaluations on other seeds)
    final_eval_deals: int = 0  # > 0: evaluate the best checkpoint at the end on held-out deals
    final_eval_seed: int = 50_000_000
    # Playoff (0: off). The periodic evaluations' few deals can rank close checkpoints only roughly, so the
    # playoff_candidates best of them by periodic score are kept and played again at the end on playoff_deals
    # deals of playoff_seed (the same deals for all); the winner by select_by becomes agent.pt.
    playoff_candidates: int = 0
    playoff_deals: int = 1000
    playoff_seed: int = 3_000_000
    checkpoint_every: int = 10  # iterations
    progress: bool = True  # the progress line (rook_env.training.reporting); false: log lines
    ray: RayConfig = field(default_factory=RayConfig)  # collectors on a Ray cluster; see RayConfig
    exit: ExitConfig = field(default_factory=ExitConfig)  # expert iteration; see ExitConfig

    def check(self) -> PPOConfig:
        """Raise ValueError naming the first field whose value is out of range; returns the config."""
        for check in (check_numbers, check_run, check_network, check_opponents, check_evaluation, check_game,
                      check_ray, check_exit, check_prior, check_play_by):
            check(self)
        return self


Config = PPOConfig  # the name rook_env.training exports for PPO's config


def bad(cfg: PPOConfig, name: str, why: str) -> None:
    """Raise the ValueError of a bad field: its name, what is wrong and the value it has."""
    raise ValueError(f"config field {name!r}: {why} (got {getattr(cfg, name)!r})")


# Numeric fields by the range they must lie in (every float must also be finite).
POSITIVE = ("total_decisions", "num_envs", "rollout_decisions", "update_epochs", "minibatch_size", "torch_threads",
            "pool_size", "pool_every", "eval_deals", "playoff_deals", "bc_hands", "bc_batch", "lr", "bc_lr",
            "reward_scale", "clip_coef")
NON_NEGATIVE = ("seed", "eval_seed", "final_eval_seed", "playoff_candidates", "playoff_seed", "bc_steps", "bc_eval_every",
                "eval_every",
                "final_eval_deals", "checkpoint_every", "max_minutes", "target_kl", "ent_coef", "ent_coef_end",
                "vf_coef", "lr_end", "max_grad_norm", "max_hands", "heuristic_prior", "critic_warmup")
UNIT_INTERVAL = ("gamma", "gae_lambda")


def check_numbers(cfg: PPOConfig) -> None:
    """Finite floats; counts, rates and coefficients in their ranges."""
    for f in dataclasses.fields(cfg):
        if f.type == "float" and not math.isfinite(getattr(cfg, f.name)):
            bad(cfg, f.name, "must be a finite number")
    for name in POSITIVE:
        if getattr(cfg, name) <= 0:
            bad(cfg, name, "must be > 0")
    for name in NON_NEGATIVE:
        if getattr(cfg, name) < 0:
            bad(cfg, name, "must be >= 0" + (" (0: no limit)" if name == "max_hands" else ""))
    for name in UNIT_INTERVAL:
        if not 0 <= getattr(cfg, name) <= 1:
            bad(cfg, name, "must be in [0, 1]")
    if not 0 <= cfg.bc_label_smoothing < 1:
        bad(cfg, "bc_label_smoothing", "must be in [0, 1)")
    if cfg.bc_dtype not in ("float32", "float16"):
        bad(cfg, "bc_dtype", "must be float32 or float16")


def check_run(cfg: PPOConfig) -> None:
    """The run folder's name and the device."""
    if not cfg.name or os.sep in cfg.name or cfg.name in (".", ".."):
        bad(cfg, "name", "must be a folder name (not empty, no path separator)")
    if not (cfg.device in ("auto", "cpu") or cfg.device.startswith("cuda")):
        bad(cfg, "device", "must be auto, cpu or cuda[:N]")


def check_network(cfg: PPOConfig) -> None:
    """Layer widths of the actor and the critic."""
    if not cfg.hidden or min(cfg.hidden) <= 0:
        bad(cfg, "hidden", "must be a non-empty list of positive integers")
    if cfg.critic_hidden and min(cfg.critic_hidden) <= 0:
        bad(cfg, "critic_hidden", "must be a list of positive integers ([] = the same as hidden)")
    if cfg.grad_precision not in GRAD_PRECISIONS:
        bad(cfg, "grad_precision", f"must be one of {', '.join(GRAD_PRECISIONS)}")


def plays(spec: str, game: str) -> bool:
    """Whether the agent family of ``spec`` plays ``game`` (the agent registry's word)."""
    family = family_of(spec)
    return family is None or family.plays(game)


def check_play_by(cfg: PPOConfig) -> None:
    """Card play by search: a search spec without a base, in the partnership game, in this process."""
    if not cfg.play_by:
        return
    if not plays("search", cfg.game):
        bad(cfg, "play_by", f"the search agent does not play game={cfg.game!r}")
    if cfg.ray.collectors:
        bad(cfg, "play_by", "not available with Ray collectors (ray.collectors > 0)")
    try:
        play_by_agent(cfg.play_by, dict(cfg.env_flags), seed=0)
    except ValueError as exc:
        bad(cfg, "play_by", str(exc))


def play_by_agent(spec: str, flags: dict, seed: int | None, base: Any = None) -> Any:
    """The agent of a config's ``play_by`` (a search spec without a base, ``"search[samples=96,worlds=learned]"``):
    it plays the learner's card-play decisions; ``base`` (the network being trained, in evaluation) bids,
    discards and names trump for it. ``flags``: the partnership game's rule flags."""
    parsed = parse_search(spec)
    if parsed is None or parsed[0] != "search" or parsed[2]:
        raise ValueError(f"play_by must be a search spec without a base, e.g. 'search[samples=96,worlds=learned]' "
                         f"(the network being trained is its base), got {spec!r}")
    return SearchAgent(seed=seed, base=base, **parsed[1], **flags)  # the base's auction ("search" plays cards only)


def check_prior(cfg: PPOConfig) -> None:
    """A residual policy (heuristic_prior > 0) with what records no hints: cloning, expert iteration, the league
    (plain networks), Ray's collectors."""
    if not cfg.heuristic_prior:
        return
    for name, used in (("bc_steps", cfg.bc_steps > 0), ("league", bool(cfg.league)),
                       ("exit.source", bool(cfg.exit.source)), ("ray.collectors", cfg.ray.collectors > 0)):
        if used:
            raise ValueError(f"config field {name!r}: not available with heuristic_prior > 0 (a residual policy over "
                             f"the heuristic; got heuristic_prior={cfg.heuristic_prior!r}): set it to its default")


def check_opponents(cfg: PPOConfig) -> None:
    """The opponent mixes (known kinds, weights that can be normalised) and the league's checkpoints."""
    for name in ("opponent_mix", "opponent_mix_end"):
        mix = getattr(cfg, name)
        if name == "opponent_mix_end" and not mix:
            continue
        unknown = sorted(set(mix) - set(OPPONENT_KINDS))
        if unknown:
            bad(cfg, name, f"unknown opponent kind(s) {', '.join(unknown)}; known: {', '.join(OPPONENT_KINDS)}")
        if not all(math.isfinite(w) and w >= 0 for w in mix.values()):
            bad(cfg, name, "weights must be finite numbers >= 0")
        if sum(mix.values()) <= 0:
            bad(cfg, name, "weights must not all be 0")
    for path in cfg.league:
        if not str(path).endswith(".pt"):
            bad(cfg, "league", f"{path!r} is not a checkpoint path (*.pt)")


def check_evaluation(cfg: PPOConfig) -> None:
    """Evaluation opponents, the selection rule, and seeds that keep the playoff's deals fresh."""
    if not cfg.eval_opponents:
        bad(cfg, "eval_opponents", "must name at least one opponent")
    for opp in cfg.eval_opponents:
        if opp not in EVAL_NAMES and not opp.endswith(".pt"):
            bad(cfg, "eval_opponents", f"unknown opponent {opp!r}; use {', '.join(EVAL_NAMES)} or a checkpoint path")
    if len(set(cfg.eval_opponents)) != len(cfg.eval_opponents):
        bad(cfg, "eval_opponents", "names an opponent twice")
    for opp in cfg.eval_opponents:
        if opp in EVAL_NAMES and opp != "heuristic" and not plays(opp, cfg.game):
            bad(cfg, "eval_opponents", f"the {opp} agent does not play game={cfg.game!r}")
    if cfg.select_by not in ("min", "mean") and cfg.select_by not in cfg.eval_opponents:
        bad(cfg, "select_by", "must be min, mean or one of eval_opponents")
    if cfg.eval_engine not in ("env", "tables"):
        bad(cfg, "eval_engine", "must be env or tables")
    if cfg.eval_engine == "tables" and cfg.game in GAMES and "engine" not in get_game(cfg.game).match_options:
        bad(cfg, "eval_engine", f"game={cfg.game!r}'s match has no tables engine (env plays it)")
    if cfg.eval_engine == "tables" and cfg.env_flags.get("episode", "hand") == "game":
        bad(cfg, "eval_engine", "tables plays every hand at 0-0; a game-level run (episode=game) needs env")
    if cfg.playoff_candidates and cfg.playoff_seed in (cfg.eval_seed, cfg.final_eval_seed):
        bad(cfg, "playoff_seed", "must differ from eval_seed and final_eval_seed (its deals would not be fresh)")


def check_game(cfg: PPOConfig) -> None:
    """The game, its seat count and rule flags (checked by the game registry), and game episodes' hand limit."""
    if cfg.env_flags.get("episode") == "game" and cfg.max_hands <= 0:
        bad(cfg, "max_hands", "must be > 0 with env_flags.episode=game: early policies can play a game for ever "
            "(both scores sinking below zero)")
    if cfg.game not in GAMES:
        bad(cfg, "game", f"must be one of {', '.join(GAMES)}")
    if "game" in cfg.env_flags or "players" in cfg.env_flags:
        bad(cfg, "env_flags", "'game' and 'players' are config fields of their own, not rule flags")
    spec = get_game(cfg.game)
    if not spec.takes_players and cfg.players not in (0, *spec.players):
        bad(cfg, "players", f"{spec.title} has {' or '.join(map(str, spec.players))} seats (0: that)")
    try:
        game_config(game_flags(cfg))  # unknown rule flags / bad values raise, naming them
    except (TypeError, ValueError) as exc:
        raise ValueError(f"config field 'env_flags': {exc}") from None


def check_ray(cfg: PPOConfig) -> None:
    """The ``ray`` section: counts and resources in range."""
    r = cfg.ray
    for name, ok, why in (("collectors", r.collectors >= 0, "must be >= 0 (0: collect in-process)"),
                          ("tables", r.tables >= 0, "must be >= 0 (0: num_envs)"),
                          ("num_cpus", math.isfinite(r.num_cpus) and r.num_cpus >= 0, "must be a finite number >= 0"),
                          ("max_lag", r.max_lag >= 1, "must be >= 1 (a collector always plays while the learner "
                                                      "updates: one update of lag at least)")):
        if not ok:
            raise ValueError(f"config field 'ray.{name}': {why} (got {getattr(r, name)!r})")
    for key, amount in r.resources.items():
        if not (math.isfinite(amount) and amount > 0):
            raise ValueError(f"config field 'ray.resources': {key!r} must be a finite amount > 0 (got {amount!r})")


EXIT_SOURCES = ("", "offline", "online")


def check_exit(cfg: PPOConfig) -> None:
    """The ``exit`` section: a known source, its labels folder, the loss's numbers in range."""
    e = cfg.exit

    def fail(name: str, why: str) -> None:
        raise ValueError(f"config field 'exit.{name}': {why} (got {getattr(e, name)!r})")

    if e.source not in EXIT_SOURCES:
        fail("source", "must be '' (off), offline or online")
    if not e.source:
        return
    if not plays("search", cfg.game):
        fail("source", f"search labels come from the search agent, which does not play game={cfg.game!r}")
    if (e.source == "offline" or e.labels) and not os.path.isdir(e.labels):
        fail("labels", "must be the folder of search_labels shards (shard_*.npz)"
             + (" (offline labels need one)" if e.source == "offline" else ""))
    for name in ("coef", "temperature"):
        if not (math.isfinite(getattr(e, name)) and getattr(e, name) > 0):
            fail(name, "must be a finite number > 0")
    for name in ("min_gap", "kl_coef"):
        if not (math.isfinite(getattr(e, name)) and getattr(e, name) >= 0):
            fail(name, "must be a finite number >= 0")
    if e.kl_coef > 0 and not cfg.init_checkpoint:
        fail("kl_coef", "holds the policy at the initial network: it needs init_checkpoint")
    if e.kl_coef > 0 and e.min_gap <= 0:
        fail("kl_coef", "applies to the decisions exit.min_gap leaves out: set exit.min_gap > 0 too")
    for name in ("batch", "buffer", "samples", "tables"):
        if getattr(e, name) <= 0:
            fail(name, "must be > 0")
    if e.seed < 0:
        fail("seed", "must be >= 0")
    if e.worlds not in ("uniform", "learned") and not (e.worlds.endswith(".npz") and os.path.isfile(e.worlds)):
        fail("worlds", "must be uniform, learned or the path of a holder model .npz that exists")
    if e.batch > e.buffer:
        fail("batch", f"must be at most exit.buffer ({e.buffer})")


def game_flags(cfg: PPOConfig) -> dict[str, Any]:
    """The rule flags of the config's table with its ``game`` key (rook_env.agents.registry.game_config)."""
    return {**cfg.env_flags, "game": cfg.game, **({"players": cfg.players} if cfg.players else {})}


def game_of(cfg: PPOConfig) -> Game:
    """The game a run plays: the registry's spec bound to the config's table (players resolved)."""
    flags = game_flags(cfg)
    return get_game(flags.pop("game")).bind(**flags)


ALGORITHMS: dict[str, type] = {"ppo": PPOConfig, "label_rounds": LabelRoundsConfig}  # the config class of each


def sections(cls: type) -> dict[str, type]:
    """The fields of a config class that are dataclasses of their own (PPO's ``ray`` and ``exit``), by name."""
    return {f.name: type(f.default_factory()) for f in dataclasses.fields(cls)
            if f.default_factory is not dataclasses.MISSING and dataclasses.is_dataclass(f.default_factory())}


def make_train_config(config_path: str | None = None, overrides: Sequence[str] = (),
                      base: dict | None = None) -> PPOConfig | LabelRoundsConfig:
    """Defaults <- ``base`` (a resumed checkpoint's config) <- YAML file <- ``field=value`` overrides, in the config
    class of the ``algorithm`` they name (:data:`ALGORITHMS`; PPO's when none does).

    A dotted override (``opponent_mix.heuristic=0.5``) sets one entry of a mapping; a whole value
    (``opponent_mix={self: 1}``, or a mapping in the YAML file) replaces the field. A section (``ray``, ``exit``) is
    set field by field: ``ray: {collectors: 2}`` leaves its other fields as they were. ``base`` sets only the fields
    the class has (a checkpoint may come from a config with others). Errors are ValueErrors naming the field (or
    the file and line of a YAML syntax error).
    """
    data = read_config_file(config_path) if config_path else {}
    parsed = parse_overrides(overrides)
    algorithm = parsed.get("algorithm", data.get("algorithm", (base or {}).get("algorithm", "ppo")))
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ValueError(f"config field 'algorithm': must be one of {', '.join(ALGORITHMS)} (got {algorithm!r})")
    cls = ALGORITHMS[algorithm]
    cfg = OmegaConf.structured(cls)
    if base:
        apply(cfg, cls, known_fields(cls, base), "the checkpoint")
    apply(cfg, cls, data, config_path or "")
    apply(cfg, cls, parsed, "the command line")
    try:
        return OmegaConf.to_object(cfg).check()
    except OmegaConfBaseException as exc:  # e.g. an unresolvable ${interpolation}
        raise ValueError(f"config field {exc.full_key!r}: {str(exc).splitlines()[0]}") from None


def read_config_file(path: str) -> dict:
    """A YAML config file as a mapping; a ValueError names a syntax error's line or a file that is no mapping."""
    try:
        data = OmegaConf.to_container(OmegaConf.load(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ValueError(f"{path}{where}: malformed YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a config file must be a YAML mapping of field: value")  # noqa: TRY004
    return data


def parse_overrides(overrides: Sequence[str]) -> dict:
    """The command line's ``field=value`` words as a mapping, each value read as YAML."""
    parsed = {}
    for item in overrides:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"override {item!r} must look like field=value")
        try:
            parsed[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            raise ValueError(f"override {item!r}: the value is not valid YAML") from None
    return parsed


def known_fields(cls: type, items: dict) -> dict:
    """The entries of ``items`` that name fields of ``cls`` (within its sections too)."""
    names, inner = {f.name for f in dataclasses.fields(cls)}, sections(cls)
    return {k: known_fields(inner[k], v) if k in inner and isinstance(v, dict) else v
            for k, v in items.items() if k in names}


def apply(cfg: Any, cls: type, items: dict, source: str) -> None:
    """Set the fields ``items`` names in the OmegaConf config ``cfg`` of ``cls``; a section field by field. A
    ValueError names a field that ``cls`` lacks or a value of the wrong type, and ``source``."""
    inner = sections(cls)
    for key, value in items.items():
        if key in inner and isinstance(value, dict):  # a section is set field by field (a dataclass)
            apply(cfg, cls, {f"{key}.{k}": v for k, v in value.items()}, source)
            continue
        try:
            OmegaConf.update(cfg, str(key), value, merge=False)
        except OmegaConfBaseException as exc:
            what = "unknown config field" if "' not in '" in str(exc) else "config field"
            raise ValueError(f"{what} {exc.full_key!r} (from {source}): {str(exc).splitlines()[0]}") from None
        except ValueError:  # OmegaConf: a dotted key below a list or a number
            raise ValueError(f"config field {key!r} (from {source}): no such entry") from None


# ============================================================================================ schedules
def linear(start: float, end: float, progress: float) -> float:
    """``start`` at progress 0, ``end`` at 1 and after: the learning rate's, the entropy coefficient's and the
    opponent mix's schedules (progress = decisions / total_decisions)."""
    return start + (end - start) * min(max(progress, 0.0), 1.0)


def mix_at(cfg: PPOConfig, progress: float) -> dict[str, float]:
    """The opponent mix (normalised) at a training progress in [0, 1]."""
    end = cfg.opponent_mix_end or cfg.opponent_mix
    w = {k: linear(float(cfg.opponent_mix.get(k, 0.0)), float(end.get(k, 0.0)), progress) for k in OPPONENT_KINDS}
    tot = sum(w.values())
    return {k: v / tot for k, v in w.items()}
