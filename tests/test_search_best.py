"""``make_agent("best")``: the strongest player shipped per game (search on the shipped network in the
partnership game; call-your-partner's heuristic, which beats its shipped network)."""

from __future__ import annotations

import pytest

from rook_env import kernels
from rook_env.agents import make_agent
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic
from rook_env.agents.search import SearchAgent
from rook_env.evaluation import play_match


def test_best_is_learned_world_search_on_the_shipped_network_and_plays_legally():
    pytest.importorskip("torch")
    from rook_env.agents.learned import PPOAgent

    best = make_agent("best", seed=3)
    assert isinstance(best, SearchAgent) and isinstance(best.base, PPOAgent)
    # 96 worlds from the learned model of the hidden cards (docs/results.md: it beats "search:ppo")
    assert best.samples == 96 and best.worlds == "learned"
    assert best.engine == ("batched" if kernels.AVAILABLE else "python")
    res = play_match("best", "heuristic", deals=2, seed=11, strict=True)  # strict: an illegal action raises
    assert res.illegal_total == 0 and res.hands >= 4


def test_best_for_call_your_partner_is_its_heuristic():
    # measured stronger than the shipped 5-player network (docs/results.md, call-your-partner)
    agent = make_agent("best", seed=1, game="call_partner", players=5)
    assert isinstance(agent, CallPartnerHeuristic)
    with pytest.raises(ValueError, match="circus_rook.*does not apply to call-your-partner"):
        make_agent("best", game="call_partner", players=5, circus_rook="maybe")
