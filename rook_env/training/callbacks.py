"""The callback plug-ins of PPO's loop (rook_env.training.loop): what happens around an iteration besides collecting
and updating. The loop calls each hook of every callback in order (:meth:`~rook_env.training.run.Run.call`):

- ``iteration_start`` / ``iteration_end(rec)``: before an iteration, and after it is booked (``rec``: its history
  record);
- ``evaluated(ev)``: an evaluation of the current network (periodic, or the last one);
- ``training_end``: no iteration is left (not after Ctrl-C);
- ``interrupted``: Ctrl-C;
- ``choose_agent(agent)``: at the end, what ``agent.pt`` holds (``agent``: the checkpoint it comes from, the model,
  the playoff's records).

:func:`make_callbacks` gives the config's: :class:`Rollback`, :class:`Evaluation`, :class:`Playoff` (with
``playoff_candidates``) and :class:`Checkpointing`, in that order.
"""

from __future__ import annotations

import copy

from .config import PPOConfig
from .run import Run
from .selection import evaluate_field, keep_candidate, new_best, run_playoff


class Callback:
    """A plug-in the loop calls at fixed points; every hook does nothing unless a subclass says otherwise."""

    def iteration_start(self, run: Run) -> None:
        pass

    def iteration_end(self, run: Run, rec: dict) -> None:
        pass

    def evaluated(self, run: Run, ev: dict) -> None:
        pass

    def training_end(self, run: Run) -> None:
        pass

    def interrupted(self, run: Run) -> None:
        pass

    def choose_agent(self, run: Run, agent: dict) -> None:
        pass


class Rollback(Callback):
    """Ctrl-C drops the iteration in progress: the network, the optimizer, every random state and the collector
    plug-in's state go back to where it started, so that ``last.pt`` (written at the end) resumes exactly."""

    def __init__(self) -> None:
        self.start: dict | None = None

    def iteration_start(self, run: Run) -> None:
        self.start = {"iteration": run.state.iteration, "model": copy.deepcopy(run.model.state_dict()),
                      "optimizer": copy.deepcopy(run.optimizer.state_dict()), "rng": run.streams.state(),
                      "collection": run.collection.snapshot()}

    def iteration_end(self, run: Run, rec: dict) -> None:
        self.start = None  # the iteration is booked

    def interrupted(self, run: Run) -> None:
        if self.start is None or run.state.iteration != self.start["iteration"]:  # none started, or booked
            return
        run.model.load_state_dict(self.start["model"])
        run.optimizer.load_state_dict(self.start["optimizer"])
        run.streams.restore(self.start["rng"])
        run.collection.rollback(self.start["collection"])


class Evaluation(Callback):
    """Every ``eval_every`` iterations, and after the last when that one was not evaluated, the greedy network plays
    ``eval_opponents`` (rook_env.training.selection); ``best.pt`` is the best evaluation's checkpoint."""

    def iteration_end(self, run: Run, rec: dict) -> None:
        cfg = run.cfg
        if cfg.eval_every and run.state.iteration % cfg.eval_every == 0:
            rec["eval"] = ev = self.evaluate(run)
            run.call("evaluated", ev)
            if run.log.bar is None:
                run.log(f"it {run.state.iteration} dec {run.state.decisions:,}: "
                        + ", ".join(f"vs {o} {ev[o]['mean']:+.1f}" for o in cfg.eval_opponents))

    def training_end(self, run: Run) -> None:
        history = run.state.history
        if not history or "eval" not in history[-1]:  # evaluate the final policy too
            ev = self.evaluate(run)
            if history:
                history[-1]["eval"] = ev
            run.call("evaluated", ev)

    def evaluate(self, run: Run) -> dict:
        cfg = run.cfg
        res = {"iteration": run.state.iteration, "decisions": run.state.decisions}
        res.update(evaluate_field(run.model, cfg, cfg.eval_deals, cfg.eval_seed, run.game))
        for opp in cfg.eval_opponents:
            run.scalar(f"eval/{opp}", res[opp]["mean"])
        return res

    def evaluated(self, run: Run, ev: dict) -> None:
        if new_best(run.state, ev, run.cfg):
            run.checkpoint(run.paths.best)


class Playoff(Callback):
    """The ``playoff_candidates`` best evaluated networks are kept (``candidates/``) and played again at the end on
    ``playoff_deals`` fresh deals; the winner becomes ``agent.pt`` (rook_env.training.selection)."""

    def evaluated(self, run: Run, ev: dict) -> None:
        path = keep_candidate(run.state, ev, run.cfg, run.paths.folder)
        if path is not None:
            run.checkpoint(path, full=False)

    def choose_agent(self, run: Run, agent: dict) -> None:
        agent["playoff"], winner = run_playoff(run.cfg, run.state.candidates, run.log, run.game)
        if winner is not None:
            agent["checkpoint"], agent["model"] = winner


class Checkpointing(Callback):
    """``last.pt`` every ``checkpoint_every`` iterations (the loop writes it at the end and on Ctrl-C too)."""

    def iteration_end(self, run: Run, rec: dict) -> None:
        if run.state.iteration % run.cfg.checkpoint_every == 0:
            run.checkpoint(run.paths.last)


def make_callbacks(cfg: PPOConfig) -> list[Callback]:
    """The config's callbacks, in the order the loop calls them."""
    return [Rollback(), Evaluation(), *([Playoff()] if cfg.playoff_candidates else []), Checkpointing()]
