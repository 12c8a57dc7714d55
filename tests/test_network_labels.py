"""Counterfactual labels of the partnership game with the network playing on (rook_env.training.labels.counterfactual)
and the fit of a network to them (rook_env.training.labels.fit with ``init``): labels are checked against the AEC environment
itself (the deal replayed through ``raw_env`` with the shipped network at every seat, the alternative action
taken there), the batched replays against the trunk (``verify``), and the fitted checkpoint plays as a plain
network; bad input is named."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

from rook_env import raw_env
from rook_env.agents import make_agent
from rook_env.agents.learned import PPOAgent
from rook_env.agents.learned.model import load_checkpoint, model_from_checkpoint
from rook_env.training import cli
from rook_env.training.labels import counterfactual
from rook_env.training.labels import fit as label_fit
from rook_env.training.labels.shards import write_shard
from rook_env.vector import RookVectorEnv

NETWORK = "rook_env/agents/checkpoints/ppo_default.pt"


def label(network, deals, seed, **kwargs):
    """The partnership game's labels with ``network`` playing on."""
    return counterfactual.label_deals("partnership", deals, seed, network=network, **kwargs)


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return model_from_checkpoint(load_checkpoint(NETWORK), NETWORK).eval()


def _finish(env, agents, seat: int) -> float:
    """Play ``env`` to the end of its hand with ``agents[seat]`` at every seat; ``seat``'s team's hand score minus
    the other team's."""
    scores = None
    for name in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            scores = info["hand"]["hand_scores"]
            env.step(None)
            continue
        env.step(agents[env.possible_agents.index(name)].act(obs, info))
    return float(scores[seat % 2] - scores[1 - seat % 2])


@pytest.mark.parametrize("opponent", [None, "heuristic", "ppo:rook_env/agents/checkpoints/best_auction.pt",
                                      "pimc:worlds=2"])
def test_labels_are_what_the_environment_gives_for_each_action(model, opponent):
    """Against itself, the heuristic, a past network (what a best response or a league member would be) or a search
    player built apart from the heuristic (seeded: the labels' opponent and the replay's share the seed)."""
    deals, seed = 3, 31
    other = counterfactual.opponent_agent(opponent or "self", {})
    rec = label(model, deals, seed, label_prob=0.3, verify=True, opponent=other)
    n = len(rec["hint"])
    assert n > 5 and rec["obs"].shape == (n, 583) and rec["q"].shape == (n, 58)
    assert np.array_equal(np.isfinite(rec["q"]), rec["mask"])  # every legal action valued, nothing else
    assert (rec["mask"].sum(1) > 1).all()  # forced moves are not labelled
    assert np.array_equal(rec["q"][np.arange(n), rec["hint"]], rec["outcome"])
    engine = RookVectorEnv(deals, backend="numba")
    engine.reset(seed=seed)
    options = counterfactual._deal_options(engine)
    agent = PPOAgent.load(NETWORK)
    checked = 0
    for hand in np.unique(rec["hand"]):
        rows = list(np.flatnonzero(rec["hand"] == hand))
        table = int(hand - seed * 2**16)
        # with an opponent the network plays seats 0 and 2 at even tables, 1 and 3 at odd ones
        agents = [agent if opponent is None or s % 2 == table % 2
                  else make_agent(opponent, seed=counterfactual.OPPONENT_SEED) for s in range(4)]
        if opponent is not None:
            assert (rec["seat"][rows] % 2 == table % 2).all()  # only the network's decisions are labelled
        env = raw_env()
        env.reset(seed=0, options=options[table])
        for name in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            if rows and np.array_equal(obs["observation"], rec["obs"][rows[0]]):
                r = rows.pop(0)
                seat = env.possible_agents.index(name)
                assert rec["seat"][r] == seat and np.array_equal(obs["action_mask"].astype(bool), rec["mask"][r])
                assert agent.act(obs, info) == rec["hint"][r]
                for a in np.flatnonzero(rec["mask"][r])[:4]:
                    alt, alt_agents = copy.deepcopy((env, agents))  # the heuristic's card memory too
                    alt.step(int(a))
                    assert _finish(alt, alt_agents, seat) == rec["q"][r, a], (hand, r, a)
                    checked += 1
            env.step(agents[env.possible_agents.index(name)].act(obs, info))
        assert not rows, f"deal {hand}: a labelled decision never came up in the replay"
    assert checked > n  # more than one action per decision


def test_labels_are_reproducible_and_refuse_bad_input(model):
    a = label(model, 2, 5, label_prob=0.2)
    b = label(model, 2, 5, label_prob=0.2, tables=7)  # branches in other batches: the same
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    with pytest.raises(ValueError, match="label_prob must be in"):
        label(model, 1, 5, label_prob=1.5)
    with pytest.raises(ValueError, match="episode must be 'hand'"):
        label(model, 1, 5, episode="game")
    with pytest.raises(ValueError, match="all_pass must be 'dealer_forced'"):
        label(model, 1, 5, all_pass="redeal")


