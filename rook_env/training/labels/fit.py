"""The fit of counterfactual labels (:mod:`.counterfactual`): the policy improvement step of rollouts.

**Over the heuristic** (call-your-partner labels, no ``init``). The labels give, for decisions of hands the
heuristic played, the acting seat's result of every legal action with the heuristic playing on, on the true deal.
The actor of an :class:`~rook_env.agents.learned.model.ActorCritic` is regressed on the advantage over the
heuristic's action, ``(q[a] - q[hint]) / scale`` for every legal action: its output at ``a`` minus its output at the
heuristic's action (:func:`relative`) is fitted by mean squared error (the average over the deals that fit an
observation is the heuristic's advantage ``A(obs, a)``, in ``scale`` points per logit), from the seat's
observation alone. The checkpoint is a residual policy (``heuristic_prior = margin / scale``): its logits are the
predicted advantages plus ``margin / scale`` on the heuristic's action, so it plays the heuristic's action unless
another action is predicted to gain more than ``margin`` points, and ``make_agent("ppo:<path>")`` plays it with the
heuristic beside (as any residual checkpoint). The critic is regressed on the hand's result (``outcome *
reward_scale``), so PPO can start from the checkpoint (``init_checkpoint``). The margin is the one with the largest
validation gain at the best epoch, unless ``margin`` fixes it.

**Over a network** (``init``, the partnership labels, where the *hint* is the network's own greedy action): the
fitted model is the network itself, its actor fine-tuned from ``init`` so that its outputs relative to the hint are
the advantages less the margin, ``(q[a] - q[hint] - margin) / scale`` for every other legal action. Its greedy
action is then the action predicted to gain most over what the network played, the network's own unless another
gains more than ``margin`` points: a plain network (``make_agent("ppo:<path>")`` plays it alone), the improved
policy of one step. The margin is trained in, so it is given, and the validation report's margins are added on top
of it. The critic is kept as it was.

Hands are split into a training and a validation share (by deal). Each epoch logs, on the validation decisions, the
mean squared error against predicting no advantage anywhere, and for each margin the share of decisions where the
policy leaves the hint and what that gained on those deals (the labels know every legal action's value, so this is
an exact one-decision estimate): ``gain/hand`` is that gain per hand and seat, from each label's chance of a label
(its ``prob``). The checkpoint keeps the epoch of the lowest validation error. ``labels`` takes several folders,
read together (labels against different opponents, say).

    rook-train fit --labels runs/cp_labels --out runs/cp_rollout.pt
    rook-train fit --labels runs/net_labels runs/net_labels_h --out runs/net_fit.pt \\
        --init rook_env/agents/checkpoints/ppo_default.pt --margin 10 --lr 1e-4
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from rook_env.agents.learned.model import ActorCritic, load_checkpoint, model_from_checkpoint

from ..checkpoints import save_checkpoint, seed_everything
from ..config import make_train_config
from ..expert import read_shards, shard_paths
from .counterfactual import HeuristicPlayOut, NetworkPlayOut

__all__ = ["FitConfig", "advantage_targets", "fit", "margin_report", "phase_report", "relative"]


@dataclass
class FitConfig:
    labels: str | list[str]  # folder(s) of counterfactual label shards, read together
    out: str  # the checkpoint to write
    init: str = ""  # a network checkpoint to fine-tune (partnership labels); "" = a residual over the heuristic
    players: int = 5
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    hint_input: bool = True  # the actor reads the heuristic's action beside the observation
    epochs: int = 12
    batch: int = 256
    lr: float = 3e-4
    weight_decay: float = 1e-5
    scale: float = 10.0  # points per logit of the advantage head
    margin: float = -1.0  # points a predicted gain must exceed to leave the heuristic; < 0: chosen on validation
    margins: list[float] = field(default_factory=lambda: [0.0, 2.0, 5.0, 10.0, 15.0, 20.0, 30.0])
    # Phases (the labels' game's PHASE_NAMES) where the policy may leave the heuristic; [] = all. In the
    # others every alternative is fitted at -defer points (the policy keeps the heuristic's action there): for
    # phases whose labels are too few for their many actions (a discard or a call of one card among dozens).
    phases: list[str] = field(default_factory=list)
    defer: float = 100.0
    val_share: float = 0.1
    label_prob: float = 0.25  # the labels' share of decisions (the per-hand gain only; a shard's ``prob`` first)
    reward_scale: float = 0.01
    seed: int = 0
    threads: int = 2

    def check(self) -> None:
        if not self.label_folders():
            raise ValueError("labels: give at least one folder of label shards")
        for name in ("epochs", "batch", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("lr", "scale", "label_prob"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if self.init and self.margin < 0:
            raise ValueError("with init the margin is trained into the network: give margin >= 0 points")
        unknown = [p for p in self.phases if p not in phase_names(self.init)]
        if unknown:
            raise ValueError(f"phases: unknown phase(s) {', '.join(map(repr, unknown))}; the phases are "
                             f"{', '.join(phase_names(self.init))}")
        if not 0.0 < self.val_share < 1.0:
            raise ValueError(f"val_share must be in (0, 1), got {self.val_share!r}")

    def label_folders(self) -> list[str]:
        """The label folders, one or several (labels against different opponents fitted together)."""
        return [self.labels] if isinstance(self.labels, str) else list(self.labels)


def phase_names(init: str) -> tuple[str, ...]:
    """The phase names of the labels' game: a network's labels (partnership) with a network to fine-tune, else the
    heuristic's (call-your-partner Rook)."""
    return (NetworkPlayOut if init else HeuristicPlayOut).phases()


