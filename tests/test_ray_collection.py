"""The Ray collectors' driver side (rook_env.training.ray_collection.RayCollectors) against a stand-in for Ray that
runs the collector actors in this process, one step of its clock per ``ray.wait``: faults and slow starts happen
exactly when a test says, without a cluster (tests/test_ray_cluster.py runs the real one).

Checked: a collector that starts late (a replacement, or a first one that waited for a node) plays its first rollout
with the learner's weights of when it started, so that rollout is booked, not dropped for its lag; the log says so,
and says while collectors wait for a node; after a resume the run's ``ray`` ledger (summary.json) covers the part
before the resume too.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from rook_env import raw_env  # noqa: E402
from rook_env.agents.learned.model import ActorCritic, load_checkpoint  # noqa: E402
from rook_env.training import make_train_config, ray_collection, train  # noqa: E402
from rook_env.training.ray_collection import RayCollectors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "configs", "smoke.yaml")
TINY = ["progress=false", "num_envs=8", "rollout_decisions=256", "minibatch_size=128", "update_epochs=1",
        "bc_steps=0", "eval_every=0", "eval_deals=2", "eval_opponents=[random]", "checkpoint_every=1"]


# ================================================================================= a stand-in for Ray
class ActorError(Exception):
    """The stand-in's ``ray.exceptions.RayActorError``."""


class Ref:
    """An object ref: its value (or the error of a dead actor) and the clock step from which it is ready."""

    count = itertools.count()

    def __init__(self, value=None, error=None, ready_at=0) -> None:
        self.value, self.error, self.ready_at = value, error, ready_at
        self.order = next(Ref.count)


class Actor:
    def __init__(self, fake: FakeRay, body_class, options: dict, args: tuple) -> None:
        self.fake, self.name, self.dead, self.refs = fake, options["name"], False, []
        self.ready_at = fake.tick + fake.start_delay(self.name)  # placed and set up from this step on
        self.node = f"node-{len(fake.actors) % 2}"
        fake.node_now = self.node
        self.body = body_class(*[fake.resolve(a) for a in args])
        fake.actors.append(self)

    def __getattr__(self, method: str):
        actor = self

        class Method:
            @staticmethod
            def remote(*args):
                return actor.call(method, args)

        return Method

    def call(self, method: str, args: tuple) -> Ref:
        ready = max(self.fake.tick, self.ready_at) + 1
        if self.dead:
            return Ref(error=ActorError(f"{self.name} is dead"), ready_at=self.fake.tick)
        ref = Ref(getattr(self.body, method)(*[self.fake.resolve(a) for a in args]), ready_at=ready)
        self.refs.append(ref)
        return ref

    def kill(self) -> None:
        self.dead = True
        for ref in self.refs:
            if ref.error is None:
                ref.value, ref.error, ref.ready_at = None, ActorError(f"{self.name} was killed"), self.fake.tick


class FakeRay(types.ModuleType):
    """``ray`` as RayCollectors and CollectorWorker use it. ``events(fake)`` runs at every step of the clock (a
    test's faults); ``start_delay(name)`` is how many steps an actor takes to start."""

    def __init__(self, events=None, start_delay=None) -> None:
        super().__init__("ray")
        self.tick, self.actors = 0, []
        self.events = events or (lambda fake: None)
        self.start_delay = start_delay or (lambda name: 0)
        self.exceptions = types.SimpleNamespace(RayActorError=ActorError)
        self.node_now = "node-0"

    def is_initialized(self) -> bool:
        return True

    def get_runtime_context(self):
        node = self.node_now
        return types.SimpleNamespace(get_node_id=lambda: node)

    def remote(self, body_class):
        fake = self

        class Options:
            def __init__(self, options: dict) -> None:
                self.options_ = options

            def remote(self, *args):
                return Actor(fake, body_class, self.options_, args)

        return types.SimpleNamespace(options=lambda **options: Options(options))

    def put(self, value) -> Ref:
        return Ref(value)

    def resolve(self, x):
        return x.value if isinstance(x, Ref) else x

    def wait(self, refs: list[Ref], num_returns: int = 1, timeout: float | None = None):
        self.tick += 1
        self.events(self)
        while not any(r.ready_at <= self.tick for r in refs):  # nothing ready: the clock runs on
            self.tick += 1
            self.events(self)
        ready = sorted((r for r in refs if r.ready_at <= self.tick), key=lambda r: (r.ready_at, r.order))
        ready = ready[:num_returns]
        return ready, [r for r in refs if r not in ready]

    def get(self, ref: Ref | list[Ref]):
        if isinstance(ref, list):
            return [self.get(r) for r in ref]
        if ref.error is not None:
            raise ref.error
        return ref.value

    def kill(self, actor: Actor) -> None:
        actor.kill()

    def actor(self, name_end: str) -> Actor:
        return next(a for a in self.actors if a.name.endswith(name_end))


