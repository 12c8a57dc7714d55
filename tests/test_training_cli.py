"""One command line for training (rook_env.training.cli: ``python train.py``, ``rook-train``): the algorithm comes
from the config, the tools are its subcommands, each with --help; and the default run's front door: the progress
line with its ETA (rook_env.training.labels.report), every log line in the run folder's train.log, a closing summary,
and Ctrl-C or SIGTERM stopping it cleanly with the command that resumes it."""

from __future__ import annotations

import io
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest
import tomllib

from rook_env.training import cli
from rook_env.training.labels import shards
from rook_env.training.labels.config import RoundsConfig
from rook_env.training.labels.report import RoundsDisplay

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETWORK = "rook_env/agents/checkpoints/ppo_default.pt"


# ------------------------------------------------------------------------------------------- the command line
@pytest.mark.parametrize("name", ["labels", "fit", "rounds", "search-labels", "distill"])
def test_every_subcommand_has_its_help(name, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([name, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ") and "--out" in out  # every tool writes somewhere


def test_the_run_help_lists_the_subcommands(capsys):
    for argv in (["--help"], ["run", "--help"]):
        with pytest.raises(SystemExit):
            cli.main(argv)
        out = capsys.readouterr().out
        assert "--config" in out and "--resume" in out and "the config's algorithm" in out
        for name in cli.subcommands():
            assert f"\n  {name} " in out


def test_train_py_and_the_console_script_are_the_same_main():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        scripts = tomllib.load(fh)["project"]["scripts"]
    assert scripts["rook-train"] == "rook_env.training.cli:main"
    run = subprocess.run([sys.executable, "train.py", "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, check=True)
    assert run.stdout.startswith("usage: python train.py [run]") and "search-labels" in run.stdout


def test_the_resume_command_is_the_same_command_without_overwrite():
    assert cli.resume_command(["--config", "configs/default.yaml", "--overwrite", "--set", "name=a b"]) == \
        "python train.py --config configs/default.yaml --set 'name=a b'"


# ------------------------------------------------------------------------------------ the progress line
class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _display(tmp_path, **fields):
    clock, stream = Clock(), io.StringIO()
    display = RoundsDisplay(str(tmp_path / "run" / "train.log"), stream=stream, every=0.0, clock=clock,
                            fit_rate=lambda network, threads: 0.01)  # 0.01 s a label and epoch
    cfg = RoundsConfig(network=NETWORK, out=str(tmp_path / "run"), self_hands=40, heuristic_hands=40,
                       shard_hands=10, epochs=2, **fields)
    sets = [("self", "self", 40, 1), ("heuristic", "heuristic", 40, 2)]
    folders = [str(tmp_path / "run" / "round_1" / f"labels_{name}") for name in ("self", "heuristic")]
    display.start(cfg, [])
    display.start_round(1, sets, folders)
    return display, clock, stream, folders


def test_the_eta_adds_the_labels_left_the_fit_and_the_rounds_after(tmp_path):
    """Each set's seconds a deal once measured (the mean before), the fit's labels from the labels a deal so far,
    at the fit's measured seconds a label and epoch, then the measured epochs; a later round as long as this one."""
    display, clock, stream, (own, heur) = _display(tmp_path, rounds=2)
    assert display.eta() is None and "eta ?" in stream.getvalue()  # nothing measured yet
    clock.t = 10.0
    display.shard(os.path.join(own, "shard_1_00000.npz"), 50, 9.0)
    # labels: 30 deals of self-play and 40 against the heuristic at 1 s a deal; the fit: 5 labels a deal x 80 deals
    # x 2 epochs x 0.01 s; this round 10 + 78 s, the next one as long
    assert display.eta() == pytest.approx(70 + 8 + 88)
    line = stream.getvalue().splitlines()[-1]
    assert line == "round 1/2 labels 1/8 shards (self)   6% [#...................] 0:10, eta 2:46 | 5 labels/s"
    for t in (20.0, 30.0, 40.0):
        clock.t = t
        display.shard(os.path.join(own, f"shard_{t}.npz"), 50, 9.0)
    clock.t = 60.0  # the heuristic's set began when the last self-play shard came: 2 s a deal
    display.shard(os.path.join(heur, "shard_2_00000.npz"), 50, 19.0)
    assert display.eta() == pytest.approx(30 * 2 + 8 + (60 + 68))
    assert "labels 5/8 shards (heuristic)" in stream.getvalue().splitlines()[-1]
    clock.t = 120.0
    display.start_fit(1)
    clock.t = 130.0
    display.epoch(1, 1)  # 10 s an epoch: 10 s left of the fit; the next round 120 s of labels and 20 of fit
    assert display.eta() == pytest.approx(10 + 140)
    assert stream.getvalue().splitlines()[-1].startswith("round 1/2 fit epoch 1/2  46% [#########...........] 2:10")


def test_the_eta_stops_the_rounds_where_max_minutes_will(tmp_path):
    display, clock, _, (own, _) = _display(tmp_path, rounds=3, max_minutes=3.0)
    clock.t = 120.0
    display.shard(os.path.join(own, "shard_1_00000.npz"), 50, 9.0)
    display.start_fit(1)
    clock.t = 130.0
    display.epoch(1, 1)
    assert display.eta() == pytest.approx(10)  # a round of 140 s: a second one would not start under 3 minutes
    display.cfg.max_minutes = 5.0
    assert display.eta() == pytest.approx(10 + 140)  # 4.7 minutes: room for one more


def test_log_lines_go_to_the_file_and_notes_to_the_screen_too(tmp_path):
    display, _, stream, _ = _display(tmp_path, rounds=1)
    display.log("a shard written")
    display.note("round 1/1: a note")
    display.close()
    text = (tmp_path / "run" / "train.log").read_text()
    assert "a shard written" in text and "round 1/1: a note" in text and "labelling 80 deals in 2 sets" in text
    assert "a shard written" not in stream.getvalue() and "round 1/1: a note\n" in stream.getvalue()


# ------------------------------------------------------------------------------------ a run, stopped and resumed
SMALL_RUN = ["--config", "configs/default.yaml", "--set", "rounds.opponents={}", "--rounds.self_hands", "24",
             "--rounds.heuristic_hands", "4", "--rounds.shard_hands", "2", "--rounds.label_prob", "0.5",
             "--rounds.tables", "64", "--rounds.epochs", "1", "--rounds.threads", "1", "--rounds.processes", "2",
             "--rounds.final_eval_deals", "4"]
NOISE = ("Traceback", "BrokenPipeError", "leaked semaphore", "KeyboardInterrupt", "Error")


def _shards(folder) -> list[str]:
    return sorted(p for p in os.listdir(folder) if p.endswith(".npz") and ".tmp" not in p) \
        if os.path.isdir(folder) else []


@pytest.mark.parametrize("how", ["SIGTERM to the process", "Ctrl-C to the process group"])
def test_a_stopped_run_says_what_it_kept_and_its_resume_command_finishes_it(tmp_path, how):
    argv = [*SMALL_RUN, "--set", f"run_dir={tmp_path}"]
    # Ctrl-C at its default in the run, as in a terminal (a shell's background job starts with it ignored)
    proc = subprocess.Popen([sys.executable, "train.py", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    labels = tmp_path / "default" / "round_1" / "labels_self"
    deadline = time.time() + 600
    while not _shards(labels) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before a shard was written"
    if how.startswith("SIGTERM"):
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: every process of the group gets it
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert not any(word in err for word in NOISE), err
    written = int(re.search(r"interrupted during round 1's labels: (\d+) of 14 shards written", err)[1])
    assert written <= len(_shards(labels)) <= written + 2  # and those the processes wrote as it stopped
    resume = err.split("resume with: ")[1].strip()
    assert resume == "python train.py " + " ".join(shlex.quote(a) for a in argv)
    assert "== default" not in out and not (tmp_path / "default" / "agent.pt").exists()

    stamps = {p: os.path.getmtime(labels / p) for p in _shards(labels)}
    again = subprocess.run([sys.executable, *shlex.split(resume)[1:]], cwd=ROOT, capture_output=True, text=True,
                           timeout=900, check=False)
    assert again.returncode == 0, again.stderr
    assert {p: os.path.getmtime(labels / p) for p in stamps} == stamps  # the kept shards are not labelled again
    assert len(_shards(labels)) == 12 and (tmp_path / "default" / "agent.pt").exists()
    # the screen: progress lines with an ETA, no shard lines (those are in train.log), then the summary
    assert "eta " in again.stderr and "labelled decisions in" not in again.stderr
    log = (tmp_path / "default" / "train.log").read_text()
    assert 12 <= log.count("labelled decisions in") <= 14 and "interrupted during round 1's labels" in log
    assert "== default: 1 round of labels and fits from " + NETWORK in again.stdout
    assert "closer to the labels than no change" in again.stdout
    for against in ("vs the heuristic", "vs the network it started from"):
        line = next(x for x in again.stdout.splitlines() if against in x)
        assert "points/deal  95% [" in line
    assert "held out (4 duplicate deals from seed 50000000" in again.stdout


def test_a_ctrl_c_while_the_label_processes_start_is_not_lost(monkeypatch):
    """SIGINT that comes while the label pool is made (between two label sets) still stops the run: it waits for
    the pool and is raised then, the pool stopped; the label processes themselves ignore it."""
    made = []
    real = shards.get_context

    class Context:
        def Pool(self, processes, initializer=None):  # noqa: N802 - multiprocessing's name
            pool = real("spawn").Pool(processes, initializer=initializer)
            made.append(pool)
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C now: blocked until the pool is made
            return pool

    monkeypatch.setattr(shards, "get_context", lambda method: Context())
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (not a background job)
    try:
        with pytest.raises(KeyboardInterrupt):
            shards._start_pool(1)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(made) == 1 and made[0]._state != "RUN"  # stopped, not left running
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())  # the mask as it was
    pool = real("spawn").Pool(1, initializer=shards._ignore_ctrl_c)
    try:
        assert pool.apply(signal.getsignal, (signal.SIGINT,)) == signal.SIG_IGN
        assert signal.SIGINT not in pool.apply(signal.pthread_sigmask, (signal.SIG_BLOCK, set()))
    finally:
        pool.terminate()
        pool.join()
