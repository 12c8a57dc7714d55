"""Hidden information: a seat's observation depends only on what that seat has seen.

The main check re-deals the cards a seat cannot see (the other hands, and the nest/discards
unless it is the bidder) by a random permutation, rebuilds the observation with the reference
``encode``, and requires the seat's vector to be unchanged, while the seats whose cards moved
see a change (so the check has teeth)."""

import random

import numpy as np
from helpers import complete_deal, step_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rook_env
from rook_env.games.partnership.cards import bits
from rook_env.games.partnership.observation import encode
from rook_env.games.partnership.rules import BID

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def seen_mask(game, me):
    seen = game.hands[me] | game.played
    if me == game.bidder and game.phase != BID:
        seen |= game.nest | game.discards
    return seen


def permuted(game, me, rng):
    """A clone of ``game`` with the cards unseen by ``me`` permuted among their holders
    (other hands, nest, discards), hand sizes kept; ``None`` if no consistent permutation
    was found (the 'nest holds counters' announcement must keep its value)."""
    L = game.L
    unseen = bits(L.all_cards & ~seen_mask(game, me))
    for _ in range(20):
        image = unseen[:]
        rng.shuffle(image)
        sigma = dict(zip(unseen, image))

        def apply(mask):
            return sum(1 << sigma.get(c, c) for c in bits(mask))

        new = game.clone()
        new.hands = [h if s == me else apply(h) for s, h in enumerate(game.hands)]
        new.nest = apply(game.nest)
        new.discards = apply(game.discards)
        if game.discards.bit_count() == 5 and game.config.nest_discard == "no_counters_unless_forced":
            if bool(new.discards & L.counter_mask) != game.nest_has_counters:
                continue
        return new
    return None


flags_strategy = st.fixed_dictionaries(
    {
        "nest_discard": st.sampled_from(["any", "no_counters_unless_forced"]),
        "deck": st.sampled_from(["tournament", "full"]),
        "rook_rank": st.sampled_from(["high", "low"]),
        "first_lead": st.sampled_from(["left_of_dealer", "bidder"]),
        "episode": st.sampled_from(["hand", "game"]),
    }
)


@settings(max_examples=150, **SETTINGS)
@given(seed=st.integers(0, 2**31), flags=flags_strategy, stop=st.integers(0, 80))
def test_observation_invariant_to_unseen_cards(seed, flags, stop):
    e = rook_env.raw_env(**flags)
    e.reset(seed=seed)
    rng = random.Random(seed)
    game = e.unwrapped.game
    for _ in range(stop):
        if all(e.terminations.values()):
            break
        e.step(rng.choice(game.legal_actions()))
    for me in range(4):
        mine = e.observe(f"player_{me}")["observation"]
        assert np.array_equal(mine, encode(game, me))
        for _ in range(3):
            new = permuted(game, me, rng)
            if new is None:
                continue
            assert np.array_equal(encode(new, me), mine), f"player_{me} sees a hidden card"
            for other in range(4):
                if other != me and new.hands[other] != game.hands[other]:
                    assert not np.array_equal(encode(new, other), encode(game, other))


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
    a, b = bits(game.hands[2])[0], bits(game.hands[1])[0]
    swapped = game.clone()
    swapped.hands[2] ^= (1 << a) | (1 << b)
    swapped.hands[1] ^= (1 << a) | (1 << b)
    assert np.array_equal(encode(swapped, 0), obs["player_0"])
    assert np.array_equal(encode(swapped, 3), obs["player_3"])
    assert not np.array_equal(encode(swapped, 2), obs["player_2"])


@settings(max_examples=30, **SETTINGS)
@given(seed=st.integers(0, 2**31), german=st.booleans())
def test_only_the_bidder_ever_sees_the_nest(seed, german):
    flags = {"nest_discard": "no_counters_unless_forced"} if german else {}
    e = rook_env.raw_env(**flags)
    e.reset(seed=seed)
    ol = e.unwrapped.obs_layout
    game = e.unwrapped.game
    rng = random.Random(seed)
    while not all(e.terminations.values()):
        if game.phase == BID:
            nest_cards = set(bits(game.nest))  # (a redeal deals a new nest)
        for me, agent in enumerate(e.agents):
            v = e.observe(agent)["observation"]
            nest_sec, disc_sec = v[ol.slices["nest"]], v[ol.slices["discards"]]
            if game.phase == BID or me != game.bidder:
                assert not nest_sec.any() and not disc_sec.any()
                # The nest's cards are in no one else's hand section.
                hand = set(np.flatnonzero(v[ol.slices["hand"]]).tolist())
                assert hand == set(bits(game.hands[me]))
                assert not hand & nest_cards
            else:
                assert set(np.flatnonzero(nest_sec).tolist()) == set(bits(game.nest))
                assert set(np.flatnonzero(disc_sec).tolist()) == set(bits(game.discards))
        e.step(rng.choice(game.legal_actions()))


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