def test_redeal_branches_are_a_function_of_the_seed():
    """A branch that throws its hand in (the redeal action, legal to a seat without counters) plays a new deal drawn
    from the branch engine's stream: seeded from the shard's seed, so a rerun gives the same values (it once drew
    from an unseeded stream). A fresh network takes the redeal at random, so it has such branches."""
    from rook_env.training.checkpoints import new_model, seed_everything
    from rook_env.training.config import Config, game_of

    seed_everything(3)
    fresh = new_model(Config(), game_of(Config())).eval()
    redeal = RookVectorEnv(1).layout.REDEAL
    a, b = (label(fresh, 48, 11, phase_label_prob={"bid": 1.0}) for _ in range(2))
    branches = a["mask"][:, redeal] & (a["hint"] != redeal)
    assert branches.any()
    assert np.isfinite(a["q"][branches, redeal]).all()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_phase_label_prob_labels_each_phase_at_its_share(model):
    """phase_label_prob: the phases it names are labelled at their shares (1: every decision with a choice, 0: none),
    the others at label_prob; each record keeps its share; the default draws as before (the same records)."""
    every = label(model, 4, 7, label_prob=1.0)
    cards = label(model, 4, 7, label_prob=0.3, phase_label_prob={"play": 1.0, "bid": 0.0, "discard": 0.0,
                                                                 "trump": 0.0})
    play = every["phase"] == 3  # rook_env.games.partnership.rules.PHASE_NAMES: play
    assert play.sum() > 20 and (cards["phase"] == 3).all() and np.array_equal(cards["prob"], np.ones(play.sum()))
    for k in ("obs", "mask", "hint", "q", "seat", "hand"):  # every card decision of the deals, valued the same
        np.testing.assert_array_equal(cards[k], every[k][play])
    plain = label(model, 4, 7, label_prob=0.3)
    named = label(model, 4, 7, label_prob=0.3, phase_label_prob={"bid": 0.3})
    for k in plain:
        np.testing.assert_array_equal(plain[k], named[k])
    assert np.allclose(plain["prob"], 0.3)
    with pytest.raises(ValueError, match="phase_label_prob: unknown phase 'card'; the phases are bid, discard"):
        label(model, 1, 5, phase_label_prob={"card": 0.5})
    with pytest.raises(ValueError, match=r"phase_label_prob.bid must be in \[0, 1\], got -0.1"):
        label(model, 1, 5, phase_label_prob={"bid": -0.1})


def test_per_hand_gain_weighs_each_label_by_its_share():
    """A label drawn at share p stands for 1/p decisions: margin_report's per-hand gain is the weighted mean."""
    adv = np.array([[0.0, 4.0], [0.0, 8.0]])
    hint, pred = np.zeros(2, np.int64), np.array([[0.0, 1.0], [0.0, 1.0]])  # both leave the hint: gains 4 and 8
    (even,) = label_fit.margin_report(pred, adv, hint, [0.0], per_hand=10.0)
    (weighted,) = label_fit.margin_report(pred, adv, hint, [0.0], per_hand=10.0, weight=np.array([3.0, 1.0]))
    assert even["gain_per_hand"] == pytest.approx(60.0) and weighted["gain_per_hand"] == pytest.approx(50.0)
    assert even["gain"] == weighted["gain"] == pytest.approx(6.0)  # per labelled decision: unweighted


def test_label_opponents_are_checked_before_any_work(tmp_path, capsys, monkeypatch):
    assert counterfactual.opponent_agent("self", {}) is None
    with pytest.raises(ValueError, match="opponent 'ppo:nowhere.pt': "):
        counterfactual.write_labels("partnership", str(tmp_path / "x"), 4, 5, network=NETWORK,
                                    opponent="ppo:nowhere.pt")
    assert not list((tmp_path / "x").glob("*.npz"))
    class RowByRow:
        def act(self, observation, info=None):
            return 0

    monkeypatch.setattr(counterfactual, "make_agent", lambda spec, **flags: RowByRow())
    with pytest.raises(ValueError, match=r"opponent 'rows' \(RowByRow\) does not decide in batches"):
        counterfactual.opponent_agent("rows", {})
    monkeypatch.undo()
    assert cli.main(["labels", "--network", NETWORK, "--out", str(tmp_path / "y"), "--opponent", "champion"]) == 2
    assert "error: opponent 'champion': " in capsys.readouterr().err
    assert not (tmp_path / "y").exists()


