"""Fit a residual policy over the heuristic to counterfactual labels: the policy improvement step of rollouts.

The labels (:mod:`rook_env.training.rollout_labels`) give, for decisions of hands the heuristic played, the acting
seat's result of every legal action with the heuristic playing on, on the true deal. The actor of an
:class:`~rook_env.agents.learned.model.ActorCritic` is regressed on the advantage over the heuristic's action,
``(q[a] - q[hint]) / scale`` for every legal action: its output at ``a`` minus its output at the heuristic's action
(:func:`relative`) is fitted by mean squared error (the average over the deals that fit an observation is the
heuristic's advantage ``A(obs, a)``, in ``scale`` points per logit), from the seat's observation alone. The checkpoint is a residual policy (``heuristic_prior = margin / scale``): its logits are the predicted
advantages plus ``margin / scale`` on the heuristic's action, so it plays the heuristic's action unless another
action is predicted to gain more than ``margin`` points, and ``make_agent("ppo:<path>")`` / ``PPOAgent.load`` play
it with the heuristic beside (as any residual checkpoint). The critic is regressed on the hand's result
(``outcome * reward_scale``), so PPO can start from the checkpoint (``init_checkpoint``).

Hands are split into a training and a validation share (by deal). Each epoch logs, on the validation decisions, the
mean squared error against predicting no advantage anywhere (the heuristic), and for each margin the share of
decisions where the policy leaves the heuristic and what that gained on those deals (the labels know every legal
action's value, so this is an exact one-decision estimate): ``gain/hand`` is that gain per hand and seat, from the
decisions' ``label_prob``. The margin of the checkpoint is the one with the largest validation gain at the best
epoch, unless ``--margin`` fixes it; the checkpoint keeps the epoch of the lowest validation error.

    python -m rook_env.training.residual_fit --labels runs/cp_labels --out runs/cp_rollout.pt

**Over a network** (``--init``, the labels of :mod:`rook_env.training.network_labels`, where the *hint* is the
network's own greedy action): the fitted model is the network itself, its actor fine-tuned from ``init`` so that
its outputs relative to the hint are the advantages less the margin, ``(q[a] - q[hint] - margin) / scale`` for
every other legal action. Its greedy action is then the action predicted to gain most over what the network played,
the network's own unless another gains more than ``margin`` points: a plain network (no heuristic beside it,
``make_agent("ppo:<path>")`` plays it alone), the improved policy of one step. The margin is trained in, so it is
given (``--margin``), and the validation report's margins are added on top of it. The critic is kept as it was.

    python -m rook_env.training.residual_fit --labels runs/net_labels runs/net_labels_h --out runs/net_fit.pt \
        --init rook_env/agents/checkpoints/ppo_v2.pt --margin 10 --lr 1e-4

``--labels`` takes several folders, read together (labels against different opponents, say).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from rook_env.agents.learned.model import ActorCritic, load_checkpoint, model_from_checkpoint

from .checkpoints import save_checkpoint, seed_everything
from .config import make_train_config
from .expert import read_shards, shard_paths

__all__ = ["FitConfig", "advantage_targets", "fit", "margin_report", "main", "phase_report", "relative"]


@dataclass
class FitConfig:
    labels: str | list[str]  # folder(s) of rollout_labels (or network_labels) shards, read together
    out: str  # the checkpoint to write
    init: str = ""  # a network checkpoint to fine-tune (labels of network_labels); "" = a residual over the heuristic
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
    # Phases (rook_env.call_partner.rules.PHASE_NAMES) where the policy may leave the heuristic; [] = all. In the
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
    """The phase names of the labels' game: the partnership game's with a network to fine-tune, else
    call-your-partner Rook's."""
    if init:
        from rook_env.rules import PHASE_NAMES
    else:
        from rook_env.call_partner.rules import PHASE_NAMES
    return PHASE_NAMES


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
    val = rng.choice(uniq, size=max(1, int(round(len(uniq) * val_share))), replace=False)
    return np.isin(hands, val)


