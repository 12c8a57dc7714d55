"""Counterfactual labels of call-your-partner Rook, the heuristic playing on (rook_env.training.labels.counterfactual),
and the residual fit on them (rook_env.training.labels.fit): every
label is checked against the environment itself (the same deal replayed through ``raw_env`` by the registry's
heuristic at every seat, the alternative action taken there); the fit writes a residual checkpoint that plays
as an agent, exactly the heuristic when the margin is out of reach; bad input is named."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from rook_env.agents import make_agent
from rook_env.agents.learned import PPOAgent
from rook_env.agents.learned.model import load_checkpoint
from rook_env.games.call_partner import raw_env as call_partner_raw_env
from rook_env.games.call_partner.config import make_config
from rook_env.games.call_partner.env import hand_rewards
from rook_env.games.call_partner.rules import CallPartnerState
from rook_env.games.partnership.cards import bits
from rook_env.training.labels import counterfactual
from rook_env.training.labels import fit as label_fit
from rook_env.training.labels.shards import write_shard


def label(hands, seed, **kwargs):
    """Call-your-partner labels: ``hands`` hands from deal seed ``seed``, the heuristic playing on."""
    return counterfactual.label_deals("call_partner", hands, seed, **kwargs)


def _replay(seed: int, players: int = 5):
    """The deal of ``label_hands``' hand ``seed`` in a fresh ``raw_env`` and the registry's heuristic per seat."""
    state = CallPartnerState(make_config(players=players), seed=seed)
    state.new_game()
    env = call_partner_raw_env(players=players)
    env.reset(seed=0, options={"hands": [bits(h) for h in state.hands], "nest": bits(state.nest),
                               "dealer": state.dealer})
    return env, make_agent("call_partner_heuristic", game="call_partner", players=players)


def _finish(env, heuristic) -> dict[str, float]:
    """Play ``env`` to the end of the hand by the heuristic; every agent's reward for it."""
    total = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        total[agent] += reward
        env.step(None if term or trunc else heuristic.act(obs, info))
    return total


def test_labels_are_what_the_environment_gives_for_each_action():
    rec = label(3, seed=123, label_prob=0.5, players=5)
    n = len(rec["hint"])
    assert n > 0 and rec["obs"].shape == (n, 1084) and rec["q"].shape == (n, 86)
    assert np.array_equal(np.isfinite(rec["q"]), rec["mask"])  # every legal action valued, nothing else
    assert (rec["mask"].sum(1) > 1).all()  # forced moves are not labelled
    assert np.array_equal(rec["q"][np.arange(n), rec["hint"]], rec["outcome"])
    checked = 0
    for seed in np.unique(rec["hand"]):
        rows = np.flatnonzero(rec["hand"] == seed)
        env, heuristic = _replay(int(seed))
        pending = list(rows)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            if pending and np.array_equal(obs["observation"], rec["obs"][pending[0]]):
                r = pending.pop(0)
                seat = env.possible_agents.index(agent)
                assert rec["seat"][r] == seat and np.array_equal(obs["action_mask"].astype(bool), rec["mask"][r])
                assert heuristic.act(obs, info) == rec["hint"][r]
                for a in np.flatnonzero(rec["mask"][r]):
                    alt = copy.deepcopy(env)
                    alt.step(int(a))
                    got = _finish(alt, heuristic)[agent]  # rewards come only when the hand ends
                    assert got == pytest.approx(rec["q"][r, a]), (seed, r, a)
                    checked += 1
            env.step(heuristic.act(obs, info))
        assert not pending, f"hand {seed}: a labelled decision never came up in the replay"
    assert checked > n  # more than one action per decision


def test_labels_are_reproducible_and_refuse_bad_input():
    a = label(1, seed=7, label_prob=0.3)
    b = label(1, seed=7, label_prob=0.3)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    with pytest.raises(ValueError, match="label_prob must be in"):
        label(1, seed=7, label_prob=0.0)
    with pytest.raises(ValueError, match="episode must be 'hand'"):
        label(1, seed=7, episode="game")


