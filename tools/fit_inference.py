"""Fit the search's model of the hidden cards (:mod:`rook_env.agents.search.inference`) on logged self-play.

Plays partnership hands (the heuristic and the shipped ``ppo`` agent, alternating by hand), and at
every card-play decision of every seat logs the model's input (the seat's observation vector and the
voids it remembers, read exactly as the search agent reads them) with the true holder of each unseen
card as the label. Trains a small MLP (torch) by cross-entropy over the unseen cards, the holders the
hard constraints rule out masked, and reports on held-out hands (other deal seeds) the exact mean
log-likelihood per decision of the true deal under the learned worlds against uniform worlds (both
within the same constraints). Writes the model as ``.npz`` + ``.json`` (NumPy at play time)::

    PYTHONPATH=$PWD python tools/fit_inference.py --hands 1000 --eval-hands 150 --workers 2 \\
        --out rook_env/agents/checkpoints/inference_default.npz
"""

from __future__ import annotations

import argparse
import copy
import math
import multiprocessing as mp
import pickle
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from rook_env.agents import make_agent
from rook_env.agents.heuristic import HeuristicAgent
from rook_env.agents.heuristic.play import Memory, known_voids
from rook_env.agents.heuristic.tables import card_tables, seat_reader
from rook_env.agents.search.inference import N_COLS, HolderModel, WeightedWorldSampler, features, holder_column
from rook_env.agents.search.worlds import NEST, holders_for
from rook_env.core.optional import require
from rook_env.games.partnership.cards import bits
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.observation import encode
from rook_env.games.partnership.rules import PLAY, RookState

TRAIN_SEED, EVAL_SEED = 1_000_000, 2_000_000  # deal seeds: hand h of the training set is RookState(seed=TRAIN_SEED + h)


@dataclass
class FitConfig:
    hands: int = 3000  # training hands (each gives 4 seats x 9 card-play decisions)
    eval_hands: int = 300  # held-out hands for the log-likelihood
    policies: str = "heuristic,ppo"  # who plays the logged hands, alternating by hand
    hidden: int = 128
    layers: int = 2
    epochs: int = 6  # at most; the epoch with the best validation loss is kept
    batch: int = 256
    lr: float = 1e-3
    weight_decay: float = 1e-4
    val_share: float = 0.15  # the last training hands, for early stopping and the choice of mix
    seed: int = 0
    out: str = "rook_env/agents/checkpoints/inference_default.npz"
    workers: int = 1  # collection processes
    cache: str = ""  # .npz of the logged decisions: read if it exists, else written


def _policies(names: str) -> list:
    out = []
    for name in names.split(","):
        if name == "heuristic":
            out.append([HeuristicAgent(seed=s) for s in range(4)])
        elif name == "ppo":
            out.append([make_agent("ppo", seed=s) for s in range(4)])
        else:
            raise ValueError(f"policy must be heuristic or ppo, got {name!r}")
    return out


CHUNK = 50  # hands per collection task (agents are rebuilt per task, so results do not depend on --workers)


def collect(n_hands: int, seed0: int, policies: str, keep_constraints: bool = False, workers: int = 1):
    """Log ``n_hands`` hands (deal seeds ``seed0 + h``) in tasks of :data:`CHUNK` hands: inputs, labels
    (holder column per card, -1 if the card is not unseen), allowed-column masks, and
    (``keep_constraints``) each decision's ``(unseen, holders, truth, hand)`` for the exact log-likelihood."""
    tasks = [(h0, min(h0 + CHUNK, n_hands), seed0, policies, keep_constraints) for h0 in range(0, n_hands, CHUNK)]
    if workers > 1:
        with mp.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(_collect_chunk, tasks)
    else:
        parts = [_collect_chunk(t) for t in tasks]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]), [c for p in parts for c in p[3]])


