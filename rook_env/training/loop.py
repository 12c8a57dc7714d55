"""PPO self-play, top to bottom (:func:`train`): set the run up (or resume it), warm-start it by behaviour
cloning, then iterations until the stopping rule: collect a rollout (its advantages computed with it: GAE over
each seat's own decisions, rook_env.training.ppo), update the network on it, book and log the iteration, and let
the callbacks act (evaluation, ``best.pt``, the playoff's candidates, ``last.pt``). Then the end: the playoff,
``agent.pt``, the held-out evaluation, the learning curve and ``summary.json``.

What varies between runs are plug-ins that this loop calls, never branches inside it (:mod:`.run` holds what
they share):

- the **collector** (:mod:`.collectors`): in this process, collect then update (``overlap: false``); the next
  rollout collected beside the update (``overlap: true``, asynchronous PPO with one update of policy lag); or
  collector actors on a Ray cluster (the ``ray`` section; without it nothing imports Ray);
- the **loss terms** beside PPO's own (:mod:`.losses`): expert iteration's distillation (the ``exit`` section);
- the **callbacks** (:mod:`.callbacks`): the Ctrl-C rollback, the periodic evaluation and ``best.pt``, the
  playoff, the periodic ``last.pt``.

**Stopping and interruptions.** A run stops at ``total_decisions`` or at ``max_minutes`` of the run's wall
time across resumes (:class:`~rook_env.training.reporting.RunClock`), whichever comes first, and then
finishes normally. Ctrl-C drops the iteration in progress, saves ``last.pt`` at the last completed one (or,
during behaviour cloning, the partly cloned network at iteration 0) and writes ``agent.pt`` from
``best.pt`` when an evaluation has taken place, so an interrupted run has an agent to evaluate; a crash
(any other exception) writes ``agent.pt`` from ``best.pt`` the same way and re-raises.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import sys
import time
from functools import partial

import torch
import yaml
from torch.utils.tensorboard import SummaryWriter

from rook_env.agents.learned.model import CheckpointError, load_checkpoint, model_from_checkpoint

from .behaviour_cloning import behaviour_clone
from .callbacks import make_callbacks
from .checkpoints import load_model, new_model, prepare_run_dir, restore, save_agent, seed_everything
from .collectors import Rollout, make_collection, run_beside  # noqa: F401 - run_beside: bench_train.py's
from .config import PPOConfig, game_of, linear, mix_at
from .losses import loss_terms
from .ppo import PPOSettings, make_optimizer, ppo_update
from .reporting import (ProgressLine, RunClock, interruption_note, iteration_scalars, machine_info, plot_curve,
                        print_summary, progress_figures)
from .run import Log, RandomStreams, Run, RunPaths
from .selection import evaluate_field


def train(cfg: PPOConfig, resume: str | None = None, quiet: bool = False, overwrite: bool = False) -> dict:
    """Train; returns the summary (also written to runs/<name>/summary.json).

    Ctrl-C (KeyboardInterrupt) saves ``last.pt`` at the last completed iteration (or, during
    behaviour cloning, the partly cloned network at iteration 0), writes ``agent.pt`` from ``best.pt``
    when there is one, and returns a summary whose ``stop_reason`` is ``"interrupted"``."""
    run = set_up(cfg, resume, overwrite, quiet)
    state, model, settings = run.state, run.model, PPOSettings.of(cfg)
    stop_reason, phase = "total_decisions", "ppo"  # phase: what a Ctrl-C interrupts
    try:
        if not resume and cfg.bc_steps > 0 and not cfg.init_checkpoint:
            phase = "behaviour cloning"
            warm_start(run)
            phase = "ppo"
        run.clock.start_rate(state.decisions)
        while state.decisions < cfg.total_decisions:
            if run.clock.out_of_time():
                stop_reason = "max_minutes"
                break
            run.call("iteration_start")
            # Schedules: linear in the progress towards total_decisions (not the time cap: a seed's run must not
            # depend on the machine's speed).
            progress = state.decisions / cfg.total_decisions
            lr, ent_coef = linear(cfg.lr, cfg.lr_end, progress), linear(cfg.ent_coef, cfg.ent_coef_end, progress)
            for group in run.optimizer.param_groups:
                group["lr"] = lr

            # 1. collect a rollout (the collector computes its advantages and returns)
            rollout = run.collection.rollout(run, progress)

            # 2. update: PPO's loss and the plug-in terms'; the first critic_warmup updates train the critic alone
            t0 = time.time()
            figures = {k: v for term in run.terms for k, v in term.refresh(model).items()}
            extra = [f for term in run.terms if (f := term.loss()) is not None]
            policy = state.iteration >= cfg.critic_warmup
            update = partial(ppo_update, model, run.optimizer, rollout.batch, settings, ent_coef,
                             run.streams.gens["update"], extra, policy)
            losses, t_ahead = run.collection.update(run, update,
                                                    (state.decisions + rollout.decisions) / cfg.total_decisions)
            t_update = time.time() - t0

            # 3. book and log it; 4. the callbacks (evaluation and best.pt, the playoff's candidates, last.pt)
            rec = book(run, rollout, losses, figures, lr, ent_coef, progress, t_update, t_ahead)
            run.call("iteration_end", rec)
            run.log.progress(state.decisions, progress_figures(rec, state.history, run.clock.rate(state.decisions)))
        run.collection.close()  # no more rollouts: the cores go to the evaluation
        run.call("training_end")
    except KeyboardInterrupt:
        stop_reason = "interrupted"
        run.call("interrupted")
    except Exception:
        crashed(run)
        raise
    finally:
        for term in run.terms:
            term.close()
        run.collection.close()
    run.log.close()
    state.wall_seconds = run.clock.seconds()
    return interrupted(run, phase) if stop_reason == "interrupted" else finish(run, stop_reason)


# ================================================================================================ set up
def pick_device(name: str) -> torch.device:
    """The config's ``device``: ``auto`` is CUDA when present, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def set_up(cfg: PPOConfig, resume: str | None, overwrite: bool, quiet: bool) -> Run:
    """The run's objects and plug-ins, a checkpoint's state when ``resume`` names one, the TensorBoard writer,
    the clock and the progress line. The order of everything that draws random numbers here (the network's
    initialisation, the collector's, the update's and the labelled minibatches' generator seeds) is part of what a
    seed reproduces."""
    started = time.time()
    torch.set_num_threads(cfg.torch_threads)
    device = pick_device(cfg.device)
    streams = RandomStreams(seed_everything(cfg.seed))
    paths = RunPaths(os.path.join(cfg.run_dir, cfg.name))
    prepare_run_dir(paths.folder, resume, overwrite)
    game = game_of(cfg)  # the one Game of the run, passed down
    model = new_model(cfg, game).to(device)
    grad_dtype = model.set_grad_precision(cfg.grad_precision)  # the dense layers' gradient products (model.py)
    run = Run(cfg, game, device, model, make_optimizer(model, cfg.lr, eps=1e-5), streams, paths, Log(quiet, started),
              started)
    run.collection = make_collection(run)
    streams.gens["collect"] = run.collection.gen
    streams.generator("update", device)  # the update's minibatch shuffles
    run.terms = loss_terms(cfg, model, game, device, streams)
    run.callbacks = make_callbacks(cfg)
    started_as = load_weights(run, resume)
    # A resumed run drops the events an interrupted session logged after its checkpoint (no duplicate steps).
    run.writer = SummaryWriter(paths.folder, purge_step=run.state.decisions + 1 if resume else None)
    if not resume:
        run.writer.add_text("config", "```\n" + yaml.safe_dump(dataclasses.asdict(cfg), sort_keys=False) + "\n```")
    # The run's clock counts from its first session: max_minutes is the budget of the whole run (PPOConfig).
    run.clock = RunClock(cfg.total_decisions, cfg.max_minutes, start=started - run.state.wall_seconds)
    run.log.show_progress(ProgressLine(run.clock) if cfg.progress and not quiet else None)
    run.log(f"{started_as} on {device}: obs {model.obs_dim}, actions {model.n_actions}, critic input "
            f"{model.critic_dim or model.obs_dim}, {sum(p.numel() for p in model.parameters()):,} parameters, "
            f"gradient products in {str(grad_dtype).removeprefix('torch.')} (grad_precision {cfg.grad_precision})")
    if cfg.max_minutes and resume:
        run.log(f"time cap: {cfg.max_minutes:g} min for the whole run, {run.state.wall_seconds / 60:.1f} of them "
                f"spent")
    return run


