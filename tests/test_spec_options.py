"""The one parser of options written into agent specs (rook_env.agents.spec_options), which the search, pimc and
call_partner_search specs share: values read by type and range, and every bad item named."""

import pytest

from rook_env.agents import make_agent
from rook_env.agents.spec_options import Option, parse_options

TABLE = {"worlds": Option(int, "a whole number in 1..50", low=1, high=50), "boldness": Option(float, "a number"),
         "mode": Option(str, "one of fast, slow", choices=("fast", "slow")), "path": Option(str, "a word")}


def test_values_are_read_by_their_type():
    got = parse_options("x[...]", "x", " worlds = 7 , boldness=-2.5,mode=slow,path=a/b.npz", TABLE)
    assert got == {"worlds": 7, "boldness": -2.5, "mode": "slow", "path": "a/b.npz"}
    assert type(got["worlds"]) is int and type(got["boldness"]) is float


@pytest.mark.parametrize("text, words", [
    ("worlds=0", "x option worlds must be a whole number in 1..50, got '0'"),
    ("worlds=51", "worlds must be a whole number in 1..50, got '51'"),
    ("worlds=²", "worlds must be a whole number in 1..50, got '²'"),  # str.isdigit() is true for '²'
    ("worlds=-3", "worlds must be"),
    ("worlds=2.0", "worlds must be"),
    ("boldness=nan", "boldness must be a number, got 'nan'"),
    ("boldness=inf", "boldness must be a number"),
    ("boldness=bold", "boldness must be a number"),
    ("mode=medium", "mode must be one of fast, slow, got 'medium'"),
    ("depth=3", "bad x option 'depth=3'; write key=value with worlds: a whole number in 1..50; boldness"),
    ("worlds", "bad x option 'worlds'"),
    ("worlds=", "bad x option 'worlds='"),
    ("worlds=2,,mode=fast", "bad x option ''"),
    ("worlds=2,worlds=3", "x option 'worlds' is given twice"),
])
def test_a_bad_item_is_named(text, words):
    with pytest.raises(ValueError) as err:
        parse_options("x[" + text + "]", "x", text, TABLE)
    assert words in str(err.value) and str(err.value).startswith(f"agent spec 'x[{text}]': ")


@pytest.mark.parametrize("spec, words", [
    ("search[samples=²]:ppo", "search option samples must be a whole number, got '²'"),
    ("search[boldness=nan]:ppo", "search option boldness must be a number, got 'nan'"),
    ("pimc:worlds=²", "pimc option worlds must be a whole number in 1..1000"),
    ("call_partner_search[worlds=1001]", "call_partner_search option worlds must be a whole number in 1..1000"),
])
def test_every_family_with_options_uses_it(spec, words):
    with pytest.raises(ValueError, match=words):
        make_agent(spec)