def advantage_targets(q: np.ndarray, hint: np.ndarray) -> np.ndarray:
    """``q[a] - q[hint]`` per row (NaN where ``q`` is: actions not tried); 0 at the hint."""
    return q - q[np.arange(len(q)), hint][:, None]


def relative(out: torch.Tensor, hint: torch.Tensor) -> torch.Tensor:
    """The network's outputs minus each row's output at the heuristic's action: what the policy compares.

    The fit regresses these differences (not the outputs) on the advantages, so the network need not know which
    action the heuristic picks: any ``Q(obs, a) + c(obs)`` fits, and Q is a plainer function of the observation
    than an advantage over the heuristic's choice."""
    return out - out.gather(1, hint[:, None])


def margin_report(pred: np.ndarray, adv: np.ndarray, hint: np.ndarray, margins: Sequence[float],
                  per_hand: float, weight: np.ndarray | None = None) -> list[dict]:
    """For each margin (points): the share of decisions where ``argmax(pred + margin * [a == hint])`` over the
    tried actions leaves the heuristic, the mean true gain of that choice per decision (from ``adv``, the labels'
    advantages in points) and the same per hand and seat (times ``per_hand``, decisions per hand and seat).
    ``weight``: each label's weight in the per-hand gain (1 / its chance of a label, where phases had different
    shares); None: equal."""
    rows = np.arange(len(hint))
    tried = np.isfinite(adv)
    out = []
    for m in margins:
        score = np.where(tried, pred, -np.inf)
        score[rows, hint] += m
        pick = score.argmax(1)
        gain = adv[rows, pick]
        out.append({"margin": float(m), "leaves": float((pick != hint).mean()), "gain": float(gain.mean()),
                    "gain_per_hand": float(np.average(gain, weights=weight) * per_hand)})
    return out


def phase_report(pred: np.ndarray, adv: np.ndarray, hint: np.ndarray, phase: np.ndarray, margin: float,
                 per_hand: float, names: Sequence[str], weight: np.ndarray | None = None) -> dict[str, dict]:
    """:func:`margin_report` at one margin, per phase (``gain_per_hand``: that phase's share of the whole);
    ``pred``: the predicted advantages (points), ``names``: the game's phase names, ``weight``: margin_report's."""
    out = {}
    weight = np.ones(len(phase)) if weight is None else weight
    for p in np.unique(phase):
        sel = phase == p
        r = margin_report(pred[sel], adv[sel], hint[sel], [margin], per_hand * weight[sel].sum() / weight.sum())[0]
        out[names[p]] = {"decisions": int(sel.sum()), **{k: r[k] for k in ("leaves", "gain", "gain_per_hand")}}
    return out