def load_weights(run: Run, resume: str | None) -> str:
    """The network's starting weights: a checkpoint's to resume (with everything the run saved), an
    ``init_checkpoint``'s, or the fresh ones; then the league's networks. Returns how the run starts, in words."""
    cfg, model, game = run.cfg, run.model, run.game
    started = f"new run {run.paths.folder}"
    if resume:
        pool, saved = restore(resume, run.device, game, model, run.optimizer, run.streams.rng, run.streams.gens,
                              run.state)
        for weights in pool:
            snapshot = copy.deepcopy(model.actor)
            snapshot.load_state_dict(weights)
            run.collection.pool.append(snapshot.eval())
        started = f"resumed {resume}: iteration {run.state.iteration}, {run.state.decisions:,} decisions"
    elif cfg.init_checkpoint:
        model.load_state_dict(load_model(cfg.init_checkpoint, game, model.obs_dim, model.n_actions,
                                         like=model).state_dict())
        started = f"initialised from {cfg.init_checkpoint}"
    for path in cfg.league:  # fixed pool members (not saved in checkpoints: the config names them)
        member = load_model(path, game, model.obs_dim, model.n_actions)
        if member.heuristic_prior:  # the pool plays actors alone: a residual policy would lose its heuristic
            raise CheckpointError(f"league member {path!r} is a residual policy over the heuristic (heuristic_prior="
                                  f"{member.heuristic_prior:g}): league members must be plain networks")
        run.collection.league.append(member.actor.to(run.device).eval())
    if resume:
        run.collection.resume(run, saved, resume)
    return started


