"""``make_agent("best")``: the strongest player shipped per game (search on the shipped network in the
partnership game, its auction made bolder; call-your-partner's shipped network, which beats its heuristic)."""

from __future__ import annotations

import os

import pytest

from rook_env.games.partnership import kernels
from rook_env.agents import make_agent
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic
from rook_env.agents.search import SearchAgent
from rook_env.evaluation import play_match


def test_best_is_learned_world_search_on_its_auction_network_and_plays_legally():
    pytest.importorskip("torch")
    import torch

    from rook_env.agents.checkpoints import BEST_AUCTION, CHECKPOINT_DIR
    from rook_env.agents.learned import PPOAgent
    from rook_env.agents.learned.model import load_checkpoint

    best = make_agent("best", seed=3)
    assert isinstance(best, SearchAgent) and isinstance(best.base, PPOAgent)
    # its auction is its own network, shipped beside the game's "ppo" (search over it measured stronger than over
    # the networks shipped as "ppo" since)
    assert os.path.dirname(BEST_AUCTION) == CHECKPOINT_DIR and os.path.isfile(BEST_AUCTION[:-3] + ".json")
    weights = load_checkpoint(BEST_AUCTION)["model"]
    assert all(torch.equal(v, weights[k]) for k, v in best.base.model.state_dict().items())
    shipped = make_agent("ppo", seed=3).model.state_dict()
    assert not all(torch.equal(v, shipped[k]) for k, v in best.base.model.state_dict().items())
    # 96 worlds from the learned model of the hidden cards (docs/results.md: it beats "search:ppo")
    assert best.samples == 96 and best.worlds == "learned" and best.boldness == 4.0
    assert best.engine == ("batched" if kernels.AVAILABLE else "python")
    res = play_match("best", "heuristic", deals=2, seed=11, strict=True)  # strict: an illegal action raises
    assert res.illegal_total == 0 and res.hands >= 4


def test_best_for_call_your_partner_is_its_search_on_the_shipped_network_where_there_is_one():
    pytest.importorskip("torch")
    from rook_env.agents.call_partner_search import CallPartnerSearch
    from rook_env.agents.learned import PPOAgent

    # search beats the shipped network and the heuristic on held-out deals (docs/agents.md): at 5 players the
    # network bids, elsewhere the heuristic
    agent = make_agent("best", seed=1, game="call_partner", players=5)
    assert isinstance(agent, CallPartnerSearch) and isinstance(agent.base, PPOAgent)
    assert agent.base.checkpoint_info["env_flags"]["players"] == 5
    for players in (4, 6):
        other = make_agent("best", seed=1, game="call_partner", players=players)
        assert isinstance(other, CallPartnerSearch) and isinstance(other.base, CallPartnerHeuristic)
    with pytest.raises(ValueError, match="circus_rook.*does not apply to call-your-partner"):
        make_agent("best", game="call_partner", players=5, circus_rook="maybe")


def test_boldness_takes_log_probability_off_the_networks_pass_and_nothing_else():
    pytest.importorskip("torch")
    import numpy as np

    import rook_env
    from rook_env.agents.learned import PPOAgent
    from rook_env.games.partnership.cards import PASS

    env = rook_env.raw_env()
    net = make_agent("ppo", seed=0)
    bold = make_agent("search[samples=8,boldness=1000]:ppo", seed=0)
    plain = make_agent("search[samples=8]:ppo", seed=0)
    assert bold.boldness == 1000.0 and isinstance(bold.base, PPOAgent) and plain.boldness == 0.0
    passes = bids = 0
    for seed in range(20):
        env.reset(seed=seed)
        while True:  # the auction, played by the network
            obs, *_ = env.last()
            legal = np.flatnonzero(obs["action_mask"])
            if not obs["action_mask"][PASS]:
                break
            choice, own = bold.act(obs), net.act(obs)
            assert plain.act(obs) == own
            if own == PASS and legal.size > 1:
                passes += 1
                # the pass has lost all its weight: the most probable of the other actions
                probs = net.action_probs(obs)
                others = legal[legal != PASS]
                assert choice == others[np.argmax(probs[others])]
                bids += choice != PASS
            else:
                assert choice == own  # a bid the network makes anyway is kept
            env.step(own)
    assert passes > 0 and bids == passes


def test_boldness_is_checked():
    with pytest.raises(ValueError, match="boldness needs a base that gives its action probabilities"):
        make_agent("search[boldness=2]", seed=0)
    with pytest.raises(ValueError, match="search option boldness must be a number"):
        make_agent("search[boldness=lots]:ppo", seed=0)
    with pytest.raises(ValueError, match="boldness must be a finite number >= 0"):
        SearchAgent(boldness=-1.0)
    with pytest.raises(ValueError, match="boldness must be a finite number >= 0"):
        SearchAgent(boldness=float("inf"))
