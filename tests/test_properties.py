"""Property-based tests of every game: thousands of random hands under random flag combinations, played
cheaply at the rules state's level (and a few hundred through the env), checking the invariants of
RULES.md (R1-R10 and F1-F21; section C for call-your-partner Rook) after every action against small
independent oracles written from its text."""

import random

import numpy as np
import pytest
from helpers import GAMES, per_game, positions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rook_env
from rook_env.games.call_partner import rules as cp
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.rules import CallPartnerState
from rook_env.games.partnership.cards import N_SEATS, bits
from rook_env.games.partnership.config import RookConfig
from rook_env.games.partnership.rules import BID, DISCARD, OVER, PLAY, TRUMP, RookState

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# The partnership game's rule flags (RULES.md R1-R10, F1-F12) and call-your-partner Rook's (section C).
flags_strategy = st.fixed_dictionaries(
    {
        "all_pass": st.sampled_from(["dealer_forced", "redeal"]),
        "no_counter_redeal": st.sampled_from(["on", "off"]),
        "nest_discard": st.sampled_from(["any", "no_counters_unless_forced"]),
        "first_lead": st.sampled_from(["left_of_dealer", "left_of_bidder", "bidder"]),
        "rook_rank": st.sampled_from(["high", "low", "ten_and_half"]),
        "deck": st.sampled_from(["tournament", "full"]),
        "majority_tricks_bonus": st.sampled_from([0, 20]),
        "last_trick_bonus": st.sampled_from([0, 20]),
    }
)


cp_flags_strategy = st.fixed_dictionaries(
    {
        "players": st.sampled_from([4, 5, 6]),
        "deck": st.sampled_from(["full", "no_twos_to_fours"]),
        "all_pass": st.sampled_from(["dealer_forced", "redeal"]),
        "no_counter_redeal": st.sampled_from(["on", "off"]),
        "nest_discard": st.sampled_from(["any", "no_counters_unless_forced"]),
        "first_lead": st.sampled_from(["left_of_dealer", "left_of_bidder", "bidder"]),
        "episode": st.sampled_from(["hand", "game"]),
    }
)


# ------------------------------------------------------------------------------ oracles
def oracle_play_mask(s: RookState) -> int:
    """RULES.md 'Play' rules 1-5 (and rook_rank), written from the text."""
    L = s.L
    hand = bits(s.hands[s.current])
    if not s.trick:
        return sum(1 << c for c in hand)
    high = s.config.rook_rank == "high"

    def is_trump(c):  # the Rook Bird is a trump in every mode
        return c == L.rook or L.card_colour[c] == s.trump

    led = s.trick[0]
    if is_trump(led):  # rule 4: a led Rook is a trump lead
        allowed = [c for c in hand if is_trump(c)]  # rule 5
    else:
        allowed = [c for c in hand if L.card_colour[c] == L.card_colour[led]]  # rule 1
        if allowed and high and L.rook in hand:
            allowed.append(L.rook)  # rule 3
    return sum(1 << c for c in (allowed or hand))  # rule 2


def oracle_trick_winner(cards, trump: int, rook_rank: str, L) -> int:
    led = cards[0]
    led_colour = trump if led == L.rook else L.card_colour[led]

    def strength(c):
        if c == L.rook:
            return {"high": (2, 0), "low": (1, 0), "ten_and_half": (1, 10.5)}[rook_rank]
        power = 15 if L.card_rank[c] == 1 else L.card_rank[c]
        if L.card_colour[c] == trump:
            return (1, power)
        if L.card_colour[c] == led_colour:
            return (0, power)
        return (-1, 0)

    return max(range(4), key=lambda i: strength(cards[i]))


def expected_deltas(res, bid_team: int):
    total = [res["counters"][t] + res["bonus"][t] for t in (0, 1)]
    delta = [0, 0]
    delta[bid_team] = total[bid_team] if total[bid_team] >= res["bid"] else -res["bid"]
    delta[1 - bid_team] = total[1 - bid_team]
    return delta