def warm_start(run: Run) -> None:
    """Behaviour cloning of the heuristic (rook_env.training.behaviour_cloning) before PPO."""
    cfg, state = run.cfg, run.state
    state.bc = {"interrupted": True}  # what last.pt says on Ctrl-C
    state.bc = behaviour_clone(run.model, cfg, run.device, run.streams.rng, run.log.steps, run.game)
    acc = state.bc["held_out_accuracy"]
    kept = f" (kept step {state.bc['kept_step']})" if "kept_step" in state.bc else ""
    run.log(f"behaviour cloning: {state.bc['decisions']} heuristic decisions, {cfg.bc_steps} steps{kept}, "
            f"held-out accuracy " + " ".join(f"{k} {v:.3f}" for k, v in acc.items())
            + f", {state.bc['seconds']:.0f}s")


# ============================================================================================ iterations
def book(run: Run, rollout: Rollout, losses: dict, figures: dict, lr: float, ent_coef: float, progress: float,
         t_update: float, t_ahead: float) -> dict:
    """Book an iteration: the counters, its TensorBoard scalars and its history record (returned)."""
    cfg, state = run.cfg, run.state
    # its wall time: its collection (none when collected ahead) and the update (beside the next collection then)
    t_iter = t_update + (0.0 if rollout.ahead else rollout.seconds)
    scalars = iteration_scalars(rollout.batch, rollout.stats, losses, lr=lr, ent_coef=ent_coef,
                                mix=mix_at(cfg, progress), seconds=(rollout.seconds, t_update, t_iter, t_ahead),
                                update_epochs=cfg.update_epochs, pool_size=len(run.collection.pool))
    scalars.update(figures)
    state.iteration += 1
    state.decisions += rollout.decisions
    state.wall_seconds = run.clock.seconds()
    rec = {"iteration": state.iteration, "decisions": state.decisions, "wall_seconds": state.wall_seconds,
           **{k.split("/")[1]: v for k, v in scalars.items() if k.startswith(("losses", "train", "perf", "exit"))}}
    if rollout.origin:  # where the rollout came from (a Ray collector's id, node and lag)
        rec["rollout"] = rollout.origin
    state.history.append(rec)
    for k, v in scalars.items():
        run.scalar(k, v)
    return rec