def _collect_chunk(task: tuple):
    h0, h1, seed0, names, keep_constraints = task
    policies = _policies(names)
    cfg = make_config()
    tab, reader = card_tables(cfg), seat_reader(cfg)
    n_cards, n_actions = tab.layout.n_cards, tab.layout.n_actions
    xs, ys, allowed, cons = [], [], [], []
    for h in range(h0, h1):
        agents = policies[h % len(policies)]
        for a in agents:
            a.reset()
        st = RookState(cfg, seed=seed0 + h)
        st.new_game()
        memories: dict[int, Memory] = {}
        while not st.is_over:
            me = st.current
            vec = encode(st, me)
            legal = st.legal_mask()
            obs = {"observation": vec, "action_mask": np.array([legal >> i & 1 for i in range(n_actions)], np.int8)}
            if st.phase == PLAY:
                view = reader.read(vec)
                voids = known_voids(tab, view, view.trump, memories.get(me))
                unseen, holders = holders_for(tab, view, voids)
                truth = [st.discards if hd.who == NEST else st.hands[(me + hd.who) % 4] for hd in holders]
                y = np.full(n_cards, -1, np.int8)
                ok = np.zeros((n_cards, N_COLS), bool)
                for hd, mask in zip(holders, truth):
                    col = holder_column(hd.who)
                    for c in bits(mask):
                        y[c] = col
                    for c in bits(unseen & ~hd.forbidden):
                        ok[c, col] = True
                if unseen:
                    xs.append(features(vec, voids).astype(np.float16))
                    ys.append(y)
                    allowed.append(ok)
                    if keep_constraints:
                        cons.append((unseen, holders, truth, h))
            a = agents[me].act(obs)
            if st.phase == PLAY:
                lead = view.trick[0][1] if view.trick else -1
                memories[me] = Memory(view.hand & ~(1 << a), tuple(view.played), lead, tuple(voids))
            st.apply(a)
    return np.stack(xs), np.stack(ys), np.stack(allowed), cons


def train(cfg: FitConfig, x: np.ndarray, y: np.ndarray, ok: np.ndarray, n_cards: int,
          val: tuple[np.ndarray, np.ndarray, np.ndarray]) -> HolderModel:
    """Fit the MLP; keep the epoch with the lowest cross-entropy on ``val`` (x, y, allowed)."""
    torch = require("torch", "fitting the holder model (playing with it does not need torch)")
    nn = torch.nn

    torch.manual_seed(cfg.seed)
    dims = [x.shape[1]] + [cfg.hidden] * cfg.layers + [n_cards * N_COLS]
    mods: list[nn.Module] = []
    for i in range(len(dims) - 1):
        mods.append(nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            mods.append(nn.ReLU())
    net = nn.Sequential(*mods)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    xt, yt, okt = torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.int64)), torch.from_numpy(ok)
    n = len(xt)
    g = torch.Generator().manual_seed(cfg.seed)
    xv, yv, okv = torch.from_numpy(val[0].astype(np.float32)), torch.from_numpy(val[1].astype(np.int64)), \
        torch.from_numpy(val[2])
    best, best_state = math.inf, None
    for epoch in range(cfg.epochs):
        perm = torch.randperm(n, generator=g)
        tot, cnt = 0.0, 0
        for i in range(0, n, cfg.batch):
            idx = perm[i:i + cfg.batch]
            logits = net(xt[idx]).view(-1, n_cards, N_COLS).masked_fill(~okt[idx], -1e9)
            lab = yt[idx]
            m = lab >= 0
            loss = nn.functional.cross_entropy(logits[m], lab[m])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * int(m.sum())
            cnt += int(m.sum())
        with torch.no_grad():
            lv = net(xv).view(-1, n_cards, N_COLS).masked_fill(~okv, -1e9)
            mv = yv >= 0
            vloss = float(nn.functional.cross_entropy(lv[mv], yv[mv]))
        print(f"epoch {epoch + 1}: cross-entropy per unseen card: train {tot / cnt:.4f}, validation {vloss:.4f} nats",
              flush=True)
        if best_state is None or vloss < best:
            best, best_state = vloss, copy.deepcopy(net.state_dict())
        else:
            break  # validation loss went up: stop early
    net.load_state_dict(best_state)
    lin = [m for m in net if isinstance(m, nn.Linear)]
    return HolderModel([m.weight.detach().numpy().T.copy() for m in lin], [m.bias.detach().numpy().copy() for m in lin],
                       n_cards, x.shape[1] - 12)


def choose_mix(model: HolderModel, val: tuple[np.ndarray, np.ndarray, np.ndarray]) -> float:
    """The uniform share (of 0, 0.05, 0.1, 0.2, 0.3) with the lowest validation cross-entropy per unseen card,
    each card's probabilities renormalised over the holders its constraints allow."""
    xv, yv, okv = val
    best, best_mix = math.inf, 0.0
    for mix in (0.0, 0.05, 0.1, 0.2, 0.3):
        model.mix = mix
        p = model.probs(xv.astype(np.float32)) * okv
        p /= np.maximum(p.sum(-1, keepdims=True), 1e-30)
        m = yv >= 0
        ce = -np.log(np.maximum(np.take_along_axis(p, np.maximum(yv, 0)[..., None].astype(np.int64), -1)[..., 0][m], 1e-30)).mean()
        print(f"mix {mix}: validation cross-entropy {ce:.4f}", flush=True)
        if ce < best:
            best, best_mix = ce, mix
    return best_mix