@pytest.fixture
def fake_ray(monkeypatch):
    """Install a stand-in for ``ray`` built by the test (``fake_ray(events=..., start_delay=...)``)."""
    def install(**kwargs) -> FakeRay:
        fake = FakeRay(**kwargs)
        monkeypatch.setitem(sys.modules, "ray", fake)
        return fake

    return install


def tiny(tmp_path, name: str, *overrides: str):
    return make_train_config(SMOKE, [f"run_dir={tmp_path}", f"name={name}", *TINY, "ray.collectors=2", *overrides])


def learner(cfg) -> ActorCritic:
    env = raw_env()
    return ActorCritic(env.observation_space("player_0")["observation"].shape[0], env.action_space("player_0").n,
                       cfg.hidden, env.state_space.shape[0], cfg.critic_hidden).eval()


# ============================================================================================= the tests
def test_a_replacement_collector_starts_on_the_learners_current_weights(fake_ray, tmp_path):
    """Collector 0 dies at step 4; its replacement takes 8 steps to start while collector 1 delivers a rollout a
    step (the learner updates after each). The replacement's first rollout plays the weights of when it started,
    so its lag is as small as any other's and it is booked: nothing is dropped with max_lag 2."""
    def kill_collector_0(fake: FakeRay) -> None:
        if fake.tick == 4:
            fake.kill(fake.actor("-collector-0-0"))

    fake_ray(events=kill_collector_0, start_delay=lambda name: 8 if name.endswith("-1") else 0)
    cfg = tiny(tmp_path, "replace", "ray.max_lag=2")
    lines: list[str] = []
    col = RayCollectors(cfg, np.random.default_rng(0), log=lines.append)
    model = learner(cfg)
    got = []
    while not any(m["incarnation"] == 1 for m in got) and len(got) < 40:
        version = col.version
        _, stats = col.collect(model, 0.0)
        got.append({**stats["ray"], "learner": version})
    first = next(m for m in got if m["incarnation"] == 1)
    assert col.ledger["collectors_replaced"] == 1 and col.ledger["dropped_rollouts"] == 0, (col.ledger, lines)
    assert first["lag"] <= cfg.ray.max_lag
    started = next(line for line in lines if "collector 0 (incarnation 1) started" in line)
    assert f"(version {first['version']})" in started  # the learner's version when it started, not when it died
    died_at = next(m["learner"] for m in got if m["collector"] == 1 and m["learner"] >= 1)  # collectors alternate
    assert first["version"] > died_at + 4, "the replacement played the weights of when its predecessor died"
    assert any("collector 0 (incarnation 0) died" in line and "replaced by a new collector" in line for line in lines)