# ------------------------------------------------------------------------------ the checker
class Checker:
    """Plays a RookState with random legal actions, asserting invariants after every step."""

    def __init__(self, config: RookConfig, seed: int, p_pass: float = 0.0, max_hands: int = 10**6):
        self.cfg = config
        self.rng = random.Random(seed)
        self.s = RookState(config, seed=seed)
        self.L = self.s.L
        self.p_pass = p_pass  # extra chance to pass in the auction (uniform random bids rarely make)
        self.max_hands = max_hands
        self.hands_checked = 0

    def check_deal(self):
        s, L = self.s, self.L
        assert s.phase == BID and s.current == (s.dealer + 1) % N_SEATS
        assert [h.bit_count() for h in s.hands] == [L.hand_size] * 4 and s.nest.bit_count() == 5
        union = s.nest
        for h in s.hands:
            assert not union & h
            union |= h
        assert union == L.all_cards  # hands and nest partition the deck
        self.hand_cards: list[int] = []  # cards played or discarded since the deal

    def run(self, scores=None):
        s, L, cfg = self.s, self.L, self.cfg
        s.new_game(scores=scores)
        self.check_deal()
        scores = list(s.scores)
        while not s.is_over:
            mask = s.legal_mask()
            assert mask, "the seat to act must have a legal action"
            phase, seat, dealer, deals, played = s.phase, s.current, s.dealer, s.deals, s.hands_played
            if phase == PLAY:
                assert mask == oracle_play_mask(s)
                if cfg.rook_rank == "high" and s.hands[seat] & L.rook_bit:
                    assert mask & L.rook_bit  # the Rook may always be played when held
                trick_before, leader, trump = list(s.trick), s.leader, s.trump
            elif phase == BID:
                assert mask & ~(L.bid_mask | (1 << L.PASS) | (1 << L.REDEAL)) == 0
                redeal_ok = cfg.no_counter_redeal == "on" and not s.hands[seat] & L.counter_mask
                assert bool(mask >> L.REDEAL & 1) == redeal_ok
                assert not s.passed[seat]  # a pass is final
                if s.n_passed == 3 and s.high_bid < 0:  # the first three passed: the dealer is forced
                    assert cfg.all_pass == "dealer_forced"  # (with all_pass=redeal it redealt at once)
                    assert seat == dealer and mask & ~(1 << L.REDEAL) == 1 << L.BID0
                else:  # pass, or any bid above the high bid
                    above = sum(1 << (L.BID0 + i) for i in range(s.high_bid + 1, L.n_bids))
                    assert mask & ~(1 << L.REDEAL) == (1 << L.PASS) | above
                n_passed_before, high_before = s.n_passed, s.high_bid
            elif phase == DISCARD:
                assert mask & ~s.hands[s.bidder] == 0 and seat == s.bidder
                if cfg.nest_discard == "no_counters_unless_forced":
                    assert s.trump >= 0  # trump is named before discarding
                    hand = s.hands[s.bidder]
                    forced = all(L.card_points[c] or L.card_colour[c] == s.trump for c in bits(hand))
                    assert mask == (hand if forced else hand & ~L.counter_mask)
                else:
                    assert mask == s.hands[s.bidder] and s.trump < 0
            else:
                assert phase == TRUMP and mask == L.trump_mask
            if phase == BID and mask >> L.PASS & 1 and self.rng.random() < self.p_pass:
                a = L.PASS
            else:
                a = self.rng.choice(bits(mask))
            s.apply(a)
            if phase in (PLAY, DISCARD):
                self.hand_cards.append(a)
            if phase == BID and s.deals == deals:
                # The auction ends as soon as three have passed after a bid, or someone bids the maximum.
                ends = (a == L.PASS and n_passed_before == 2 and high_before >= 0) or (
                    a != L.PASS and (a == L.BID0 + L.n_bids - 1 or n_passed_before == 3))
                assert (s.phase != BID) == ends
                if ends:
                    assert s.current == s.bidder and s.hands[s.bidder].bit_count() == L.hand_size + 5
            if phase in (DISCARD, TRUMP) and s.phase == PLAY:
                expect_leader = {"left_of_dealer": (dealer + 1) % 4, "left_of_bidder": (s.bidder + 1) % 4,
                                 "bidder": s.bidder}[cfg.first_lead]
                assert s.leader == s.current == expect_leader
                assert s.discards.bit_count() == 5 and s.trump >= 0
                assert s.nest_has_counters == (
                    cfg.nest_discard == "no_counters_unless_forced" and bool(s.discards & L.counter_mask))
            if phase == PLAY and len(trick_before) == 3:  # this card completed a trick
                cards = trick_before + [a]
                w = (leader + oracle_trick_winner(cards, trump, cfg.rook_rank, L)) % 4
                if L.rook in cards and cfg.rook_rank == "high":
                    assert w == (leader + cards.index(L.rook)) % 4
                self.last_trick_winner = w
                if s.hands_played == played:
                    assert s.leader == w and s.current == w
            if s.hands_played != played:
                self.check_hand_end(dealer, scores)
                scores = list(s.scores)
                if not s.is_over:
                    assert s.dealer == (dealer + 1) % 4  # the dealer rotates after every hand
                    self.check_deal()
                    if self.hands_checked >= self.max_hands:
                        return
            elif s.deals != deals:  # a redeal: same dealer, scores unchanged
                assert a == L.REDEAL or (phase == BID and a == L.PASS and cfg.all_pass == "redeal")
                assert s.dealer == dealer and s.scores == scores
                self.check_deal()
            else:
                assert s.dealer == dealer
        if cfg.episode == "hand":
            assert s.played | s.discards == L.all_cards and not s.played & s.discards
            assert len(s.tricks) == L.n_tricks

    def check_hand_end(self, dealer, scores_before):
        s, L, cfg = self.s, self.L, self.cfg
        res = s.hand_result
        self.hands_checked += 1
        # Every card accounted for: played + discards = the deck, each once.
        assert sorted(self.hand_cards) == list(range(L.n_cards))
        assert res["tricks_won"][0] + res["tricks_won"][1] == L.n_tricks
        assert sum(res["counters"]) == L.total_points  # 120 (180 with the full deck)
        assert res["last_trick_team"] == self.last_trick_winner % 2
        maj = 0 if res["tricks_won"][0] > res["tricks_won"][1] else 1
        expect_bonus = [0, 0]
        expect_bonus[maj] += cfg.majority_tricks_bonus
        expect_bonus[res["last_trick_team"]] += cfg.last_trick_bonus
        assert res["bonus"] == expect_bonus
        bid_team = res["bidder"] % 2
        assert res["hand_scores"] == expected_deltas(res, bid_team)
        assert res["made"] == (res["counters"][bid_team] + res["bonus"][bid_team] >= res["bid"])
        assert s.scores == [scores_before[t] + res["hand_scores"][t] for t in (0, 1)]
        over = max(s.scores) >= cfg.target_score and s.scores[0] != s.scores[1]
        if cfg.episode == "game":
            assert (s.phase == OVER) == over
            assert s.winner == ((0 if s.scores[0] > s.scores[1] else 1) if over else -1)
        else:
            assert s.phase == OVER