# ================================================================================================ the end
def finish(run: Run, stop_reason: str) -> dict:
    """A finished run: ``last.pt``; ``agent.pt``, the best checkpoint's model or the callbacks' choice (the
    playoff's winner); the held-out evaluation, the curve, ``summary.json``."""
    cfg, state, paths = run.cfg, run.state, run.paths
    run.checkpoint(paths.last)
    best = load_checkpoint(paths.best)
    agent = {"checkpoint": best, "model": model_from_checkpoint(best), "playoff": []}
    run.call("choose_agent", agent)
    save_agent(paths.agent, agent["model"], cfg, state.as_dict(), agent["checkpoint"], run.game.flags)
    final = evaluate_final(run, agent["model"]) if cfg.final_eval_deals else {}
    run.writer.close()
    plot_curve(state.history, paths.curve, title=f"{cfg.name} (seed {cfg.seed})", ylabel=run.game.eval_unit)
    summary = {
        "name": cfg.name, "seed": cfg.seed, "stop_reason": stop_reason, "iterations": state.iteration,
        "decisions": state.decisions, "wall_seconds": round(state.wall_seconds, 1),
        "device": str(run.device), "machine": machine_info(), "bc": state.bc, "best": state.best,
        "final_eval": final, "playoff": agent["playoff"], **collection_report(run),
        "paths": {"last": paths.last, "best": paths.best, "agent": paths.agent, "curve": paths.curve},
        "config": dataclasses.asdict(cfg),
    }
    with open(paths.summary, "w") as fh:
        json.dump(summary, fh, indent=2)
    if not run.log.quiet:
        print_summary(summary)
    return summary


def evaluate_final(run: Run, model: torch.nn.Module) -> dict:
    """The shipped model on the held-out deals (``final_eval_deals`` of ``final_eval_seed``)."""
    return evaluate_field(model, run.cfg, run.cfg.final_eval_deals, run.cfg.final_eval_seed, run.game)


def collection_report(run: Run) -> dict:
    """The collector plug-in's entry of the summary (``ray``: the Ray ledger), or none."""
    report = run.collection.report()
    return {} if report is None else {"ray": report}


def interrupted(run: Run, phase: str) -> dict:
    """A run stopped by Ctrl-C: ``last.pt`` at its last booked iteration, ``agent.pt`` from ``best.pt`` when there
    is one, and a note of what to do next."""
    cfg, state, paths = run.cfg, run.state, run.paths
    run.checkpoint(paths.last)
    run.writer.close()
    saved = {"last": paths.last}
    if os.path.isfile(paths.best):
        agent_from_best(run)
        saved.update(best=paths.best, agent=paths.agent)
    summary = {"name": cfg.name, "seed": cfg.seed, "stop_reason": "interrupted", "iterations": state.iteration,
               "decisions": state.decisions, "wall_seconds": round(state.wall_seconds, 1),
               "interrupted_during": phase, "best": state.best, "paths": saved, **collection_report(run)}
    if not run.log.quiet:
        print("\n" + interruption_note(summary, cfg.eval_every), file=sys.stderr)
    return summary


def crashed(run: Run) -> None:
    """A crash: leave an agent to evaluate (the best checkpoint's model); the caller fails loudly."""
    run.log.close()
    if os.path.isfile(run.paths.best):
        agent_from_best(run)
        print(f"\ntraining failed: {run.paths.agent} holds the best checkpoint's model "
              f"(iteration {run.state.best['iteration']}); last.pt the last saved iteration", file=sys.stderr)


def agent_from_best(run: Run) -> None:
    """``agent.pt`` from ``best.pt`` for a run that did not reach its end (Ctrl-C, a crash): its best model so far."""
    best = load_checkpoint(run.paths.best)
    save_agent(run.paths.agent, model_from_checkpoint(best, run.paths.best), run.cfg, run.state.as_dict(), best,
               run.game.flags)
