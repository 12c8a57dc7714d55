"""Hidden information, in every game: a seat's observation depends only on what that seat has seen
(in call-your-partner Rook, RULES.md C11, that includes who the bidder's partners are).

The main check re-deals the cards a seat cannot see (the other hands, and the nest and discards
unless it is the bidder) by a random permutation, rebuilds the observation with the game's reference
``encode`` (in call-your-partner Rook with the partners recomputed from the new holders of the called
cards), and requires the seat's vector to be unchanged, while the seats whose cards moved see a change
(so the check has teeth)."""

import random

import numpy as np
import pytest
from helpers import (
    GAMES,
    bits_of,
    complete_deal,
    cp_deal,
    encoder,
    per_game,
    positions,
    scripted_setup,
    step_text,
    walk,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import rook_env
from rook_env.games import call_partner
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.observation import decode as cp_decode
from rook_env.games.call_partner.observation import encode as cp_encode
from rook_env.games.call_partner.observation import obs_layout as cp_obs_layout
from rook_env.games.call_partner.rules import PLAY as CP_PLAY
from rook_env.games.call_partner.rules import CallPartnerState
from rook_env.games.partnership.observation import encode
from rook_env.games.partnership.rules import BID  # the auction is phase 0 in every game

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def seen_mask(game, me):
    """The cards seat ``me`` has seen: its hand, the cards played, and the nest and discards once it is the
    bidder after the auction (the same in every game)."""
    seen = game.hands[me] | game.played
    if me == game.bidder and game.phase != BID:
        seen |= game.nest | game.discards
    return seen


def _partnership_consistent(old, new):
    """The 'nest holds counters' announcement (the German discard) must keep its value."""
    if old.discards.bit_count() == 5 and old.config.nest_discard == "no_counters_unless_forced":
        return bool(new.discards & old.L.counter_mask) == old.nest_has_counters
    return True


def _call_partner_consistent(old, new):
    """The nest announcement must keep its value, the bidder cannot hold a called card; the partners are
    recomputed from the new holders of the called cards."""
    L = old.L
    if old.discards.bit_count() == L.nest_size and bool(new.discards & L.counter_mask) != old.nest_has_counters:
        return False
    if old.bidder >= 0 and old.phase != BID and any(new.hands[old.bidder] >> c & 1 for c in old.called):
        return False
    if old.called and len(old.called) == old.config.n_called:
        new.partners = new.called_holders()
    return True


CONSISTENT = per_game({"partnership": _partnership_consistent, "call_partner": _call_partner_consistent})


def permuted(game_name, game, me, rng, tries=30):
    """A clone of ``game`` (a rules state of game ``game_name``) with the cards unseen by ``me`` permuted among
    their places (other hands, nest, discards), sizes kept; ``None`` when no permutation consistent with what
    the table was told was found (see ``CONSISTENT``)."""
    unseen = bits_of(game.L.all_cards & ~seen_mask(game, me))
    for _ in range(tries):
        image = unseen[:]
        rng.shuffle(image)
        sigma = dict(zip(unseen, image))

        def apply(mask):
            return sum(1 << sigma.get(c, c) for c in bits_of(mask))

        new = game.clone()
        new.hands = [h if s == me else apply(h) for s, h in enumerate(game.hands)]
        new.nest = apply(game.nest)
        new.discards = apply(game.discards)
        if CONSISTENT[game_name](game, new):
            return new
    return None


# Each game's rule flags that matter to what a seat sees.
FLAGS = per_game({
    "partnership": st.fixed_dictionaries({
        "nest_discard": st.sampled_from(["any", "no_counters_unless_forced"]),
        "deck": st.sampled_from(["tournament", "full"]),
        "rook_rank": st.sampled_from(["high", "low"]),
        "first_lead": st.sampled_from(["left_of_dealer", "bidder"]),
        "episode": st.sampled_from(["hand", "game"]),
    }),
    "call_partner": st.fixed_dictionaries({
        "players": st.sampled_from([4, 5, 6]),
        "deck": st.sampled_from(["full", "no_twos_to_fours"]),
        "nest_discard": st.sampled_from(["any", "no_counters_unless_forced"]),
        "episode": st.sampled_from(["hand", "game"]),
    }),
})
# A scripted minimum contract (it reaches the play phase more often than random bids), where the game has one.
CHEAP_SETUP = per_game({"partnership": None, "call_partner": scripted_setup})


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=150, **SETTINGS)
@given(seed=st.integers(0, 2**31), stop=st.integers(0, 90), cheap=st.booleans(), data=st.data())
def test_observation_invariant_to_unseen_cards(game, seed, stop, cheap, data):
    flags = data.draw(FLAGS[game], label="flags")
    rng = random.Random(seed)
    setup = CHEAP_SETUP[game] if cheap else None
    e = walk(game, seed, stop, flags=flags, setup=setup, rng=rng)
    state = e.unwrapped.game
    encode_ = encoder(game)
    n = len(e.possible_agents)
    for me in range(n):
        mine = e.observe(f"player_{me}")["observation"]
        assert np.array_equal(mine, encode_(state, me))
        for _ in range(3):
            new = permuted(game, state, me, rng)
            if new is None:
                continue
            assert np.array_equal(encode_(new, me), mine), f"player_{me} sees a hidden card or partner"
            for other in range(n):
                if other != me and new.hands[other] != state.hands[other]:
                    assert not np.array_equal(encode_(new, other), encode_(state, other))