@settings(max_examples=200, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), flags=flags_strategy)
def partnership_random_hands(seed, flags):
    # 12 hands per example, 200 examples: 2,400 hands per run (about a second).
    for k in range(12):
        c = Checker(RookConfig(**flags), seed * 16 + k, p_pass=(k % 3) / 3)
        c.run()
        assert c.hands_checked == 1


# ------------------------------------------------------------------------------ call-your-partner Rook (C)
def cp_oracle_play_mask(s: CallPartnerState) -> int:
    """Call-your-partner Rook, RULES.md C7.1-C7.2: follow the led colour when able; the Rook Bird is a trump card."""
    L = s.L
    hand = [c for c in range(L.n_cards) if s.hands[s.current] >> c & 1]
    if not s.trick:
        return sum(1 << c for c in hand)

    def colour(c):  # the Rook Bird belongs to the trump colour
        return s.trump if c == L.rook else L.card_colour[c]

    allowed = [c for c in hand if colour(c) == colour(s.trick[0])]
    return sum(1 << c for c in (allowed or hand))


def cp_check_invariants(s: CallPartnerState) -> None:
    L, n = s.L, s.n
    legal = s.legal_mask()
    if s.phase == cp.OVER:
        assert legal == 0
        return
    assert legal and legal >> L.n_actions == 0
    held = 0
    for h in s.hands:
        assert not held & h
        held |= h
    if s.phase == cp.BID:
        assert not held & s.nest and held | s.nest == L.all_cards
        assert legal & ~(L.bid_mask | 1 << L.PASS | 1 << L.REDEAL) == 0
        assert all(h.bit_count() == L.hand_size for h in s.hands)
        return
    # After the auction: hands + new nest (discards) + played cards partition the deck.
    assert not held & s.discards and not held & s.played and not s.discards & s.played
    assert held | s.discards | s.played == L.all_cards
    assert s.nest & ~(s.hands[s.bidder] | s.discards | s.played) == 0
    if s.phase == cp.DISCARD:
        assert legal & ~s.hands[s.bidder] == 0
    elif s.phase == cp.TRUMP:
        assert legal == L.trump_mask
    elif s.phase == cp.ROOK:
        assert legal == L.rook_mask
    elif s.phase == cp.CALL:
        assert legal == L.all_cards & ~s.hands[s.bidder] & ~sum(1 << c for c in s.called)
    else:
        assert s.phase == cp.PLAY and s.discards.bit_count() == L.nest_size
        assert legal == cp_oracle_play_mask(s)
        done = len(s.tricks)
        for k in range(n):
            seat = (s.leader + k) % n
            assert s.hands[seat].bit_count() == L.n_tricks - done - (1 if k < len(s.trick) else 0)
        assert len(s.called) == s.config.n_called and s.bidder not in s.partners
        for c in s.called:
            holder = next((x for x in range(n) if s.hands[x] >> c & 1), s.played_by[c])
            if holder >= 0:
                assert holder in s.partners
            else:
                assert s.discards >> c & 1  # in the nest: no partner through this card