def log_likelihoods(model: HolderModel | None, x: np.ndarray, cons: list, counter_mask: int) -> np.ndarray:
    """Exact log-probability of each held-out decision's true deal under learned worlds (``model``) or
    uniform worlds (None), both within the decision's hard constraints."""
    probs = model.probs(x.astype(np.float32)) if model is not None else [None] * len(cons)
    return np.array([WeightedWorldSampler(unseen, holders, counter_mask, p).log_prob(truth)
                     for p, (unseen, holders, truth, _) in zip(probs, cons)])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f, v in asdict(FitConfig()).items():
        p.add_argument("--" + f.replace("_", "-"), type=type(v), default=v)
    cfg = FitConfig(**vars(p.parse_args()))
    rules = make_config()
    tab = card_tables(rules)
    t0 = time.perf_counter()
    if cfg.cache and Path(cfg.cache).is_file():
        x, y, ok, xe, cons, hand_of = pickle.loads(Path(cfg.cache).read_bytes())  # our own file
    else:
        x, y, ok, hands = collect(cfg.hands, TRAIN_SEED, cfg.policies, workers=cfg.workers, keep_constraints=True)
        hand_of = np.array([c[3] for c in hands])
        xe, _, _, cons = collect(cfg.eval_hands, EVAL_SEED, cfg.policies, keep_constraints=True, workers=cfg.workers)
        if cfg.cache:
            Path(cfg.cache).write_bytes(pickle.dumps((x, y, ok, xe, cons, hand_of)))
    is_val = hand_of >= round(cfg.hands * (1 - cfg.val_share))
    val = (x[is_val], y[is_val], ok[is_val])
    x, y, ok = x[~is_val], y[~is_val], ok[~is_val]
    print(f"logged {len(x)} training and {len(xe)} held-out decisions in {time.perf_counter() - t0:.0f}s", flush=True)
    t1 = time.perf_counter()
    model = train(cfg, x, y, ok, tab.layout.n_cards, val)
    model.mix = choose_mix(model, val)
    print(f"trained in {time.perf_counter() - t1:.0f}s", flush=True)
    report = {}
    lu = log_likelihoods(None, xe, cons, tab.counter_mask)
    chosen = model.mix
    for mix in sorted({0.0, chosen}):
        model.mix = mix
        ll = log_likelihoods(model, xe, cons, tab.counter_mask)
        d = ll - lu
        # decisions of one hand are correlated: the interval is over hands (each hand's mean gain)
        hand = np.array([c[3] for c in cons])
        per_hand = np.array([d[hand == h].mean() for h in np.unique(hand)])
        half = 1.96 * per_hand.std(ddof=1) / math.sqrt(len(per_hand))
        report[mix] = {"learned": float(ll.mean()), "uniform": float(lu.mean()), "gain": float(d.mean()),
                       "gain_ci_hands": [float(per_hand.mean() - half), float(per_hand.mean() + half)],
                       "decisions": len(d), "hands": len(per_hand)}
        print(f"mix {mix}: mean log-likelihood of the true deal per decision: learned {ll.mean():.3f}, "
              f"uniform {lu.mean():.3f} nats; gain {d.mean():.3f} (per hand {per_hand.mean():.3f} "
              f"[{per_hand.mean() - half:.3f}, {per_hand.mean() + half:.3f}]) over {len(d)} decisions of "
              f"{len(per_hand)} held-out hands", flush=True)
    model.mix = chosen
    model.save(cfg.out, {"how": asdict(cfg), "train_decisions": int(len(x)), "validation_decisions": int(len(val[0])), "eval": {str(k): v for k, v in report.items()},
                         "train_deal_seeds": [TRAIN_SEED, TRAIN_SEED + cfg.hands - 1],
                         "eval_deal_seeds": [EVAL_SEED, EVAL_SEED + cfg.eval_hands - 1]})
    print(f"wrote {cfg.out} (mix {model.mix})")


if __name__ == "__main__":
    main()
