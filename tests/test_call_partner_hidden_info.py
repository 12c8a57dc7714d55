"""Hidden information in call-your-partner Rook (RULES.md C11): a seat's observation depends
only on what that seat has seen, including who the bidder's partners are.

The main check re-deals the cards a seat cannot see (other hands, and the nest and discards
unless it is the bidder) by a random permutation, recomputes the partners from the new holders
of the called cards, and requires the seat's observation to be unchanged, while seats whose
cards moved see a change (so the check has teeth)."""

import random

import numpy as np
from call_partner_helpers import bits_of, cp_deal, scripted_setup
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rook_env.games import call_partner
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.observation import decode, encode, obs_layout
from rook_env.games.call_partner.rules import BID, PLAY, CallPartnerState

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def seen_mask(game, me):
    seen = game.hands[me] | game.played
    if me == game.bidder and game.phase != BID:
        seen |= game.nest | game.discards
    return seen


def permuted(game, me, rng):
    """A clone of ``game`` with the cards unseen by ``me`` permuted among their places (other
    hands, nest, discards), sizes kept, partners recomputed; ``None`` when no consistent
    permutation was found (the nest announcement must keep its value, and the bidder cannot
    hold a called card)."""
    L = game.L
    unseen = bits_of(L.all_cards & ~seen_mask(game, me))
    for _ in range(30):
        image = unseen[:]
        rng.shuffle(image)
        sigma = dict(zip(unseen, image))

        def apply(mask):
            return sum(1 << sigma.get(c, c) for c in bits_of(mask))

        new = game.clone()
        new.hands = [h if s == me else apply(h) for s, h in enumerate(game.hands)]
        new.nest = apply(game.nest)
        new.discards = apply(game.discards)
        if game.discards.bit_count() == L.nest_size and bool(new.discards & L.counter_mask) != game.nest_has_counters:
            continue
        if game.bidder >= 0 and game.phase != BID and any(new.hands[game.bidder] >> c & 1 for c in game.called):
            continue
        if game.called and len(game.called) == game.config.n_called:
            new.partners = new.called_holders()
        return new
    return None


flags_strategy = st.fixed_dictionaries(
    {
        "players": st.sampled_from([4, 5, 6]),
        "deck": st.sampled_from(["full", "no_twos_to_fours"]),
        "nest_discard": st.sampled_from(["any", "no_counters_unless_forced"]),
        "episode": st.sampled_from(["hand", "game"]),
    }
)


@settings(max_examples=120, **SETTINGS)
@given(seed=st.integers(0, 2**31), flags=flags_strategy, stop=st.integers(0, 90), cheap=st.booleans())
def test_observation_invariant_to_unseen_cards(seed, flags, stop, cheap):
    e = call_partner.raw_env(**flags)
    e.reset(seed=seed)
    game = e.game
    rng = random.Random(seed)
    if cheap:  # a minimum contract reaches the play phase more often than random bids
        scripted_setup(game)
    for _ in range(stop):
        if all(e.terminations.values()):
            break
        e.step(rng.choice(game.legal_actions()))
    n = game.n
    for me in range(n):
        mine = e.observe(f"player_{me}")["observation"]
        assert np.array_equal(mine, encode(game, me))
        for _ in range(3):
            new = permuted(game, me, rng)
            if new is None:
                continue
            assert np.array_equal(encode(new, me), mine), f"player_{me} sees a hidden card or partner"
            for other in range(n):
                if other != me and new.hands[other] != game.hands[other]:
                    assert not np.array_equal(encode(new, other), encode(game, other))


def called_state(players=5, seed=0):
    """A hand in the play phase where seat 0 (dealer 4's left) bid, and called the highest card
    of seat 2; nothing played yet."""
    cfg = CallPartnerConfig(players=players)
    hands, nest = cp_deal(cfg)
    st_ = CallPartnerState(cfg, seed=seed)
    st_.new_game(dealer=players - 1, hands=hands, nest=nest)
    called = bits_of(st_.hands[2])[-1]
    scripted_setup(st_, called=[called] * cfg.n_called if players != 6 else [called, bits_of(st_.hands[3])[-1]])
    assert st_.phase == PLAY and not st_.played
    return st_, called


def test_defenders_and_bidder_do_not_learn_who_holds_the_called_card():
    """Move the called card from seat 2 to seat 3 (swapping a card back): seats 0 (the bidder),
    1 and 4 see nothing change; the old and the new holder do."""
    game, called = called_state()
    assert game.partners == (2,)
    before = [encode(game, s) for s in range(5)]
    ol = obs_layout(game.config)
    assert before[2][ol.PARTNERS] == 1.0  # the holder knows at once
    assert not any(before[s][ol.slices["partners"]].any() for s in (0, 1, 3, 4))
    other = bits_of(game.hands[3])[0]
    moved = game.clone()
    moved.hands[2] ^= (1 << called) | (1 << other)
    moved.hands[3] ^= (1 << called) | (1 << other)
    moved.partners = moved.called_holders()
    assert moved.partners == (3,)
    after = [encode(moved, s) for s in range(5)]
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
            assert np.array_equal(before[s], encode(alone, s))
        assert not np.array_equal(before[0], encode(alone, 0))


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
            view = decode(encode(game, me), cfg)
            rel2 = (2 - me) % 5
            if game.played >> called & 1:
                assert view.known_partners == [rel2]
            else:
                assert view.known_partners == ([0] if me == 2 else [])


def test_six_players_one_holder_knows_only_its_own_card():
    """With two called cards each holder knows itself, not the other holder, until it is played."""
    game, _ = called_state(players=6)
    assert game.partners == (2, 3)
    ol = obs_layout(game.config)
    for s in range(6):
        part = encode(game, s)[ol.slices["partners"]]
        assert part.tolist() == [1.0 if (s in (2, 3) and r == 0) else 0.0 for r in range(6)]


def test_only_the_bidder_sees_nest_and_discards():
    e = call_partner.raw_env(players=4)
    e.reset(seed=11)
    game = e.game
    ol = e.obs_layout
    rng = random.Random(11)
    while not all(e.terminations.values()):
        for me, agent in enumerate(e.agents):
            v = e.observe(agent)["observation"]
            hidden = v[ol.slices["nest"]].any() or v[ol.slices["discards"]].any()
            assert hidden == (me == game.bidder and game.phase != BID and bool(game.nest))
            assert set(np.flatnonzero(v[ol.slices["hand"]]).tolist()) == set(bits_of(game.hands[me]))
        e.step(rng.choice(game.legal_actions()))


def test_decode_round_trip():
    game, called = called_state()
    rng = random.Random(5)
    for _ in range(13):
        game.apply(rng.choice(game.legal_actions()))
    for me in range(5):
        v = decode(encode(game, me), game.config)
        rel = lambda s: (s - me) % 5  # noqa: E731
        assert v.hand == bits_of(game.hands[me]) and v.called == [called]
        assert v.bidder == rel(game.bidder) and v.contract == 100 and v.rook == "high" and v.trump == 0
        assert v.played == {c: rel(game.played_by[c]) for c in bits_of(game.played)}
        assert v.trick == [(rel((game.leader + i) % 5), c) for i, c in enumerate(game.trick)]
        assert v.points == [game.points[(me + r) % 5] for r in range(5)]
        assert v.tricks_left == game.L.n_tricks - len(game.tricks) and v.dealer == rel(4)
        assert (v.nest != []) == (me == 0)
        assert "called: " in v.text()
