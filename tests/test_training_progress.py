"""The progress display of rook_env.training.reporting against the real stopping rule (total_decisions or
the run's max_minutes, whichever comes first), with a fake clock: which limit stops the run, the fraction
done, an ETA that counts down steadily at a steady rate, resumed runs counting their earlier time, and the
line as a terminal or a log file shows it."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("torch")
from rook_env.training.reporting import ProgressLine, RunClock, format_count, format_duration  # noqa: E402


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_time_cap_stops_a_run_that_would_not_reach_its_decisions():
    """The default run's case: 22M decisions, a 55-minute cap, about 5,000 decisions per second after a
    4-minute warm start: it stops at the cap near 15M decisions, and the ETA says so from the first minutes."""
    clock = FakeClock()
    run = RunClock(22_000_000, 55, start=clock.now, clock=clock)
    clock.now += 240  # behaviour cloning: time, no decisions
    run.start_rate(0)
    f = run.forecast(0)
    assert f.limit == "time cap" and f.eta == 51 * 60 and f.final_decisions is None  # no rate yet: a bound
    assert f.fraction == pytest.approx(4 / 55)
    assert "eta <=51:00" in f.text()
    etas = []
    for minute in range(1, 4):  # the first three minutes of PPO (the issue: 4:31:46, 1:00:40, 1:43:59)
        clock.now += 60
        f = run.forecast(minute * 60 * 5000)
        etas.append(f.eta)
        assert f.limit == "time cap"
        assert f.final_decisions == pytest.approx(5000 * 51 * 60)  # 15.3M at the cap, not 22M
        assert f.fraction == pytest.approx((4 + minute) / 55)
    assert etas == [50 * 60, 49 * 60, 48 * 60]  # one minute less each minute
    assert "time cap 7:00/55:00, ~15.3M dec at the cap, eta 48:00" in f.text()
    assert not run.out_of_time()
    clock.now += 48 * 60 + 1
    assert run.out_of_time() and run.forecast(15_300_000).eta == 0 and run.forecast(15_300_000).fraction == 1.0


def test_decisions_stop_a_run_whose_cap_is_far_or_absent():
    for cap in (0, 600):
        clock = FakeClock()
        run = RunClock(1_000_000, cap, start=clock.now, clock=clock)
        run.start_rate(0)
        assert run.forecast(0).eta == (None if not cap else cap * 60)
        clock.now += 100
        f = run.forecast(250_000)  # 2,500 per second: 300 s to go
        assert f.limit == "decisions" and f.eta == pytest.approx(300) and f.final_decisions == 1_000_000
        assert f.fraction == pytest.approx(0.25)
        assert f.text() == "250.0k/1.0M dec, eta 5:00"
        assert not run.out_of_time()
    assert "eta ?" in RunClock(10, 0, start=0.0, clock=FakeClock(5.0)).forecast(0).text()  # no cap, no rate yet


def test_the_rate_is_this_sessions_and_the_cap_counts_the_whole_run():
    """A run resumed at 8M decisions after 40 of its 55 minutes: 15 minutes left, whatever this session's speed."""
    clock = FakeClock()
    run = RunClock(22_000_000, 55, start=clock.now - 40 * 60, clock=clock)
    assert run.seconds() == 40 * 60
    run.start_rate(8_000_000)
    clock.now += 60
    f = run.forecast(8_000_000 + 60 * 4000)
    assert f.limit == "time cap" and f.eta == 14 * 60 and f.final_decisions == pytest.approx(8_240_000 + 4000 * 14 * 60)
    clock.now += 14 * 60 + 1
    assert run.out_of_time()


def test_progress_line_on_a_log_file_and_on_a_terminal():
    clock = FakeClock()
    run = RunClock(1000, 0, start=clock.now, clock=clock)
    out = io.StringIO()
    line = ProgressLine(run, stream=out, every=3600)
    run.start_rate(0)
    clock.now += 10
    line.update(500, {"pg": "0.010"})  # the first line is shown at once
    line.update(600, {"pg": "0.020"})  # then at most one an hour (every)
    line.write("it 6: vs rand +100")
    line.close()  # the last state is always shown
    lines = out.getvalue().splitlines()
    assert lines[0] == " 50% [##########..........] 500/1.0k dec, eta 0:10 | pg 0.010"
    assert lines[1] == "it 6: vs rand +100"
    assert lines[2].startswith(" 60% [############........] 600/1.0k dec") and lines[2].endswith("| pg 0.020")
    assert len(lines) == 3

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    line = ProgressLine(run, stream=tty)
    line.set_phase("behaviour cloning: steps 5/10")
    line.write("log")
    assert tty.getvalue().startswith("\r\033[Kbehaviour cloning: steps 5/10   0% [")
    assert "\r\033[Klog\nbehaviour cloning" in tty.getvalue()  # the log line above, the status line redrawn


def test_formats():
    assert [format_duration(s) for s in (0, 59.6, 61, 3600, 16306)] == ["0:00", "1:00", "1:01", "1:00:00", "4:31:46"]
    assert [format_count(n) for n in (999, 1500, 15_900_000)] == ["999", "1.5k", "15.9M"]


def test_the_fraction_is_that_of_the_limit_expected_to_stop_the_run():
    """Half the cap gone (a long warm start), a tenth of the decisions made, at a rate that reaches them in time:
    the bar shows the decisions' 10%, not the clock's 50%."""
    clock = FakeClock()
    run = RunClock(1_000_000, 10, start=clock.now - 300, clock=clock)
    run.start_rate(0)
    clock.now += 10
    f = run.forecast(100_000)  # 10,000 per second: 90 s to go, 290 s left
    assert f.limit == "decisions" and f.fraction == pytest.approx(0.1) and f.eta == pytest.approx(90)


def test_the_decision_rate_shown_is_the_average_with_the_recent_window_labelled():
    """The progress line's dps is the session's average (evaluations and waits included), not the last iteration's
    burst; the last ten iterations' rate stands beside it, labelled (a Ray run: slow first rollouts, then fast)."""
    from rook_env.training.reporting import progress_figures

    history = [{"iteration": i, "decisions": 1000 * i, "wall_seconds": 10.0 * i} for i in range(1, 4)]
    history += [{"iteration": i, "decisions": 1000 * i, "wall_seconds": 30.0 + 0.1 * (i - 3)} for i in range(4, 15)]
    rec = {**history[-1], "decisions_per_s": 12588.0, "pg_loss": 0.01, "v_loss": 0.2, "entropy": 1.5}
    shown = progress_figures(rec, history, 2368.4)
    assert shown["dps"] == "2368 (last 10 it: 10000)"  # 10,000 decisions in the last 1.0 s
    assert progress_figures(rec, history[:5], 2368.4)["dps"] == "2368"  # too few iterations for the window
    assert progress_figures(rec, history[:5], None)["dps"] == "?"  # no rate measured yet