def test_margin_report_counts_the_true_gain_of_leaving_the_heuristic():
    # two decisions, three actions; the heuristic plays action 0
    adv = np.array([[0.0, 12.0, -5.0], [0.0, -30.0, np.nan]])
    hint = np.array([0, 0])
    pred = np.array([[0.0, 8.0, 20.0], [0.0, 3.0, 99.0]])  # action 2 of row 1 was not tried: never chosen
    rep = {r["margin"]: r for r in label_fit.margin_report(pred, adv, hint, [0.0, 5.0, 25.0], per_hand=10.0)}
    assert rep[0.0]["leaves"] == 1.0 and rep[0.0]["gain"] == pytest.approx((-5.0 - 30.0) / 2)
    assert rep[5.0]["leaves"] == 0.5 and rep[5.0]["gain"] == pytest.approx(-5.0 / 2)
    assert rep[5.0]["gain_per_hand"] == pytest.approx(-25.0)
    assert rep[25.0]["leaves"] == 0.0 and rep[25.0]["gain"] == 0.0
    np.testing.assert_array_equal(label_fit.advantage_targets(np.array([[3.0, 5.0, np.nan]]), np.array([1])),
                                  np.array([[-2.0, 0.0, np.nan]]))


def test_fit_writes_a_residual_checkpoint_that_plays(tmp_path):
    write_shard(str(tmp_path / "shard_5_00000.npz"), label(4, seed=5, label_prob=0.5))
    out = str(tmp_path / "fit.pt")
    lines = []
    summary = label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=out, epochs=2, hidden=[32],
                                                margin=10_000.0, val_share=0.25, threads=1), log=lines.append)
    assert summary["margin"] == 10_000.0 and len(summary["history"]) == 2
    assert "validation MSE" in lines[1]
    ckpt = load_checkpoint(out)
    assert ckpt["game"] == "call_partner" and ckpt["model_kwargs"]["heuristic_prior"] == pytest.approx(1000.0)
    # the margin is out of the network's reach: the agent plays exactly the heuristic on a whole hand
    agent = make_agent(f"ppo:{out}", game="call_partner", players=5)
    assert isinstance(agent, PPOAgent) and agent.prior is not None
    heuristic = make_agent("call_partner_heuristic", game="call_partner", players=5)
    env = call_partner_raw_env(players=5)
    env.reset(seed=99)
    steps = 0
    for name in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = agent.act(obs, info)
        assert a == heuristic.act(obs, info)
        env.step(a)
        steps += 1
    assert steps > 40
    # the fit's network is the checkpoint's actor: its output is the predicted advantage (in scale points per logit)
    assert not torch.equal(agent.model.actor[-1].weight, torch.zeros_like(agent.model.actor[-1].weight))