@settings(max_examples=120, **SETTINGS)
@given(seed=st.integers(0, 2**31), flags=cp_flags_strategy)
def call_partner_random_hands(seed, flags):
    cfg = CallPartnerConfig(**flags, target_score=300)
    s = CallPartnerState(cfg, seed=seed)
    s.new_game()
    rng = random.Random(seed)
    hands_seen = 0
    scores = list(s.scores)
    for _ in range(20_000):
        cp_check_invariants(s)
        if s.phase == cp.OVER or s.hands_played >= 6:
            break
        s.apply(rng.choice(s.legal_actions()))
        if s.hands_played != hands_seen:
            hands_seen = s.hands_played
            r = s.hand_result
            assert sum(r["points"]) == 200
            side = r["side"]
            p = sum(r["points"][x] for x in side)
            assert p == r["side_points"] and r["made"] == (p >= r["bid"])
            for x in range(cfg.players):
                expect = (p if r["made"] else -r["bid"]) if x in side else 200 - p
                assert r["hand_scores"][x] == expect
                scores[x] += expect
            assert r["scores"] == scores
            top = max(scores)
            assert r["game_winner"] == (scores.index(top) if top >= 300 and scores.count(top) == 1 else -1)


# ------------------------------------------------------------------------------ every game
RANDOM_HANDS = per_game({"partnership": partnership_random_hands, "call_partner": call_partner_random_hands})


@pytest.mark.parametrize("game", GAMES)
def test_random_hands_under_random_flags(game):
    """Random legal play under random flag combinations, every invariant checked after every action: in the
    partnership game 12 hands an example, 200 examples (about 2,400 hands); in call-your-partner Rook up
    to six hands of a game an example, 120 examples."""
    RANDOM_HANDS[game]()


@pytest.mark.partnership
@settings(max_examples=150, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), flags=flags_strategy, target=st.sampled_from([100, 200, 300]))
def test_random_games_dealer_rotation_and_game_end(seed, flags, target):
    # Whole games from scores near the target (random bidding loses points on average, so a game
    # from 0-0 may never end); a few hands each, several hundred hands per run.
    rng = random.Random(seed)
    scores = [target - rng.randrange(0, 160, 5), target - rng.randrange(0, 160, 5)]
    c = Checker(RookConfig(episode="game", target_score=target, **flags), seed, p_pass=0.7, max_hands=40)
    c.run(scores=scores)
    s = c.s
    if s.phase == OVER:
        assert s.winner in (0, 1) and max(s.scores) >= target and s.scores[s.winner] > s.scores[1 - s.winner]