def test_the_log_says_while_collectors_wait_for_a_node(fake_ray, tmp_path, monkeypatch):
    """A collector that cannot be placed for a long time: the run goes on with the other, and the log says how many
    wait, for how long, and how many play; the late one's first rollout is booked when it comes."""
    monkeypatch.setattr(ray_collection, "WAIT_LOG_SECONDS", 0.0)
    fake = fake_ray(start_delay=lambda name: 6 if "-collector-1-" in name else 0)
    cfg = tiny(tmp_path, "short", "ray.max_lag=2")
    lines: list[str] = []
    col = RayCollectors(cfg, np.random.default_rng(0), log=lines.append)
    model = learner(cfg)
    metas = [col.collect(model, 0.0)[1]["ray"] for _ in range(10)]
    assert "1 still waiting for a node with 1 CPU free" in lines[0]
    waiting = [line for line in lines if "1 of 2 collectors waiting for a node" in line]
    assert waiting and "the run goes on with 1" in waiting[0], lines
    late = next(m for m in metas if m["collector"] == 1)
    assert late["version"] >= 5 and late["lag"] <= cfg.ray.max_lag and col.ledger["dropped_rollouts"] == 0
    assert fake.tick > 6


def test_a_resumed_runs_ray_ledger_covers_the_whole_run(fake_ray, tmp_path):
    """A run that replaced a collector and dropped rollouts (two collectors, max_lag 1), then resumed from its
    last.pt for more iterations: the summary's ledger counts both sessions (booked decisions = the run's decisions,
    the replacement and the drops before the resume), and checkpoints carry it."""
    def kill_once(fake: FakeRay) -> None:
        if fake.tick == 5:
            fake.kill(fake.actor("-collector-0-0"))

    fake_ray(events=kill_once)
    first = train(tiny(tmp_path, "ledger", "total_decisions=2000", "ray.max_lag=1"), quiet=True)
    before = first["ray"]
    assert before["collectors_replaced"] == 1 and before["dropped_rollouts"] >= 1, before
    assert before["booked_decisions"] == first["decisions"] and before["sessions"] == 1
    assert load_checkpoint(first["paths"]["last"])["ray"] == before  # the checkpoint carries the ledger

    fake_ray()  # a new driver session: new collectors, no faults
    cfg = tiny(tmp_path, "ledger", "total_decisions=4000", "ray.max_lag=1")
    second = train(cfg, resume=first["paths"]["last"], quiet=True)
    after = second["ray"]
    assert second["iterations"] > first["iterations"] and after["sessions"] == 2
    assert after["booked_decisions"] == second["decisions"]  # the whole run's, not the part after the resume
    assert after["booked_rollouts"] == second["iterations"]
    assert after["collectors_replaced"] == before["collectors_replaced"]
    assert after["dropped_rollouts"] >= before["dropped_rollouts"] and after["dropped"][:len(before["dropped"])] == \
        before["dropped"]
    sessions = {d["session"] for d in after["dropped"]} | {r["rollout"]["session"] for r in
                                                           load_checkpoint(second["paths"]["last"])["history"]}
    assert len(sessions) == 2
    with open(os.path.join(tmp_path, "ledger", "summary.json")) as fh:
        assert json.load(fh)["ray"] == after


def test_ctrl_c_drops_the_iterations_rollout_from_the_ledger_too(fake_ray, tmp_path, monkeypatch, capsys):
    """Ctrl-C in an update: the iteration is dropped, and so is its rollout from the ledger, so that last.pt's
    ledger books exactly the decisions of its iterations; the ledger's line is logged once."""
    from rook_env.training import loop

    real, calls = loop.ppo_update, []

    def update(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(loop, "ppo_update", update)
    fake_ray()
    out = train(tiny(tmp_path, "cut", "total_decisions=5000"))
    assert out["stop_reason"] == "interrupted" and out["iterations"] == 2
    saved = load_checkpoint(out["paths"]["last"])
    assert out["ray"] == saved["ray"] and saved["ray"]["booked_rollouts"] == 2
    assert saved["ray"]["booked_decisions"] == saved["decisions"] == out["decisions"]
    assert capsys.readouterr().err.count("ray: booked rollouts 2, booked decisions") == 1