def _split(hands: np.ndarray, val_share: float, seed: int) -> np.ndarray:
    """A validation mask by deal: every decision of a hand falls on one side."""
    uniq = np.unique(hands)
    if len(uniq) < 2:
        raise ValueError(f"the labels hold {len(uniq)} deal(s): the fit needs at least 2 (training and validation)")
    rng = np.random.default_rng(seed)
    val = rng.choice(uniq, size=max(1, round(len(uniq) * val_share)), replace=False)
    return np.isin(hands, val)


@dataclass
class FitData:
    """The labels as the fit reads them: tensors of the observations, the targets (advantages less the margin, in
    ``scale`` points; 0 where not tried), which actions were tried, the critic's targets and the hints; the true
    advantages (points) for the margin report; the training and validation rows; each label's weight and the
    decisions with a choice per hand and seat."""

    obs: torch.Tensor
    target: torch.Tensor
    tried: torch.Tensor
    value: torch.Tensor
    hint: torch.Tensor
    hints: np.ndarray
    true_adv: np.ndarray
    phase: np.ndarray
    tr: np.ndarray
    va: np.ndarray
    weight: np.ndarray
    per_hand: float
    n_actions: int


def read_labels(cfg: FitConfig, init: dict | None, log: Callable[[str], None]) -> FitData:
    """The shards of ``cfg.labels`` as :class:`FitData` (a shard without hints, or with values for other actions
    than the legal ones, is named)."""
    folders = cfg.label_folders()
    data = read_shards([path for folder in folders for path in shard_paths(folder)])
    where = ", ".join(map(repr, folders))
    for key in ("hint", "mask"):
        if key not in data:
            raise ValueError(f"label shards in {where} lack {key!r}: not counterfactual labels")
    hints = data["hint"].astype(np.int64)
    adv = advantage_targets(data["q"], hints)
    if not np.array_equal(np.isfinite(adv), data["mask"]):
        raise ValueError(f"label shards in {where}: values must be given for exactly the legal actions")
    true_adv = adv.copy()  # what leaving the hint really gained: the margin report's measure
    if cfg.init:  # the margin trained in: every other action's target is its advantage less the margin
        adv = adv - cfg.margin
        adv[np.arange(len(adv)), hints] = 0.0
    if cfg.phases:
        names = phase_names(cfg.init)
        deferred = ~np.isin(data["phase"], [names.index(p) for p in cfg.phases])
        # A residual's actor is fresh: in a phase without labels its outputs are untrained, and it would leave the
        # heuristic there at random; the phases it keeps the heuristic in need labels to be held there.
        present = set(np.unique(data["phase"]).tolist())
        unheld = [p for i, p in enumerate(names) if p not in cfg.phases and p != "over" and i not in present]
        if unheld and not cfg.init:
            raise ValueError(f"label shards in {where} hold no decision of the phases {', '.join(unheld)}: a residual "
                             f"fitted to phases {', '.join(cfg.phases)} keeps the heuristic's action in the others "
                             "only where it is fitted to (label them, e.g. --phase-label-prob "
                             f"{' '.join(p + '=0.1' for p in unheld)})")
        adv[deferred] = np.where(np.isfinite(adv[deferred]), -cfg.defer, np.nan)
        adv[deferred, hints[deferred]] = 0.0
    val = _split(data["hand"], cfg.val_share, cfg.seed)
    tr, va = np.flatnonzero(~val), np.flatnonzero(val)
    n_hands = len(np.unique(data["hand"]))
    seats = 4 if init is not None else cfg.players
    # each label stands for 1 / (its chance of a label) decisions with a choice
    weight = 1.0 / data["prob"].astype(np.float64) if "prob" in data else np.full(len(hints), 1.0 / cfg.label_prob)
    per_hand = weight.sum() / n_hands / seats
    log(f"{len(hints)} labelled decisions from {n_hands} hands; "
        f"{len(tr)} train, {len(va)} validation; {per_hand:.1f} decisions with a choice per hand and seat")
    return FitData(torch.from_numpy(data["obs"]), torch.from_numpy(np.nan_to_num(adv / cfg.scale)),
                   torch.from_numpy(np.isfinite(adv)), torch.from_numpy(data["outcome"] * cfg.reward_scale),
                   torch.from_numpy(hints), hints, true_adv, data["phase"], tr, va, weight, per_hand, adv.shape[1])


