"""Observations: in every game the environment's observation equals the game's reference ``encode`` at every
position of random hands; in the partnership game the incremental encoder equals ``encode`` after every step
under every flag combination, and ``decode`` gives back the true state as seen from the seat."""

import itertools

import numpy as np
import pytest
from helpers import complete_deal, encoder, over_games, positions, step_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rook_env
from rook_env.games.partnership.cards import bits
from rook_env.games.partnership.config import CHOICES
from rook_env.games.partnership.observation import OBS_SIZE, REL, SCORE_CLIP, decode, encode, obs_layout
from rook_env.games.partnership.rules import BID, PHASE_NAMES

RULE_FLAGS = ["all_pass", "no_counter_redeal", "nest_discard", "first_lead", "rook_rank", "deck"]
ALL_COMBOS = [dict(zip(RULE_FLAGS, values)) for values in itertools.product(*(CHOICES[f] for f in RULE_FLAGS))]


def expected_view(game, me):
    """What seat ``me`` is entitled to know, straight from the true state (seats relative)."""
    L = game.L
    rel = REL[me]
    bids, passes, high = [], set(), None
    for seat, a in game.bid_history:
        if a == L.PASS:
            passes.add((rel[seat], high))
        elif a != L.REDEAL:
            high = L.bids[a - L.BID0]
            bids.append((rel[seat], high))
    t = me & 1
    lim = round(SCORE_CLIP * game.config.target_score)
    sees_nest = me == game.bidder and game.phase != BID
    # Scores are encoded clipped to +-SCORE_CLIP targets: exact within, saturated beyond.
    lim = int(SCORE_CLIP * game.config.target_score)
    scores = tuple(min(max(game.scores[k], -lim), lim) for k in (t, 1 - t))
    return {
        "phase": PHASE_NAMES[game.phase],
        "hand": bits(game.hands[me]),
        "bids": bids,
        "passes": passes,
        "bidder": rel[game.bidder] if game.bidder >= 0 else None,
        "contract": L.bids[game.high_bid] if game.bidder >= 0 else None,
        "trump": game.trump if game.trump >= 0 else None,
        "leader": rel[game.leader] if game.leader >= 0 else None,
        "trick": [(rel[(game.leader + i) % 4], c) for i, c in enumerate(game.trick)],
        "played": {c: rel[game.played_by[c]] for c in bits(game.played)},
        "nest": bits(game.nest) if sees_nest else [],
        "discards": bits(game.discards) if sees_nest else [],
        "nest_has_counters": game.nest_has_counters,
        "counters": (game.points[t], game.points[1 - t]),
        "tricks_won": (game.tricks_won[t], game.tricks_won[1 - t]),
        "tricks_left": L.n_tricks - len(game.tricks),
        "scores": scores,
        "dealer": rel[game.dealer],
    }


def check_views(e, full=True):
    """Incremental == reference for every seat; with ``full`` also the space and the decoded view."""
    game = e.unwrapped.game
    cfg = e.unwrapped.config
    space = e.observation_space("player_0")
    for me, agent in enumerate(e.possible_agents):
        ob = e.observe(agent)
        ref = encode(game, me)
        assert np.array_equal(ob["observation"], ref), f"{agent}: incremental != encode in {PHASE_NAMES[game.phase]}"
        if not full:
            continue
        assert space.contains(ob)
        view = decode(ob["observation"], cfg)
        got = {k: getattr(view, k) for k in expected_view(game, me)}
        got["passes"] = set(got["passes"])
        assert got == expected_view(game, me), agent
        assert view.passed == {s for s, _ in got["passes"]}
        seen = set(view.hand) | set(view.played) | set(view.nest) | set(view.discards)
        assert set(bits(view.unseen())) == set(range(game.L.n_cards)) - seen


def run_random(e, seed, max_steps=400, decode_every=3):
    """Random legal play (the shared walk); the encoders are compared at every position, the decoded views at
    the first, every few moves and at the end."""
    for moves, _ in enumerate(positions(e, seed, max_steps)):
        check_views(e, full=moves == 0 or (moves - 1) % decode_every == 0)
    check_views(e, full=True)