@pytest.mark.partnership
@settings(max_examples=300, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_default_hands(seed):
    # The default rules, 6 hands per example: 1,800 hands per run.
    for k in range(6):
        c = Checker(RookConfig(), seed * 8 + k)
        c.run()


# Each game's flags through the env (whole games among them) and its scores near a target of 500.
ENV_FLAGS = per_game({
    "partnership": st.builds(lambda flags, episode: {**flags, "episode": episode}, flags_strategy,
                             st.sampled_from(["hand", "game"])),
    "call_partner": cp_flags_strategy,
})
NEAR_TARGET = per_game({"partnership": lambda flags: [250, 250],
                        "call_partner": lambda flags: [250] * flags["players"]})


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=40, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_env_masks_for_acting_seat_only(game, seed, data):
    """Through the env: the acting seat's mask is the legal set (non-empty), the others' all zero."""
    flags = data.draw(ENV_FLAGS[game], label="flags")
    e = rook_env.raw_env(game=game, **flags)
    e.reset(seed=seed, options={"scores": NEAR_TARGET[game](flags)})
    game_state = e.unwrapped.game
    for _, seat in positions(e, seed, 300):
        masks = {a: e.observe(a)["action_mask"] for a in e.agents}
        acting = e.agent_selection
        assert acting == f"player_{seat}" == f"player_{game_state.current}"
        assert masks[acting].any()
        assert sorted(np.flatnonzero(masks[acting]).tolist()) == game_state.legal_actions()
        for a, m in masks.items():
            assert m.dtype == np.int8
            if a != acting:
                assert not m.any()
    if flags["episode"] == "hand":
        assert all(e.terminations.values())
    if all(e.terminations.values()):
        for a in e.agents:
            assert not e.observe(a)["action_mask"].any()


# ------------------------------------------------------------------------------ the other games (F13-F21)
@st.composite
def variant_flags(draw):
    """A playable combination of the flags of RULES.md F13 to F20 with the earlier ones."""
    flags = {"deck": draw(st.sampled_from(["tournament", "full"])),
             "rook_rank": draw(st.sampled_from(["high", "low", "ten_and_half"])),
             "trump_calls": draw(st.sampled_from(["colour", "extended"])),
             "rook_bird": draw(st.sampled_from(["on", "off"])),
             "first_lead": draw(st.sampled_from(["left_of_dealer", "bidder"])),
             "majority_tricks_bonus": draw(st.sampled_from([0, 20]))}
    if flags["rook_bird"] == "off" and draw(st.booleans()):
        flags["nest"] = "off"
    elif draw(st.booleans()):
        flags["nest_discard"] = "no_counters_unless_forced"
    if flags["deck"] == "full":
        flags["ones"] = draw(st.sampled_from(["high", "low"]))
        flags["red_two_little_rook"] = draw(st.sampled_from(["on", "off"]))
        if flags["rook_bird"] == "on":
            flags["black_two_trump"] = draw(st.sampled_from(["on", "off"]))
    else:
        flags["card_names"] = draw(st.sampled_from(["rook", "standard"]))
    if flags.get("nest_discard", "any") == "any":
        flags["circus_rook"] = draw(st.sampled_from(["on", "off"]))
    return flags


@pytest.mark.partnership
@settings(max_examples=60, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), flags=variant_flags())
def test_random_hands_under_variant_flags(seed, flags):
    """Random play under the other games' flags: the play mask and every trick's winner against the
    oracles of tests/test_variants.py (written from RULES.md F7, F17 to F20), the incremental
    observation against the reference encoder, cards and points conserved."""
    from test_variants import oracle_follow, oracle_winner

    from rook_env.games.partnership.observation import encode

    e = rook_env.raw_env(**flags)
    e.reset(seed=seed % (1 << 31))
    g, L = e.game, e.layout
    rng = random.Random(seed)
    while not all(e.terminations.values()):
        for s in range(N_SEATS):
            assert np.array_equal(e._enc.obs[s], encode(g, s))
        if g.phase == PLAY and g.trick:
            assert g.legal_mask() == oracle_follow(g, g.trick[0])[0]
        a = rng.choice(g.legal_actions())
        trick = list(g.trick) + [a] if g.phase == PLAY else None
        leader = g.leader
        e.step(a)
        if trick is not None and len(trick) == 4 and g.phase == PLAY:
            assert g.leader == (leader + oracle_winner(g, trick, oracle_follow(g, trick[0])[1])) % 4
    res = e.infos["player_0"]["hand"]
    assert sum(res["counters"]) == L.total_points and sum(res["tricks_won"]) == L.n_tricks
    assert (g.played | g.discards) == L.all_cards