# Tables where only the bidder may see the nest: the default rules and the German discard (the nest's
# counters announced), and call-your-partner Rook at each table size.
NEST_TABLES = per_game({
    "partnership": [{}, {"nest_discard": "no_counters_unless_forced"}],
    "call_partner": [{"players": 4}, {"players": 5}, {"players": 6, "nest_discard": "no_counters_unless_forced"}],
})


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=30, **SETTINGS)
@given(seed=st.integers(0, 2**31), table=st.integers(0, 2))
@example(seed=11, table=0)
def test_only_the_bidder_ever_sees_the_nest_and_discards(game, seed, table):
    """Every position of a random hand: a seat's hand section is its hand; nest and discards are empty in
    every seat's vector during the auction and for every seat but the bidder (and the nest's cards are in no
    other seat's hand section); the bidder sees exactly the nest and the discards."""
    tables = NEST_TABLES[game]
    e = rook_env.raw_env(game=game, **tables[table % len(tables)])
    e.reset(seed=seed)
    ol = e.unwrapped.obs_layout
    for _ in positions(e, seed):
        state = e.unwrapped.game
        if state.phase == BID:
            nest_cards = set(bits_of(state.nest))  # (a redeal deals a new nest)
        for me, agent in enumerate(e.agents):
            v = e.observe(agent)["observation"]
            nest_sec, disc_sec = v[ol.slices["nest"]], v[ol.slices["discards"]]
            hand = set(np.flatnonzero(v[ol.slices["hand"]]).tolist())
            assert hand == set(bits_of(state.hands[me]))
            hidden = nest_sec.any() or disc_sec.any()
            assert hidden == (me == state.bidder and state.phase != BID and bool(state.nest))
            if state.phase == BID or me != state.bidder:
                assert not nest_sec.any() and not disc_sec.any()
                assert not hand & nest_cards  # the nest's cards are in no one else's hand section
            else:
                assert set(np.flatnonzero(nest_sec).tolist()) == set(bits_of(state.nest))
                assert set(np.flatnonzero(disc_sec).tolist()) == set(bits_of(state.discards))


# ------------------------------------------------------------------------------ the partnership game
@pytest.mark.partnership
def test_partners_do_not_see_each_others_cards():
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    obs = {a: e.observe(a)["observation"] for a in e.agents}
    assert not np.array_equal(obs["player_0"], obs["player_2"])
    ol = e.unwrapped.obs_layout
    h0, h2 = obs["player_0"][ol.slices["hand"]], obs["player_2"][ol.slices["hand"]]
    assert not (h0 * h2).any()
    # Swap a card between player_2 (partner) and player_1: player_0's view is unchanged.
    game = e.unwrapped.game
    a, b = bits_of(game.hands[2])[0], bits_of(game.hands[1])[0]
    swapped = game.clone()
    swapped.hands[2] ^= (1 << a) | (1 << b)
    swapped.hands[1] ^= (1 << a) | (1 << b)
    assert np.array_equal(encode(swapped, 0), obs["player_0"])
    assert np.array_equal(encode(swapped, 3), obs["player_3"])
    assert not np.array_equal(encode(swapped, 2), obs["player_2"])


@pytest.mark.partnership
def test_bidder_sees_nest_after_auction():
    hands, nest = complete_deal({}, nest="R5 Y10 G14 B6 Rook")
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 0})
    assert all(e.unwrapped.decode(a).nest == [] for a in e.agents)
    step_text(e, "pass", "bid 75", "pass", "pass")
    v = e.unwrapped.decode("player_2")
    assert sorted(v.nest) == sorted(nest) and set(nest) <= set(v.hand) and len(v.hand) == 14
    for a in ("player_0", "player_1", "player_3"):
        view = e.unwrapped.decode(a)
        assert view.nest == [] and not set(nest) & set(view.hand)


