"""The game registry (rook_env.games): specs, lookup, the resolver and its errors."""

import dataclasses

import pytest

from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.partnership.config import RookConfig
from rook_env.games import GameSpec, game_names, get_game, load_ref, register_game, resolve_game


def test_both_games_are_registered_in_order():
    assert game_names()[:2] == ("partnership", "call_partner")


@pytest.mark.parametrize("name", ["partnership", "call_partner"])
def test_every_part_of_a_builtin_game_loads(name):
    spec = get_game(name)
    for part in ("config", "state", "raw_env", "checked_env", "layout", "obs_layout", "vector"):
        assert spec.load(part) is not None, part
    config = spec.make_config()
    layout = spec.load("layout")(config)
    ol = spec.load("obs_layout")(config)
    env = spec.load("raw_env")()
    assert env.action_space(env.possible_agents[0]).n == layout.n_actions
    assert env.observation_space(env.possible_agents[0])["observation"].shape == (ol.size,)
    assert len(env.possible_agents) == spec.default_players
    assert env.metadata["name"] and spec.env_id.startswith("rook_env/")


def test_get_game_default_and_unknown_name_lists_the_games():
    assert get_game().name == "partnership"
    with pytest.raises(ValueError, match="game='poker' is not allowed; allowed values: partnership, call_partner"):
        get_game("poker")


def test_resolver_returns_each_games_checked_config():
    spec, config = resolve_game(game="call_partner", players=6, deck="no_twos_to_fours")
    assert spec.name == "call_partner" and isinstance(config, CallPartnerConfig)
    assert (config.players, config.deck) == (6, "no_twos_to_fours")
    spec, config = resolve_game(rook_rank="low")
    assert spec.name == "partnership" and isinstance(config, RookConfig) and config.rook_rank == "low"
    assert resolve_game(players=4)[1] == RookConfig()  # the partnership game's one table size


def test_players_of_another_game_names_that_game():
    with pytest.raises(ValueError, match=r"players=5 .*partnership.* game='call_partner'"):
        resolve_game(players=5)
    with pytest.raises(ValueError, match="players=7"):
        resolve_game(game="call_partner", players=7)


def test_unknown_flag_names_the_game_and_the_game_that_has_it():
    with pytest.raises(ValueError, match=r"unknown rule flag\(s\) rook_rnak for game='partnership'"):
        resolve_game(rook_rnak="high")
    with pytest.raises(ValueError, match=r"deck_size for game='partnership' .*; known flags") as exc:
        resolve_game(deck_size=3)
    assert "call_partner" not in str(exc.value)  # no game has it: none named
    with pytest.raises(ValueError, match="does not apply to call-your-partner Rook"):
        resolve_game(game="call_partner", circus_rook="on")


def test_flag_names_come_from_the_config_modules():
    assert "preset" in get_game("partnership").flag_names
    assert "players" in get_game("call_partner").flag_names
    assert "players" not in get_game("partnership").flag_names


def test_register_game_rejects_a_second_game_of_a_name_and_bad_specs():
    spec = get_game("partnership")
    assert register_game(spec) is spec  # the same spec again changes nothing
    with pytest.raises(ValueError, match="already registered"):
        register_game(dataclasses.replace(spec, title="another"))
    with pytest.raises(TypeError):
        register_game({"name": "x"})
    with pytest.raises(ValueError, match="has no part 'render_scene'|has no part 'nothing'"):
        spec.load("nothing")


def test_load_ref_needs_module_and_attribute():
    assert load_ref("rook_env.games:get_game") is get_game
    with pytest.raises(ValueError, match="package.module:attribute"):
        load_ref("rook_env.games")