def test_fit_names_bad_labels(tmp_path):
    with pytest.raises(ValueError, match="no label shards"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt")))
    rec = label(1, seed=5, label_prob=0.5)
    rec["q"][0, np.flatnonzero(rec["mask"][0])[0]] = np.nan
    write_shard(str(tmp_path / "shard_5_00000.npz"), rec)
    with pytest.raises(ValueError, match="exactly the legal actions"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt")))
    with pytest.raises(ValueError, match="phases: unknown phase.*'bidding'; the phases are bid, discard"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt"), phases=["bidding"]))
    with pytest.raises(ValueError, match="epochs must be >= 1"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt"), epochs=0))


def test_a_residual_fit_refuses_to_hold_phases_it_has_no_labels_of(tmp_path):
    """Fitted to bids and card play, a residual keeps the heuristic's action in the other phases only where it is
    fitted there: labels without those phases (their share 0) would leave it untrained, so the fit refuses them."""
    rec = label(2, seed=5, label_prob=0.5, phase_label_prob={"discard": 0, "trump": 0, "rook": 0, "call": 0})
    assert set(np.unique(rec["phase"]).tolist()) <= {0, 5}  # bid and play only
    write_shard(str(tmp_path / "shard_5_00000.npz"), rec)
    with pytest.raises(ValueError, match="hold no decision of the phases discard, trump, rook, call.*"
                                         "--phase-label-prob discard=0.1 trump=0.1 rook=0.1 call=0.1"):
        label_fit.fit(label_fit.FitConfig(labels=str(tmp_path), out=str(tmp_path / "x.pt"), phases=["bid", "play"]))
    assert not (tmp_path / "x.pt").exists()


def test_hint_input_actor_reads_the_heuristics_action():
    from rook_env.agents.learned.model import ActorCritic

    with pytest.raises(ValueError, match="hint_input.*needs heuristic_prior > 0"):
        ActorCritic(1084, 86, [16], hint_input=True)
    model = ActorCritic(1084, 86, [16], heuristic_prior=1.0, hint_input=True)
    assert model.kwargs()["hint_input"] is True and "hint_input" not in ActorCritic(1084, 86, [16]).kwargs()
    obs = torch.zeros(2, 1084)
    with pytest.raises(ValueError, match="pass hint="):
        model.actor_logits(obs)
    a, b = model.actor_logits(obs, torch.tensor([3, 3])), model.actor_logits(obs, torch.tensor([3, 7]))
    assert torch.equal(a[0], b[0]) and not torch.equal(a[1], b[1])  # the same observation, another hint


def test_the_command_line_writes_the_shards_of_label_deals(tmp_path, capsys):
    """``rook-train labels --game call_partner``: one deal seed per hand, shards of ``--shard-hands`` hands written by
    the label processes, each the records of :func:`label_deals` on its hands; a rerun skips them."""
    from rook_env.training import cli

    out = tmp_path / "labels"
    args = ["labels", "--game", "call_partner", "--players", "4", "--out", str(out), "--hands", "3", "--seed", "40",
            "--shard-hands", "2", "--label-prob", "0.4", "--processes", "1"]
    assert cli.main(args) == 0
    assert sorted(p.name for p in out.iterdir()) == ["shard_40_00000.npz", "shard_40_00001.npz"]
    for name, first, hands in (("shard_40_00000.npz", 40, 2), ("shard_40_00001.npz", 42, 1)):
        expected = label(hands, first, label_prob=0.4, players=4)
        with np.load(out / name) as got:
            assert sorted(got.files) == sorted(expected)
            for k in expected:
                np.testing.assert_array_equal(got[k], expected[k])
    assert "labelled decisions in" in capsys.readouterr().out  # a line per shard
    stamp = (out / "shard_40_00000.npz").stat().st_mtime
    assert cli.main(args) == 0 and (out / "shard_40_00000.npz").stat().st_mtime == stamp
    assert cli.main([*args[:-2], "--processes", "0"]) == 2
    assert "--processes must be >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("players", [4, 5, 6])
def test_card_play_outs_on_bitmasks_score_what_the_heuristic_scores(players):
    """The labels' play-outs from card play (CallPartnerSearch.play_out: the heuristic's card rule on bitmasks)
    give every seat the reward the heuristic playing each seat's observation to the end gives, from every point
    of card play; the state is left as it was; a state not in card play is refused."""
    play = counterfactual.HeuristicPlayOut(None, None, 0, {"players": players})
    rule = play.card_play
    checked = 0
    for seed in range(4):
        state = CallPartnerState(make_config(players=players), seed=1000 + seed)
        state.new_game()
        while not state.is_over:
            if state.phase == state.PLAY:
                before = state.to_dict()
                fast = rule.play_out(state)
                assert state.to_dict() == before
                slow = state.clone()
                while not slow.is_over:
                    _, _, legal, action = play._heuristic_action(slow)
                    slow.apply(action, legal)
                assert fast == hand_rewards(play.config, slow.hand_result["hand_scores"], -1), (seed, state.to_dict())
                checked += 1
            elif state.phase == state.BID:
                with pytest.raises(ValueError, match="plays from card play.*'bid'"):
                    rule.play_out(state)
            _, _, legal, action = play._heuristic_action(state)
            state.apply(action, legal)
    assert checked >= 4 * players * 8