def fit(cfg: FitConfig, log=print) -> dict:
    """Fit, write the checkpoint, return the summary (validation curve, margin chosen)."""
    cfg.check()
    seed_everything(cfg.seed)
    torch.set_num_threads(cfg.threads)
    init = load_checkpoint(cfg.init) if cfg.init else None
    if init is not None and init.get("game", "partnership") != "partnership":
        raise ValueError(f"init {cfg.init!r} is a {init['game']!r} network; fitting over a network takes the "
                         "partnership game's labels (network_labels)")
    folders = cfg.label_folders()
    data = read_shards([path for folder in folders for path in shard_paths(folder)])
    where = ", ".join(map(repr, folders))
    for key in ("hint", "mask"):
        if key not in data:
            raise ValueError(f"label shards in {where} lack {key!r}: not written by rollout_labels")
    hints = data["hint"].astype(np.int64)
    adv = advantage_targets(data["q"], hints)
    if not np.array_equal(np.isfinite(adv), data["mask"]):
        raise ValueError(f"label shards in {where}: values must be given for exactly the legal actions")
    true_adv = adv.copy()  # what leaving the heuristic really gained: the margin report's measure
    PHASE_NAMES = phase_names(cfg.init)
    if cfg.init:  # the margin trained in: every other action's target is its advantage less the margin
        adv = adv - cfg.margin
        adv[np.arange(len(adv)), hints] = 0.0
    if cfg.phases:
        deferred = ~np.isin(data["phase"], [PHASE_NAMES.index(p) for p in cfg.phases])
        adv[deferred] = np.where(np.isfinite(adv[deferred]), -cfg.defer, np.nan)
        adv[deferred, hints[deferred]] = 0.0
    val = _split(data["hand"], cfg.val_share, cfg.seed)
    obs = torch.from_numpy(data["obs"])
    target = torch.from_numpy(np.nan_to_num(adv / cfg.scale))
    tried = torch.from_numpy(np.isfinite(adv))
    value = torch.from_numpy(data["outcome"] * cfg.reward_scale)
    hint = torch.from_numpy(hints)
    tr, va = np.flatnonzero(~val), np.flatnonzero(val)
    n_hands = len(np.unique(data["hand"]))
    seats = 4 if init is not None else cfg.players
    # each label stands for 1 / (its chance of a label) decisions with a choice
    weight = 1.0 / data["prob"].astype(np.float64) if "prob" in data else np.full(len(hints), 1.0 / cfg.label_prob)
    per_hand = weight.sum() / n_hands / seats
    log(f"{len(hints)} labelled decisions from {n_hands} hands; "
        f"{len(tr)} train, {len(va)} validation; {per_hand:.1f} decisions with a choice per hand and seat")

    if init is not None:
        model = model_from_checkpoint(init, cfg.init, obs_dim=obs.shape[1])
        hint_in = None
        params = list(model.actor.parameters())  # the critic is kept as it was (its input may be the full state)
    else:
        model = ActorCritic(obs.shape[1], adv.shape[1], cfg.hidden, heuristic_prior=1.0, hint_input=cfg.hint_input)
        hint_in = hint
        params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)

    def actor(rows: torch.Tensor | np.ndarray) -> torch.Tensor:
        return model.actor_logits(obs[rows], None if hint_in is None else hint_in[rows])
    zero_mse = float((target[va][tried[va]] ** 2).mean())

    def evaluate() -> tuple[float, np.ndarray]:
        model.eval()
        with torch.no_grad():
            pred = torch.cat([actor(va[i:i + 4096]) for i in range(0, len(va), 4096)])
        model.train()
        pred = relative(pred, hint[va])
        mse = float(((pred - target[va]) ** 2)[tried[va]].mean())
        return mse, pred.numpy() * cfg.scale

    best = {"mse": float("inf")}
    history = []
    rng = np.random.default_rng(cfg.seed)
    t0 = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        perm = rng.permutation(tr)
        for i in range(0, len(perm), cfg.batch):
            b = torch.from_numpy(perm[i:i + cfg.batch])
            err = (relative(actor(b), hint[b]) - target[b]) ** 2
            loss = (err * tried[b]).sum() / tried[b].sum()
            if init is None:
                loss = loss + ((model.critic(obs[b]).squeeze(-1) - value[b]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        mse, pred = evaluate()
        report = margin_report(pred, true_adv[va], hints[va], cfg.margins, per_hand, weight[va])
        history.append({"epoch": epoch, "val_mse": mse, "zero_mse": zero_mse, "margins": report})
        log(f"epoch {epoch}: validation MSE {mse:.4f} (no advantage anywhere: {zero_mse:.4f}), "
            f"{time.perf_counter() - t0:.0f}s; " + "; ".join(
                f"margin {r['margin']:g}: leaves {100 * r['leaves']:.1f}%, gain/hand {r['gain_per_hand']:+.2f}"
                for r in report))
        if mse < best["mse"]:
            best = {"mse": mse, "epoch": epoch, "state": {k: v.clone() for k, v in model.state_dict().items()},
                    "margins": report}
    model.load_state_dict(best["state"])
    _, pred = evaluate()
    margin = cfg.margin if cfg.margin >= 0 else max(best["margins"], key=lambda r: r["gain"])["margin"]
    by_phase = phase_report(pred, true_adv[va], hints[va], data["phase"][va], 0.0 if init is not None else margin,
                            per_hand, PHASE_NAMES, weight[va])
    log(f"margin {margin:g} at epoch {best['epoch']}, by phase: " + "; ".join(
        f"{name} {r['decisions']} decisions, leaves {100 * r['leaves']:.1f}%, gain/hand {r['gain_per_hand']:+.2f}"
        for name, r in by_phase.items()))
    summary = {"fit": dataclasses.asdict(cfg), "best_epoch": best["epoch"], "margin": margin, "by_phase": by_phase,
               "val_mse": best["mse"], "zero_mse": zero_mse, "history": history}
    state = {"iteration": best["epoch"], "decisions": int(len(tr)), "wall_seconds": time.perf_counter() - t0,
             "history": [{"rollout_fit": summary}]}
    if init is not None:  # the fine-tuned network, with its training config (and the fit in its history)
        train_cfg = make_train_config(None, ["name=rollout_fit", f"init_checkpoint={cfg.init}"], base=init["config"])
        save_checkpoint(cfg.out, model, None, train_cfg, state, None, [], full=False)
        log(f"wrote {cfg.out}: epoch {best['epoch']}, margin {margin:g} points trained in")
        return summary
    # The residual checkpoint: heuristic_prior = margin / scale logits on the heuristic's action.
    residual = ActorCritic(obs.shape[1], adv.shape[1], cfg.hidden, heuristic_prior=max(margin, 1e-3) / cfg.scale,
                           hint_input=cfg.hint_input)
    residual.load_state_dict(model.state_dict())
    train_cfg = make_train_config(None, [f"game=call_partner", f"players={cfg.players}",
                                         f"hidden={list(cfg.hidden)}", "central_critic=false",
                                         f"heuristic_prior={residual.heuristic_prior}",
                                         f"reward_scale={cfg.reward_scale}", f"seed={cfg.seed}", "name=rollout_fit"])
    save_checkpoint(cfg.out, residual, None, train_cfg, state, None, [], full=False)
    log(f"wrote {cfg.out}: epoch {best['epoch']}, margin {margin:g} points (heuristic_prior "
        f"{residual.heuristic_prior:g})")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = FitConfig(labels="", out="")
    for f in dataclasses.fields(FitConfig):
        name = "--" + f.name.replace("_", "-")
        value = getattr(defaults, f.name)
        if f.name == "labels":
            p.add_argument(name, required=True, nargs="+", help="one or more folders of label shards")
        elif f.name == "out":
            p.add_argument(name, required=True)
        elif isinstance(value, list):
            kind = {"hidden": int, "margins": float, "phases": str}[f.name]
            p.add_argument(name, type=kind, nargs="*" if f.name == "phases" else "+", default=value)
        elif isinstance(value, bool):
            p.add_argument(name, type=lambda v: {"true": True, "false": False}[v.lower()], default=value,
                           metavar="{true,false}")
        else:
            p.add_argument(name, type=type(value), default=value)
    p.add_argument("--json", help="write the summary (validation curve, margins) here")
    a = vars(p.parse_args(argv))
    out_json = a.pop("json")
    try:
        summary = fit(FitConfig(**a))
    except ValueError as exc:
        print(f"error: {exc}")
        return 2
    if out_json:
        with open(out_json, "w") as fh:
            json.dump(summary, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