# ------------------------------------------------------------------------------ call-your-partner Rook
def called_state(players=5, seed=0):
    """A call-your-partner hand in the play phase where seat 0 (dealer 4's left) bid, and called the highest
    card of seat 2; nothing played yet."""
    cfg = CallPartnerConfig(players=players)
    hands, nest = cp_deal(cfg)
    st_ = CallPartnerState(cfg, seed=seed)
    st_.new_game(dealer=players - 1, hands=hands, nest=nest)
    called = bits_of(st_.hands[2])[-1]
    scripted_setup(st_, called=[called] * cfg.n_called if players != 6 else [called, bits_of(st_.hands[3])[-1]])
    assert st_.phase == CP_PLAY and not st_.played
    return st_, called


@pytest.mark.call_partner
def test_defenders_and_bidder_do_not_learn_who_holds_the_called_card():
    """Move the called card from seat 2 to seat 3 (swapping a card back): seats 0 (the bidder),
    1 and 4 see nothing change; the old and the new holder do."""
    game, called = called_state()
    assert game.partners == (2,)
    before = [cp_encode(game, s) for s in range(5)]
    ol = cp_obs_layout(game.config)
    assert before[2][ol.PARTNERS] == 1.0  # the holder knows at once
    assert not any(before[s][ol.slices["partners"]].any() for s in (0, 1, 3, 4))
    other = bits_of(game.hands[3])[0]
    moved = game.clone()
    moved.hands[2] ^= (1 << called) | (1 << other)
    moved.hands[3] ^= (1 << called) | (1 << other)
    moved.partners = moved.called_holders()
    assert moved.partners == (3,)
    after = [cp_encode(moved, s) for s in range(5)]
    for s in (0, 1, 4):
        assert np.array_equal(before[s], after[s]), f"player_{s} learnt who the partner is"
    assert not np.array_equal(before[2], after[2]) and not np.array_equal(before[3], after[3])
    assert after[3][ol.PARTNERS] == 1.0 and after[2][ol.PARTNERS] == 0.0
    # Into the nest: the bidder would play alone. Only the bidder (who sees the nest) and the
    # old holder can tell.
    nest_card = bits_of(game.discards)[0]
    alone = game.clone()
    alone.hands[2] ^= (1 << called) | (1 << nest_card)
    alone.discards ^= (1 << called) | (1 << nest_card)
    if bool(alone.discards & game.L.counter_mask) == game.nest_has_counters:
        alone.partners = alone.called_holders()
        assert alone.partners == ()
        for s in (1, 3, 4):
            assert np.array_equal(before[s], cp_encode(alone, s))
        assert not np.array_equal(before[0], cp_encode(alone, 0))


@pytest.mark.call_partner
def test_everyone_learns_the_partner_when_the_called_card_is_played():
    e = call_partner.raw_env()
    cfg = e.config
    hands, nest = cp_deal(cfg)
    e.reset(options={"hands": hands, "nest": nest, "dealer": 4})
    game = e.game
    called = bits_of(game.hands[2])[-1]
    scripted_setup(game, called=[called])
    rng = random.Random(0)
    while not game.played >> called & 1:
        seat = game.current
        legal = game.legal_actions()
        # Seat 2 plays the called card as soon as it may.
        game.apply(called if seat == 2 and called in legal else rng.choice([a for a in legal if a != called] or legal))
        for me in range(5):
            view = cp_decode(cp_encode(game, me), cfg)
            rel2 = (2 - me) % 5
            if game.played >> called & 1:
                assert view.known_partners == [rel2]
            else:
                assert view.known_partners == ([0] if me == 2 else [])


@pytest.mark.call_partner
def test_six_players_one_holder_knows_only_its_own_card():
    """With two called cards each holder knows itself, not the other holder, until it is played."""
    game, _ = called_state(players=6)
    assert game.partners == (2, 3)
    ol = cp_obs_layout(game.config)
    for s in range(6):
        part = cp_encode(game, s)[ol.slices["partners"]]
        assert part.tolist() == [1.0 if (s in (2, 3) and r == 0) else 0.0 for r in range(6)]


@pytest.mark.call_partner
def test_decode_round_trip():
    game, called = called_state()
    rng = random.Random(5)
    for _ in range(13):
        game.apply(rng.choice(game.legal_actions()))
    for me in range(5):
        v = cp_decode(cp_encode(game, me), game.config)
        rel = lambda s: (s - me) % 5  # noqa: E731
        assert v.hand == bits_of(game.hands[me]) and v.called == [called]
        assert v.bidder == rel(game.bidder) and v.contract == 100 and v.rook == "high" and v.trump == 0
        assert v.played == {c: rel(game.played_by[c]) for c in bits_of(game.played)}
        assert v.trick == [(rel((game.leader + i) % 5), c) for i, c in enumerate(game.trick)]
        assert v.points == [game.points[(me + r) % 5] for r in range(5)]
        assert v.tricks_left == game.L.n_tricks - len(game.tricks) and v.dealer == rel(4)
        assert (v.nest != []) == (me == 0)
        assert "called: " in v.text()