def test_fit_over_a_network_writes_a_plain_network_that_plays(tmp_path, model):
    write_shard(str(tmp_path / "shard_9_00000.npz"), label(model, 8, 9, label_prob=0.5))
    out = str(tmp_path / "fit.pt")
    lines = []
    summary = label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=out, init=NETWORK, epochs=3,
                                                margin=20.0, val_share=0.25, threads=1, lr=1e-3),
                            log=lines.append)
    assert summary["margin"] == 20.0 and len(summary["history"]) == 3 and "by_phase" in summary
    ckpt = load_checkpoint(out)
    init = load_checkpoint(NETWORK)
    assert ckpt["game"] == "partnership" and "heuristic_prior" not in ckpt["model_kwargs"]
    assert {k: v.shape for k, v in ckpt["model"].items()} == {k: v.shape for k, v in init["model"].items()}
    critic = [k for k in ckpt["model"] if k.startswith("critic.")]
    assert critic and all(torch.equal(ckpt["model"][k], init["model"][k]) for k in critic)  # the critic is kept

    # the fitted actor is closer than the network it started from to the targets: the advantages less the margin
    data = label_fit.read_shards(label_fit.shard_paths(str(tmp_path)))
    hint = torch.from_numpy(data["hint"].astype(np.int64))
    adv = label_fit.advantage_targets(data["q"], data["hint"].astype(np.int64)) - 20.0
    adv[np.arange(len(adv)), data["hint"]] = 0.0
    target, tried = torch.from_numpy(np.nan_to_num(adv / 10.0)), torch.from_numpy(np.isfinite(adv))

    def mse(net) -> float:
        with torch.no_grad():
            out = label_fit.relative(net.actor_logits(torch.from_numpy(data["obs"])), hint)
        return float(((out - target) ** 2)[tried].mean())

    fitted = make_agent(f"ppo:{out}")
    assert isinstance(fitted, PPOAgent) and fitted.prior is None  # a plain network: no heuristic beside it
    assert mse(fitted.model) < mse(model)
    env = raw_env()  # and it plays a whole hand alone
    env.reset(seed=3)
    steps = 0
    for name in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        env.step(None if term or trunc else fitted.act(obs, info))
        steps += 1
    assert steps > 50


def test_fit_over_a_network_names_bad_input(tmp_path, model):
    write_shard(str(tmp_path / "shard_9_00000.npz"), label(model, 1, 9, label_prob=0.5))
    with pytest.raises(ValueError, match=r"the labels hold [01] deal.*at least 2"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt"), init=NETWORK,
                                          margin=1.0))
    with pytest.raises(ValueError, match="give margin >= 0"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt"), init=NETWORK))
    with pytest.raises(ValueError, match="is a 'call_partner' network"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt"), margin=1.0,
                                          init="rook_env/agents/checkpoints/ppo_call_partner.pt"))
    with pytest.raises(ValueError, match="phases: unknown phase.*the phases are bid, discard, trump, play"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt"), margin=1.0,
                                          init=NETWORK, phases=["auction"]))


def test_fit_reads_several_label_folders(tmp_path, model):
    """Labels against different opponents live in different folders; the fit reads them together (one deal in each
    folder: either alone is refused, the two fit)."""
    folders = [tmp_path / "self", tmp_path / "heuristic"]
    for i, folder in enumerate(folders):
        folder.mkdir()
        write_shard(str(folder / f"shard_{10 + i}_00000.npz"), label(model, 1, 10 + i, label_prob=0.5))
    with pytest.raises(ValueError, match=r"the labels hold 1 deal"):
        label_fit.fit(label_fit.FitConfig(labels=str(folders[0]), out=str(tmp_path / "x.pt"), init=NETWORK,
                                          margin=1.0))
    with pytest.raises(ValueError, match="give at least one folder"):
        label_fit.fit(label_fit.FitConfig(labels=[], out=str(tmp_path / "x.pt"), init=NETWORK, margin=1.0))
    out, report = str(tmp_path / "fit.pt"), tmp_path / "fit.json"
    assert cli.main(["fit", "--labels", *map(str, folders), "--out", out, "--init", NETWORK, "--margin", "5",
                     "--epochs", "1", "--threads", "1", "--val-share", "0.5", "--json", str(report)]) == 0
    summary = json.loads(report.read_text())
    assert summary["fit"]["labels"] == [str(f) for f in folders]
    assert load_checkpoint(out)["decisions"] > 0


def test_cli_refuses_a_call_partner_network(tmp_path, capsys):
    network = "rook_env/agents/checkpoints/ppo_call_partner.pt"
    assert cli.main(["labels", "--network", network, "--out", str(tmp_path / "x")]) == 2
    assert "these labels are the partnership game's" in capsys.readouterr().err
    assert cli.main(["labels", "--out", str(tmp_path / "x")]) == 2  # the partnership game's labels need a network
    assert "--network: the partnership game's labels are a network's" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # an unknown game: argparse's usage error
        cli.main(["labels", "--game", "hearts", "--out", str(tmp_path / "x")])
    assert "invalid choice: 'hearts'" in capsys.readouterr().err
