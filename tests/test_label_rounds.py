"""Rounds of counterfactual labels and fits (rook_env.training.labels.rounds): each round's labels are made by the
previous round's network on their own deals, the fitted network is the next base, a rerun resumes, and bad
arguments are named."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest
import torch

from rook_env.agents.learned.model import load_checkpoint, model_from_checkpoint
from rook_env.training import cli
from rook_env.training.expert import read_shards, shard_paths
from rook_env.training.labels import counterfactual
from rook_env.training.labels import rounds as label_rounds

NETWORK = "rook_env/agents/checkpoints/ppo_default.pt"
SMALL = dict(self_hands=4, heuristic_hands=4, shard_hands=4, label_prob=0.5, tables=64, processes=1, epochs=1,
             threads=1, seed=500, final_eval_deals=4)


def test_two_rounds_chain_and_resume(tmp_path):
    out = str(tmp_path / "rounds")
    cfg = label_rounds.RoundsConfig(network=NETWORK, out=out, rounds=2, **SMALL)
    summary = label_rounds.run_rounds(cfg, log=lambda *_: None)
    first, second = summary
    assert first["base"] == NETWORK and second["base"] == first["network"]  # round 2 starts from round 1's network
    assert [r["labels"]["self"]["first_seed"] for r in summary] == [500, 2_000_500]
    assert [r["labels"]["heuristic"]["first_seed"] for r in summary] == [1_000_500, 3_000_500]
    assert json.loads((tmp_path / "rounds" / "rounds.json").read_text())["rounds"] == summary

    # round 2's self-play labels are round 1's network playing round 2's deals
    torch.set_num_threads(1)
    model = model_from_checkpoint(load_checkpoint(first["network"]), first["network"]).eval()
    expected = counterfactual.label_deals("partnership", 4, 2_000_500, label_prob=0.5, tables=64, network=model)
    got = read_shards(shard_paths(second["labels"]["self"]["folder"]))
    assert len(got["hint"]) > 0
    np.testing.assert_array_equal(got["hint"], expected["hint"])
    np.testing.assert_array_equal(got["q"], expected["q"])

    # each round changed the actor and kept the critic of the shipped network
    base, nets = load_checkpoint(NETWORK)["model"], [load_checkpoint(r["network"])["model"] for r in summary]
    for before, after in zip([base, nets[0]], nets):
        assert any(not torch.equal(before[k], after[k]) for k in after if k.startswith("actor."))
        assert all(torch.equal(base[k], after[k]) for k in after if k.startswith("critic."))

    stamp = os.path.getmtime(second["network"])
    lines = []
    assert label_rounds.run_rounds(cfg, log=lines.append) == summary  # a rerun resumes: nothing to do
    assert lines == [f"round 1: done ({first['network']})", f"round 2: done ({second['network']})"]
    assert os.path.getmtime(second["network"]) == stamp
    with pytest.raises(ValueError, match=r"holds rounds made with other arguments \(margin: 10.0\)"):
        label_rounds.run_rounds(label_rounds.RoundsConfig(network=NETWORK, out=out, rounds=2, margin=5.0, **SMALL))


def test_max_minutes_stops_the_rounds_at_the_budget(tmp_path):
    """With max_minutes a round starts only while the recorded minutes so far plus the last round's fit in the
    budget: the loop stops before ``rounds``; a resume with a larger budget runs on from the recorded rounds."""
    out = str(tmp_path / "rounds")
    lines = []
    cfg = label_rounds.RoundsConfig(network=NETWORK, out=out, rounds=3, max_minutes=1e-6, **SMALL)
    (first,) = label_rounds.run_rounds(cfg, log=lines.append)  # round 1 always runs: no last round to go by
    spent = label_rounds.round_minutes(first)
    assert spent == first["label_minutes"] + first["fit_minutes"] > 0
    assert lines[-1] == (f"round 2: not started: {spent:.1f} minutes of rounds so far and the last one took "
                         f"{spent:.1f}; max_minutes is 1e-06")
    assert not os.path.exists(os.path.join(out, "round_2"))

    # the budget is read from rounds.json: room for round 2 (its estimate is round 1's minutes)
    summary = label_rounds.run_rounds(dataclasses.replace(cfg, rounds=2, max_minutes=2 * spent + 1e-9),
                                      log=lambda *_: None)
    assert len(summary) == 2 and summary[0] == first
    assert os.path.exists(summary[1]["network"])

    def rounds(*minutes):
        return [{"label_minutes": m, "fit_minutes": 0.5, "selection": {"minutes": 0.25}} for m in minutes]
    budget = dataclasses.replace(cfg, max_minutes=10.0)
    assert not label_rounds.over_budget(budget, [])
    assert not label_rounds.over_budget(budget, rounds(2.0, 2.0, 1.5))  # 7.75 so far + 2.25 = 10: room
    assert label_rounds.over_budget(budget, rounds(2.0, 2.0, 1.51))
    assert not label_rounds.over_budget(dataclasses.replace(cfg, max_minutes=0.0), rounds(9, 9, 9))  # 0: none
    with pytest.raises(ValueError, match="max_minutes must be >= 0"):
        label_rounds.run_rounds(dataclasses.replace(cfg, max_minutes=-1.0))


def test_rounds_from_a_random_network(tmp_path):
    """network: random starts the loop from scratch: round 1's base is a fresh network of train.py's default shape,
    made from the seed (the same seed, the same weights), written once and read again on a resume."""
    from rook_env.training.checkpoints import new_model
    from rook_env.training.config import Config, game_of

    cfgs = [label_rounds.RoundsConfig(network="random", out=str(tmp_path / name), rounds=1, **SMALL) for name in "ab"]
    summaries = [label_rounds.run_rounds(cfg, log=lambda *_: None) for cfg in cfgs]
    bases = [s[0]["base"] for s in summaries]
    assert bases == [str(tmp_path / name / "round_0" / "network.pt") for name in "ab"]
    first, second = (load_checkpoint(b) for b in bases)
    assert first["model"].keys() == second["model"].keys()
    assert all(torch.equal(first["model"][k], second["model"][k]) for k in first["model"])  # a function of the seed
    assert first["model_kwargs"] == new_model(Config(), game_of(Config())).kwargs()  # train.py's default network
    assert first["config"]["init_checkpoint"] == "" and first["config"]["seed"] == 500
    shipped = load_checkpoint(NETWORK)["model"]
    assert not torch.equal(first["model"]["actor.0.weight"], shipped["actor.0.weight"])  # not the shipped one

    stamp = os.path.getmtime(bases[0])
    assert label_rounds.run_rounds(cfgs[0], log=lambda *_: None) == summaries[0]  # resumed: nothing made again
    assert os.path.getmtime(bases[0]) == stamp
    other = label_rounds.RoundsConfig(network="random", out=str(tmp_path / "c"), rounds=1, **dict(SMALL, seed=501))
    label_rounds.run_rounds(other, log=lambda *_: None)
    third = load_checkpoint(str(tmp_path / "c" / "round_0" / "network.pt"))["model"]
    assert not torch.equal(first["model"]["actor.0.weight"], third["actor.0.weight"])  # another seed, other weights


def test_selection_ships_the_best_round_on_the_selection_deals(tmp_path):
    """select_deals: every round's network plays the selection deals against the heuristic and agent.pt is the
    best; a rerun on other selection deals scores again without labelling or fitting anything."""
    import dataclasses
    import shutil

    from rook_env.training.config import LabelRoundsConfig

    rounds = label_rounds.RoundsConfig(network=NETWORK, rounds=2, select_deals=6, select_seed=7, **SMALL)
    cfg = LabelRoundsConfig(name="sel", run_dir=str(tmp_path), rounds=rounds)
    lines = []
    result = label_rounds.train_rounds(cfg, log=lines.append)
    summary = json.loads((tmp_path / "sel" / "rounds.json").read_text())
    scores = [r["selection"]["mean"] for r in summary["rounds"]]
    assert [(r["selection"]["deals"], r["selection"]["seed"]) for r in summary["rounds"]] == [(6, 7), (6, 7)]
    best = max(range(2), key=lambda i: (scores[i], i)) + 1
    assert summary["selected"] == result["selected"] == best
    chosen = load_checkpoint(str(tmp_path / "sel" / f"round_{best}" / "network.pt"))["model"]
    agent = load_checkpoint(result["agent"])["model"]
    assert all(torch.equal(chosen[k], agent[k]) for k in chosen)
    # the score is the network's duplicate match on those deals: made again, it is the same
    again = label_rounds.selection_score(dataclasses.replace(rounds, out=""), result["rounds"][0]["network"])
    assert again["mean"] == scores[0]
    assert sum("selection deals" in line for line in lines) == 2

    stamps = {p: os.path.getmtime(p) for p in (tmp_path / "sel").rglob("*.npz")}
    shutil.copyfile(result["agent"], tmp_path / "agent_before.pt")
    other = dataclasses.replace(cfg, rounds=dataclasses.replace(rounds, select_seed=8))
    lines.clear()
    label_rounds.train_rounds(other, log=lines.append)
    assert {p: os.path.getmtime(p) for p in (tmp_path / "sel").rglob("*.npz")} == stamps  # nothing labelled again
    rescored = json.loads((tmp_path / "sel" / "rounds.json").read_text())["rounds"]
    assert [r["selection"]["seed"] for r in rescored] == [8, 8]
    assert sum("selection deals (seed 8)" in line for line in lines) == 2

    # a field: every round scored again against each member on the same deals, its score the members' mean; the
    # held-out matches at the end play each member too
    field = ["heuristic", NETWORK]
    lines.clear()
    fielded = label_rounds.train_rounds(dataclasses.replace(other, rounds=dataclasses.replace(
        other.rounds, select_field=field)), log=lines.append)
    scored = json.loads((tmp_path / "sel" / "rounds.json").read_text())["rounds"]
    for before, after in zip(rescored, scored):
        sel = after["selection"]
        assert sel["field"] == field and list(sel["members"]) == field
        assert sel["members"]["heuristic"]["mean"] == before["selection"]["mean"]  # the same deals as before
        assert sel["mean"] == pytest.approx(np.mean([m["mean"] for m in sel["members"].values()]))
        lo, hi = sel["ci95"]
        assert lo < sel["mean"] < hi
    assert sum(f"against the field (heuristic, {NETWORK}) on the 6 selection deals" in line for line in lines) == 2
    assert set(fielded["final_eval"]) == {"heuristic", NETWORK, "start"}
    assert {p: os.path.getmtime(p) for p in (tmp_path / "sel").rglob("*.npz")} == stamps


def test_average_of_the_last_rounds_is_a_selection_candidate(tmp_path):
    """average: the mean of the weights of the last rounds' networks is scored on the selection deals like a round
    and ships where it scores at least as well as the best round; asked for on a resume, nothing is labelled again."""
    import dataclasses

    from rook_env.training.config import LabelRoundsConfig

    rounds = label_rounds.RoundsConfig(network=NETWORK, rounds=3, select_deals=6, select_seed=7, **SMALL)
    cfg = LabelRoundsConfig(name="avg", run_dir=str(tmp_path), rounds=rounds)
    label_rounds.train_rounds(cfg, log=lambda *_: None)
    run = tmp_path / "avg"
    stamps = {p: os.path.getmtime(p) for p in run.rglob("*.npz")}
    lines = []
    result = label_rounds.train_rounds(dataclasses.replace(cfg, rounds=dataclasses.replace(rounds, average=2)),
                                       log=lines.append)
    assert {p: os.path.getmtime(p) for p in run.rglob("*.npz")} == stamps  # a free field: nothing labelled again

    nets = [load_checkpoint(str(run / f"round_{k}" / "network.pt"))["model"] for k in (2, 3)]
    average = load_checkpoint(str(run / "average.pt"))
    assert average["averaged"] == [str(run / f"round_{k}" / "network.pt") for k in (2, 3)]
    for key, value in average["model"].items():
        if value.is_floating_point():
            torch.testing.assert_close(value, (nets[0][key] + nets[1][key]) / 2)
        else:
            assert torch.equal(value, nets[1][key])
    assert any(line.startswith("average of rounds 2 to 3: ") for line in lines)

    summary = json.loads((run / "rounds.json").read_text())
    best = max(reversed(summary["rounds"]), key=lambda r: r["selection"]["mean"])
    again = label_rounds.selection_score(dataclasses.replace(rounds, out=""), str(run / "average.pt"))
    if again["mean"] >= best["selection"]["mean"]:  # the rule, whichever way these small fits went
        assert summary["selected"] == result["selected"] == "average"
        assert summary["average"]["selection"]["mean"] == again["mean"] and summary["average"]["rounds"] == [2, 3]
        shipped = average["model"]
    else:
        assert summary["selected"] == result["selected"] == best["round"] and "average" not in summary
        shipped = load_checkpoint(best["network"])["model"]
    agent = load_checkpoint(result["agent"])["model"]
    assert all(torch.equal(shipped[k], agent[k]) for k in shipped)


def test_replay_fits_on_the_last_rounds_labels(tmp_path, monkeypatch):
    """replay: round k's fit reads the labels of rounds k - replay + 1 to k (fewer at the start), and what it
    reads is what the rounds.json summary says it replayed."""
    from rook_env.training.labels import fit as residual_fit

    read = []
    real_fit = residual_fit.fit

    def spy(cfg, log=print):
        read.append(list(cfg.labels))
        return real_fit(cfg, log)

    monkeypatch.setattr(label_rounds, "fit", spy)
    out = tmp_path / "r"
    cfg = label_rounds.RoundsConfig(network=NETWORK, out=str(out), rounds=3, replay=2, **SMALL)
    summary = label_rounds.run_rounds(cfg, log=lambda *_: None)
    folder = lambda k, name: str(out / f"round_{k}" / f"labels_{name}")  # noqa: E731
    assert read == [[folder(1, "self"), folder(1, "heuristic")],
                    [folder(1, "self"), folder(1, "heuristic"), folder(2, "self"), folder(2, "heuristic")],
                    [folder(2, "self"), folder(2, "heuristic"), folder(3, "self"), folder(3, "heuristic")]]
    assert [r["replayed"] for r in summary] == [[], read[1][:2], read[2][:2]]
    assert [r["base"] for r in summary[1:]] == [r["network"] for r in summary[:-1]]
    with pytest.raises(ValueError, match=r"other arguments \(replay: 2\)"):  # the fits read other labels
        label_rounds.run_rounds(label_rounds.RoundsConfig(network=NETWORK, out=str(out), rounds=3, **SMALL))


def test_phase_label_prob_reaches_the_labels(tmp_path):
    """rounds.phase_label_prob: a round's shards are labelled at those shares (here card play only), each record
    keeps its share, and a resume with other shares is refused (its labels were made with these)."""
    out = str(tmp_path / "rounds")
    cfg = label_rounds.RoundsConfig(network=NETWORK, out=out, rounds=1, phase_label_prob={"bid": 0.0, "discard": 0.0,
                                                                                          "trump": 0.0}, **SMALL)
    (summary,) = label_rounds.run_rounds(cfg, log=lambda *_: None)
    got = read_shards(shard_paths(summary["labels"]["self"]["folder"]))
    assert len(got["hint"]) > 0 and set(got["phase"].tolist()) == {3}  # rook_env.games.partnership.rules: play
    np.testing.assert_array_equal(got["prob"], np.full(len(got["hint"]), 0.5, np.float32))  # SMALL's label_prob
    with pytest.raises(ValueError, match=r"other arguments \(phase_label_prob: "):
        label_rounds.run_rounds(label_rounds.RoundsConfig(network=NETWORK, out=out, rounds=2, **SMALL))


def test_opponents_add_label_sets_against_a_field(tmp_path, monkeypatch):
    """rounds.opponents: each agent spec is one more label set a round, the network playing one team and the agent
    the other, on its own block of seeds; the fit reads every set, and the rounds.json summary names them."""
    from rook_env.agents import make_agent
    from rook_env.training.labels import fit as residual_fit

    read = []
    real_fit = residual_fit.fit
    monkeypatch.setattr(label_rounds, "fit", lambda cfg, log=print: (read.append(list(cfg.labels)),
                                                                     real_fit(cfg, log))[1])
    past = "ppo:rook_env/agents/checkpoints/best_auction.pt"
    out = tmp_path / "r"
    cfg = label_rounds.RoundsConfig(network=NETWORK, out=str(out), rounds=1, opponents={past: 4, "random": 4},
                                    **SMALL)
    (summary,) = label_rounds.run_rounds(cfg, log=lambda *_: None)
    labels = summary["labels"]
    assert list(labels) == ["self", "heuristic", past, "random"]
    assert [v["first_seed"] for v in labels.values()] == [500, 1_000_500, 2_000_500, 3_000_500]
    assert read == [[v["folder"] for v in labels.values()]]
    assert labels[past]["folder"] == str(out / "round_1" / "labels_0_ppo_rook_env_agents_checkpoints_best_auction.pt")
    # round 2 would start past every seed block of round 1: four blocks a round
    assert [s[3] for s in label_rounds.label_sets(cfg, 2)] == [4_000_500, 5_000_500, 6_000_500, 7_000_500]

    # the past network's set is the network against that one on those deals
    torch.set_num_threads(1)
    model = model_from_checkpoint(load_checkpoint(NETWORK), NETWORK).eval()
    expected = counterfactual.label_deals("partnership", 4, 2_000_500, label_prob=0.5, tables=64, network=model,
                                          opponent=make_agent(past))
    got = read_shards(shard_paths(labels[past]["folder"]))
    assert len(got["hint"]) > 0
    np.testing.assert_array_equal(got["q"], expected["q"])
    heuristic = read_shards(shard_paths(labels["heuristic"]["folder"]))
    assert not np.array_equal(heuristic["q"][:len(got["q"])], got["q"][:len(heuristic["q"])])  # another opponent


def test_the_default_configs_field_loads():
    """configs/default.yaml's opponents are checkpoints that ship, each a partnership agent that decides in batches
    (a clean clone runs the default run without files from elsewhere)."""
    from rook_env.training.config import make_train_config

    cfg = make_train_config("configs/default.yaml").rounds
    assert len(cfg.opponents) == 4 and all(hands > 0 for hands in cfg.opponents.values())
    for spec in cfg.opponents:
        assert hasattr(counterfactual.opponent_agent(spec, {}), "act_batch")


def test_cli_reads_opponents(tmp_path, capsys):
    """--opponents takes SPEC=DEALS words (a spec may hold "="); a bad word or a spec that loads no agent is named
    before any work."""
    from rook_env.training.labels.config import parse_opponents

    assert parse_opponents(["search[samples=96]:ppo=10", "ppo:a.pt=4"]) == {"search[samples=96]:ppo": 10,
                                                                          "ppo:a.pt": 4}
    args = ["rounds", "--network", NETWORK, "--out", str(tmp_path / "r"), "--opponents"]
    assert cli.main(args + ["ppo:a.pt"]) == 2
    assert "error: opponents: give SPEC=DEALS (e.g. ppo:past.pt=10240), got 'ppo:a.pt'" in capsys.readouterr().err
    assert cli.main(args + [f"ppo:{tmp_path / 'missing.pt'}=8"]) == 2
    assert "error: opponent 'ppo:" in capsys.readouterr().err
    assert not (tmp_path / "r" / "round_1").exists()


@pytest.mark.parametrize("change, message", [
    (dict(rounds=0), "rounds must be >= 1"),
    (dict(replay=0), "replay must be >= 1"),
    (dict(self_hands=-1), "self_hands must be >= 0"),
    (dict(self_hands=1, heuristic_hands=0), "at least 2"),
    (dict(label_prob=0.0), r"label_prob must be in \(0, 1\]"),
    (dict(margin=-1.0), "margin must be >= 0"),
    (dict(phase_label_prob={"auction": 0.1}), "phase_label_prob: unknown phase 'auction'; the phases are bid, "),
    (dict(phase_label_prob={"play": 1.5}), r"phase_label_prob.play must be in \[0, 1\], got 1.5"),
    (dict(select_deals=-1), "select_deals must be >= 0"),
    (dict(select_field=[]), "select_field must name at least one opponent"),
    (dict(select_field=["heuristic", "heuristic"]), "select_field names an opponent twice"),
    (dict(select_field=["ppo:nowhere.pt"]), "select_field: 'ppo:nowhere.pt'"),
    (dict(average=1), r"average must be 0 \(none\) or at least 2 rounds"),
    (dict(average=3), "average is a candidate of the selection: give select_deals > 0 too"),
    (dict(workers=-2), "workers must be >= 0"),
    (dict(opponents={"heuristic": 4}), r"opponents: 'heuristic' has its own field \(heuristic_hands\)"),
    (dict(opponents={"random": -4}), "opponents: the deals against 'random' must be an integer >= 0, got -4"),
    (dict(opponents={"ppo:nowhere.pt": 4}), "opponent 'ppo:nowhere.pt'"),
    (dict(self_hands=0, heuristic_hands=0, opponents={"random": 1}), "at least 2"),
    (dict(shard_hands=1, self_hands=2_000_000), "would overlap the next set's seeds"),
    (dict(network="nowhere.pt"), r"network must be a checkpoint file that exists or 'random' \(from scratch\), "
                                 "got 'nowhere.pt'"),
    (dict(network="rook_env/agents/checkpoints/ppo_call_partner.pt"), "is a 'call_partner' checkpoint"),
])
def test_bad_arguments_are_named(tmp_path, change, message):
    args = dict(SMALL, network=NETWORK, out=str(tmp_path / "r"))
    args.update(change)
    with pytest.raises(ValueError, match=message):
        label_rounds.run_rounds(label_rounds.RoundsConfig(**args))
    assert not (tmp_path / "r" / "round_1").exists()  # refused before any work


def test_cli_reports_bad_arguments(tmp_path, capsys):
    assert cli.main(["rounds", "--network", str(tmp_path / "missing.pt"), "--out", str(tmp_path / "r")]) == 2
    assert "network must be a checkpoint file that exists" in capsys.readouterr().err


def test_cli_reads_phase_shares(tmp_path, capsys):
    """--phase-label-prob takes PHASE=SHARE words (the config's phase_label_prob); a word without a number is named."""
    from rook_env.training.labels.config import parse_shares

    assert parse_shares(["bid=0.15", "play=0.45"]) == {"bid": 0.15, "play": 0.45}
    args = ["rounds", "--network", NETWORK, "--out", str(tmp_path / "r"), "--phase-label-prob"]
    assert cli.main(args + ["play"]) == 2
    assert "phase_label_prob: give PHASE=SHARE (e.g. play=0.45), got 'play'" in capsys.readouterr().err
    assert cli.main(args + ["auction=0.2"]) == 2
    assert "unknown phase 'auction'" in capsys.readouterr().err
    assert not (tmp_path / "r" / "round_1").exists()


def test_train_py_runs_the_rounds_of_the_default_config(tmp_path, capsys):
    """``python train.py --config configs/default.yaml`` is a round of labels (algorithm: label_rounds) in
    runs/<name>/, its network copied to agent.pt; a rerun resumes, --overwrite starts afresh, --resume is refused."""
    field_ = 'rounds.opponents={"ppo:networks/ppo_v5.pt": 4}'  # the config's field, smaller
    sets = [f"rounds.{k}={v}" for k, v in SMALL.items()] + [f"run_dir={tmp_path}", field_]
    args = ["--config", "configs/default.yaml"] + [a for s in sets for a in ("--set", s)]
    assert cli.main(args) == 0
    run = tmp_path / "default"
    summary = json.loads((run / "rounds.json").read_text())
    assert summary["config"]["out"] == str(run) and summary["config"]["seed"] == 500  # the override reached the round
    assert [r["base"] for r in summary["rounds"]] == [NETWORK]  # the default run starts from the shipped network
    assert list(summary["rounds"][0]["labels"]) == ["self", "heuristic", "ppo:networks/ppo_v5.pt"]
    assert (run / "agent.pt").read_bytes() == (run / "round_1" / "network.pt").read_bytes()
    stamp = os.path.getmtime(run / "round_1" / "network.pt")
    assert "== default: 1 round of labels and fits from " + NETWORK in capsys.readouterr().out  # the summary
    assert cli.main(args) == 0 and os.path.getmtime(run / "round_1" / "network.pt") == stamp  # resumed: nothing to do
    assert "round 1: done" in (run / "train.log").read_text()  # every log line in the run folder

    assert cli.main(args + ["--resume", str(run / "agent.pt")]) == 2
    assert "--resume is PPO's" in capsys.readouterr().err
    assert cli.main(args + ["--set", "rounds.margin=5"]) == 2  # the folder's labels were made with margin 10
    assert "holds rounds made with other arguments (margin: 10.0)" in capsys.readouterr().err
    assert cli.main(args + ["--set", "rounds.margin=5", "--overwrite"]) == 0
    assert json.loads((run / "rounds.json").read_text())["config"]["margin"] == 5.0


@pytest.mark.parametrize("change, message", [
    ("algorithm=sarsa", "config field 'algorithm': must be one of ppo, label_rounds (got 'sarsa')"),
    ("rounds.margin=-1", "config field rounds.margin must be >= 0, got -1"),
    ("rounds.network=nowhere.pt", "config field rounds.network must be a checkpoint file that exists"),
    ("rounds.hands=3", "unknown config field 'rounds.hands'"),
])
def test_train_py_names_bad_round_fields(tmp_path, capsys, change, message):
    assert cli.main(["--config", "configs/default.yaml", "--set", f"run_dir={tmp_path}", "--set", change]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "default").exists()