class Fitter:
    """The model being fitted and its optimizer: the network of ``init`` (its actor trained, the critic kept) or a
    fresh residual actor-critic over the heuristic (actor and critic trained, the hint an input)."""

    def __init__(self, cfg: FitConfig, init: dict | None, d: FitData) -> None:
        self.cfg, self.d = cfg, d
        if init is not None:
            self.model = model_from_checkpoint(init, cfg.init, obs_dim=d.obs.shape[1])
            self.hint_in = None
            params = list(self.model.actor.parameters())  # the critic is kept (its input may be the full state)
        else:
            self.model = ActorCritic(d.obs.shape[1], d.n_actions, cfg.hidden, heuristic_prior=1.0,
                                     hint_input=cfg.hint_input)
            self.hint_in = d.hint
            params = list(self.model.parameters())
        self.opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.zero_mse = float((d.target[d.va][d.tried[d.va]] ** 2).mean())

    def actor(self, rows: torch.Tensor | np.ndarray) -> torch.Tensor:
        return self.model.actor_logits(self.d.obs[rows], None if self.hint_in is None else self.hint_in[rows])

    def step(self, b: torch.Tensor) -> None:
        """One optimizer step on the rows ``b``."""
        d = self.d
        err = (relative(self.actor(b), d.hint[b]) - d.target[b]) ** 2
        loss = (err * d.tried[b]).sum() / d.tried[b].sum()
        if self.hint_in is not None:
            loss = loss + ((self.model.critic(d.obs[b]).squeeze(-1) - d.value[b]) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def evaluate(self) -> tuple[float, np.ndarray]:
        """The validation MSE and the predicted advantages (points) of the validation rows."""
        d, va = self.d, self.d.va
        self.model.eval()
        with torch.no_grad():
            pred = torch.cat([self.actor(va[i:i + 4096]) for i in range(0, len(va), 4096)])
        self.model.train()
        pred = relative(pred, d.hint[va])
        mse = float(((pred - d.target[va]) ** 2)[d.tried[va]].mean())
        return mse, pred.numpy() * self.cfg.scale


def train_epochs(cfg: FitConfig, f: Fitter, log: Callable[[str], None]) -> tuple[dict, list[dict]]:
    """``epochs`` passes over the training rows, each evaluated on the validation rows; the best epoch (lowest
    validation MSE: its weights, its margin report) and the history."""
    d = f.d
    best: dict = {"mse": float("inf")}
    history = []
    rng = np.random.default_rng(cfg.seed)
    t0 = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        perm = rng.permutation(d.tr)
        for i in range(0, len(perm), cfg.batch):
            f.step(torch.from_numpy(perm[i:i + cfg.batch]))
        mse, pred = f.evaluate()
        report = margin_report(pred, d.true_adv[d.va], d.hints[d.va], cfg.margins, d.per_hand, d.weight[d.va])
        history.append({"epoch": epoch, "val_mse": mse, "zero_mse": f.zero_mse, "margins": report})
        log(f"epoch {epoch}: validation MSE {mse:.4f} (no advantage anywhere: {f.zero_mse:.4f}), "
            f"{time.perf_counter() - t0:.0f}s; " + "; ".join(
                f"margin {r['margin']:g}: leaves {100 * r['leaves']:.1f}%, gain/hand {r['gain_per_hand']:+.2f}"
                for r in report))
        if mse < best["mse"]:
            best = {"mse": mse, "epoch": epoch, "state": {k: v.clone() for k, v in f.model.state_dict().items()},
                    "margins": report}
    return best, history


def save_fitted(cfg: FitConfig, init: dict | None, f: Fitter, state: dict, margin: float,
                log: Callable[[str], None]) -> None:
    """Write the checkpoint: the fine-tuned network (with its training config and the fit in its history), or the
    residual policy over the heuristic (``heuristic_prior = margin / scale`` logits on the heuristic's action)."""
    if init is not None:
        train_cfg = make_train_config(None, ["name=rollout_fit", f"init_checkpoint={cfg.init}"], base=init["config"])
        save_checkpoint(cfg.out, f.model, None, train_cfg, state, None, [], full=False)
        log(f"wrote {cfg.out}: epoch {state['iteration']}, margin {margin:g} points trained in")
        return
    obs_dim = f.d.obs.shape[1]
    residual = ActorCritic(obs_dim, f.d.n_actions, cfg.hidden, heuristic_prior=max(margin, 1e-3) / cfg.scale,
                           hint_input=cfg.hint_input)
    residual.load_state_dict(f.model.state_dict())
    train_cfg = make_train_config(None, [f"game={HeuristicPlayOut.game}", f"players={cfg.players}",
                                         f"hidden={list(cfg.hidden)}", "central_critic=false",
                                         f"heuristic_prior={residual.heuristic_prior}",
                                         f"reward_scale={cfg.reward_scale}", f"seed={cfg.seed}", "name=rollout_fit"])
    save_checkpoint(cfg.out, residual, None, train_cfg, state, None, [], full=False)
    log(f"wrote {cfg.out}: epoch {state['iteration']}, margin {margin:g} points (heuristic_prior "
        f"{residual.heuristic_prior:g})")


def fit(cfg: FitConfig, log: Callable[[str], None] = print) -> dict:
    """Fit, write the checkpoint, return the summary (validation curve, margin chosen)."""
    cfg.check()
    seed_everything(cfg.seed)
    torch.set_num_threads(cfg.threads)
    init = load_checkpoint(cfg.init) if cfg.init else None
    if init is not None and init.get("game", NetworkPlayOut.game) != NetworkPlayOut.game:
        raise ValueError(f"init {cfg.init!r} is a {init['game']!r} network; fitting over a network takes the "
                         f"{NetworkPlayOut.game} game's labels")
    d = read_labels(cfg, init, log)
    f = Fitter(cfg, init, d)
    t0 = time.perf_counter()
    best, history = train_epochs(cfg, f, log)
    f.model.load_state_dict(best["state"])
    _, pred = f.evaluate()
    margin = cfg.margin if cfg.margin >= 0 else max(best["margins"], key=lambda r: r["gain"])["margin"]
    by_phase = phase_report(pred, d.true_adv[d.va], d.hints[d.va], d.phase[d.va], 0.0 if init is not None else margin,
                            d.per_hand, phase_names(cfg.init), d.weight[d.va])
    log(f"margin {margin:g} at epoch {best['epoch']}, by phase: " + "; ".join(
        f"{name} {r['decisions']} decisions, leaves {100 * r['leaves']:.1f}%, gain/hand {r['gain_per_hand']:+.2f}"
        for name, r in by_phase.items()))
    summary = {"fit": dataclasses.asdict(cfg), "best_epoch": best["epoch"], "margin": margin, "by_phase": by_phase,
               "val_mse": best["mse"], "zero_mse": f.zero_mse, "history": history}
    state = {"iteration": best["epoch"], "decisions": len(d.tr), "wall_seconds": time.perf_counter() - t0,
             "history": [{"rollout_fit": summary}]}
    save_fitted(cfg, init, f, state, margin, log)
    return summary
