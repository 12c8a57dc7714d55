"""Fuzzing the public API: hypothesis drives random call sequences (reset with random options, step
with random values of random types, observe / last / state / decode for any agent, deepcopy and
pickle, in any order). Every call either succeeds or raises ``ValueError`` / ``TypeError`` /
``RuntimeError`` whose message names the problem, and a rejected call changes nothing."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
from helpers import complete_deal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rook_env

AGENTS = list(rook_env.AGENTS)
ACCEPTED_ERRORS = (ValueError, TypeError, RuntimeError)
# A rejected call's message must name what was wrong: one of these words per kind of call.
ERROR_WORDS = {
    "reset": ("seed", "options", "scores", "hands", "nest", "dealer", "card", "deal"),
    "step": ("action", "reset", "done"),
    "agent": ("agent", "reset"),
    "plain": ("reset", "done"),
}
FLAGS = [
    {},
    {"episode": "game", "max_hands": 2, "target_score": 150, "reward": "win_loss"},
    {"deck": "full", "rook_rank": "low", "nest_discard": "no_counters_unless_forced", "reward": "team_score"},
    {"all_pass": "redeal", "first_lead": "bidder", "no_counter_redeal": "off", "target_score": 7},
]
HANDS, NEST = complete_deal({})

junk = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=True), st.text(max_size=4),
    st.binary(max_size=3), st.lists(st.integers(-2, 60), max_size=3), st.just(np.int64(3)), st.just(np.float32(1.5)),
    st.just(np.array([1, 2])), st.just({"a": 1}),
)
seeds = st.one_of(st.none(), st.integers(0, 2**40), st.integers(-5, -1), junk)
score_values = st.one_of(st.integers(-2000, 2000), st.just(10**42), junk)
option_values = {
    "scores": st.one_of(st.lists(score_values, min_size=2, max_size=2), junk),
    "dealer": st.one_of(st.integers(-2, 5), junk),
    "hands": st.one_of(st.just(HANDS), st.just(HANDS[:3]), st.just([h[:8] for h in HANDS]), junk),
    "nest": st.one_of(st.just(NEST), st.just(NEST[:4]), st.just([HANDS[0][0]] * 5), junk),
    "bogus": junk,
}
options = st.one_of(
    st.none(), junk, st.fixed_dictionaries({}, optional=option_values),
)
agents = st.one_of(st.sampled_from(AGENTS), st.sampled_from(["player_4", "player", ""]), junk)
actions = st.one_of(
    st.tuples(st.just("legal"), st.integers(0, 100)),  # index into the legal actions: the game moves on
    st.tuples(st.just("value"), st.one_of(st.integers(-3, 100), junk)),
)
ops = st.one_of(
    st.tuples(st.just("reset"), seeds, options),
    st.tuples(st.just("step"), actions),
    st.tuples(st.just("step"), actions),
    st.tuples(st.just("step"), actions),
    st.tuples(st.sampled_from(["observe", "state_for", "decode"]), agents),
    st.tuples(st.sampled_from(["last", "last_no_obs", "state", "legal_actions", "render", "deepcopy", "pickle"])),
)


def snapshot(e):
    """Everything a call could change, compared before and after a rejected call."""
    u = e.unwrapped
    rng = None if u._rng is None else u._rng.getstate()
    if u._game is None:
        return ("not reset", rng)
    obs = tuple((o["observation"].tobytes(), o["action_mask"].tobytes()) for o in map(u.observe, AGENTS))
    return (
        u.game.to_dict(), rng, obs, u.agent_selection, list(u.agents), dict(u.rewards),
        dict(u._cumulative_rewards), dict(u.terminations), dict(u.truncations), repr(u.infos),
    )


def run(e, op):
    """Perform one operation; return (the environment to continue with, the kind of call)."""
    kind = op[0]
    if kind == "reset":
        e.reset(seed=op[1], options=op[2])
        return e, "reset"
    if kind == "step":
        how, value = op[1]
        if how == "legal":
            u = e.unwrapped
            live = u._game is not None and u.agents and not (u.terminations[e.agent_selection]
                                                            or u.truncations[e.agent_selection])
            legal = u.game.legal_actions() if live else []
            value = legal[value % len(legal)] if legal else None
        e.step(value)
        return e, "step"
    if kind in ("observe", "state_for", "decode"):
        getattr(e.unwrapped, kind)(op[1])
        return e, "agent"
    if kind == "deepcopy":
        c = copy.deepcopy(e)
        assert snapshot(c) == snapshot(e)
        return c, "plain"
    if kind == "pickle":
        c = pickle.loads(pickle.dumps(e))
        assert snapshot(c) == snapshot(e)
        return c, "plain"
    if kind == "last":
        e.last()
    elif kind == "last_no_obs":
        e.last(observe=False)
    elif kind == "state":
        e.state()
    elif kind == "legal_actions":
        e.unwrapped.legal_actions()
    elif kind == "render":
        e.render()
    return e, "plain"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    make=st.sampled_from([rook_env.raw_env, rook_env.env]),
    flags=st.sampled_from(FLAGS),
    sequence=st.lists(ops, min_size=1, max_size=30),
)
def test_random_api_call_sequences(make, flags, sequence):
    e = make(render_mode="ansi", **flags)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # illegal-action and unknown-option warnings are expected here
        for op in sequence:
            before = snapshot(e)
            try:
                e, _ = run(e, op)
            except ACCEPTED_ERRORS as exc:
                kind = {"reset": "reset", "step": "step", "observe": "agent", "state_for": "agent",
                        "decode": "agent"}.get(op[0], "plain")
                msg = str(exc).lower()
                assert any(w in msg for w in ERROR_WORDS[kind]), f"{op!r} raised an unclear {exc!r}"
                assert snapshot(e) == before, f"the rejected {op!r} changed the environment"
            # Whatever happened, what can be observed stays inside the spaces.
            u = e.unwrapped
            if u._game is not None:
                for a in AGENTS:
                    assert u.observe(a) in u.observation_space(a)
                assert u.state() in u.state_space