@pytest.mark.partnership
def test_default_layout():
    ol = obs_layout(rook_env.RookConfig())
    assert ol.size == OBS_SIZE == 583
    starts = [a for _, a, _ in ol.sections]
    stops = [z for _, _, z in ol.sections]
    assert starts[0] == 0 and starts[1:] == stops[:-1] and stops[-1] == ol.size


@pytest.mark.partnership
@pytest.mark.parametrize("combo", range(len(ALL_COMBOS)))
def test_incremental_equals_encode_every_flag_combination(combo):
    flags = ALL_COMBOS[combo]
    extra = [{}, {"majority_tricks_bonus": 20, "last_trick_bonus": 20}][combo % 2]
    e = rook_env.raw_env(**flags, **extra)
    e.reset(seed=combo)
    run_random(e, combo)
    assert all(e.terminations.values())


@pytest.mark.partnership
@pytest.mark.parametrize("combo", range(0, len(ALL_COMBOS), 11))
def test_incremental_equals_encode_in_game_episodes(combo):
    """Across hand boundaries (next deal, dealer rotated), redeals and the game end."""
    flags = ALL_COMBOS[combo]
    e = rook_env.raw_env(episode="game", target_score=200, reward="win_loss", **flags)
    e.reset(seed=combo, options={"scores": [60, 110]})
    run_random(e, combo, max_steps=1000, decode_every=10)


@pytest.mark.partnership
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), combo=st.integers(0, len(ALL_COMBOS) - 1))
def test_incremental_equals_encode_random(seed, combo):
    e = rook_env.raw_env(**ALL_COMBOS[combo])
    e.reset(seed=seed)
    run_random(e, seed)


@pytest.mark.partnership
def test_redeal_resets_the_auction_in_observations():
    hands, nest = complete_deal({1: "R6 R7 R8 R9 R11 R12 R13 Y6 Y7"})
    e = rook_env.raw_env(episode="game")
    e.reset(seed=3, options={"hands": hands, "nest": nest, "dealer": 3, "scores": [35, 5]})
    step_text(e, "bid 80")
    assert e.unwrapped.decode("player_2").bids == [(2, 80)]
    step_text(e, "redeal")
    check_views(e)
    for agent in e.agents:
        view = e.unwrapped.decode(agent)
        assert view.bids == [] and view.passes == [] and view.bidder is None and view.phase == "bid"
    assert e.unwrapped.decode("player_1").scores == (5, 35)


@pytest.mark.partnership
def test_decode_rejects_wrong_shape():
    with pytest.raises(ValueError, match="583"):
        decode(np.zeros(100, np.float32))
    full = rook_env.RookConfig(deck="full")
    with pytest.raises(ValueError):
        decode(np.zeros(583, np.float32), full)


@pytest.mark.partnership
def test_incremental_equals_encode_through_a_forced_counter_discard():
    """The 'nest holds counters' announcement (rare in random play) reaches every seat's vector."""
    names = "Y6 Y7 B6 B7 R5 R10 R14 G5 G10 G14 B5 B10 B14 Rook".split()
    hands, nest = complete_deal({0: " ".join(names[:9])}, nest=" ".join(names[9:]))
    e = rook_env.raw_env(nest_discard="no_counters_unless_forced")
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    for action in ["bid 70", "pass", "pass", "pass", "trump black", "Y6", "Y7", "R5", "R10", "Rook"]:
        step_text(e, action)
        check_views(e)
    assert e.unwrapped.game.nest_has_counters
    run_random(e, 0)


# Tables of each game walked with random moves: hand and game episodes (call-your-partner Rook at every size).
WALKS = {"partnership": [{}, {"episode": "game", "target_score": 200, "deck": "full"}],
         "call_partner": [{"players": 4}, {"players": 5}, {"players": 6},
                          {"players": 5, "episode": "game", "target_score": 300, "deck": "no_twos_to_fours"}]}


@pytest.mark.parametrize("game, flags", over_games(WALKS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "default"))
def test_observe_equals_the_reference_encoder_at_every_position(game, flags):
    encode_game = encoder(game)
    for seed in range(3):
        for e, _ in positions(game, seed, 600, flags=flags):
            state = e.unwrapped.game
            for me, agent in enumerate(e.possible_agents):
                assert np.array_equal(e.observe(agent)["observation"], encode_game(state, me)), (agent, seed)

