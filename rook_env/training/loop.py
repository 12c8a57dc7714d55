"""The training loop (:func:`train`): set up or resume a run, warm-start it by behaviour cloning, then PPO
iterations (collect a rollout, update, book, evaluate, checkpoint) until the stopping rule, then the end
(playoff, ``agent.pt``, the learning curve, ``summary.json``).

**Overlap** (``overlap: true``, asynchronous PPO with one update of policy lag): the update of rollout k runs
in a second thread while this thread collects rollout k + 1 with the weights from before that update (torch
and numpy release the GIL in their kernels, so the two share two cores). PPO's ratio is taken against the
behaviour policy's recorded log-probabilities, so the lag is what its clipping bounds. Collection and update
draw from their own torch generators, so a run stays reproducible; checkpoints record how the rollout
collected ahead started (its weights and random states) and a resume collects it again, so cut-and-resumed
runs equal straight ones. ``overlap: false`` collects, then updates, in turn.

**On a Ray cluster** (the config's ``ray`` section, ``ray.collectors > 0``): the collector is
:class:`~rook_env.training.ray_collection.RayCollectors`, collector actors behind the same ``collect``; they play
while the learner updates, so ``overlap`` does not apply, and each iteration's history entry records its rollout's
origin (``rollout``). Without the section nothing here imports Ray.

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
import threading
import time
from collections.abc import Callable
from typing import Any

import torch
import yaml

from rook_env.agents.learned.model import ActorCritic, CheckpointError, load_checkpoint, model_from_checkpoint

from .behaviour_cloning import behaviour_clone
from .checkpoints import (load_model, new_model, prepare_run_dir, restore, rng_state, save_agent, save_checkpoint,
                          seed_everything, set_rng_state)
from .collection import Collector
from .config import Config, linear, mix_at
from .games import game_of
from .ppo import PPOSettings, make_optimizer, ppo_update
from .reporting import (ProgressLine, RunClock, interruption_note, iteration_scalars, machine_info, plot_curve,
                        print_summary, progress_figures)
from .selection import evaluate_field, keep_candidate, new_best, run_playoff


def pick_device(name: str) -> torch.device:
    """The config's ``device``: ``auto`` is CUDA when present, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def timed(collect: Callable[[], tuple[dict, dict]]) -> tuple[dict, dict, float]:
    """A collection's (batch, stats) and its wall seconds."""
    t0 = time.time()
    batch, stats = collect()
    return batch, stats, time.time() - t0


def run_beside(background: Callable[[], Any], foreground: Callable[[], Any]) -> tuple[Any, Any]:
    """Run ``background`` in a second thread while this thread runs ``foreground``; return both results.
    Torch and numpy release the GIL in their kernels, so the PPO update (background) and the collection
    (foreground) share two cores. Both always finish before this returns, and an exception of either
    (Ctrl-C included, which Python delivers to this thread) is raised here after both have stopped."""
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["value"] = background()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread below
            out["error"] = exc

    worker = threading.Thread(target=work, name="ppo-update", daemon=True)
    worker.start()
    try:
        front = foreground()
    finally:
        worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"], front


def train(cfg: Config, resume: str | None = None, quiet: bool = False, overwrite: bool = False) -> dict:
    """Train; returns the summary (also written to runs/<name>/summary.json).

    Ctrl-C (KeyboardInterrupt) saves ``last.pt`` at the last completed iteration (or, during
    behaviour cloning, the partly cloned network at iteration 0), writes ``agent.pt`` from ``best.pt``
    when there is one, and returns a summary whose ``stop_reason`` is ``"interrupted"``."""
    from torch.utils.tensorboard import SummaryWriter

    session_start = time.time()
    torch.set_num_threads(cfg.torch_threads)
    device = pick_device(cfg.device)
    rng = seed_everything(cfg.seed)
    out_dir = os.path.join(cfg.run_dir, cfg.name)
    prepare_run_dir(out_dir, resume, overwrite)
    last_ckpt = os.path.join(out_dir, "last.pt")
    best_ckpt = os.path.join(out_dir, "best.pt")
    agent_path = os.path.join(out_dir, "agent.pt")

    # ------------------------------------------------------------------------------------------ set up
    # The order of everything that draws random numbers here (network initialisation, the collector's and the
    # update's generator seeds) is part of what a seed reproduces.
    game = game_of(cfg)
    model = new_model(cfg, game).to(device)
    obs_dim, n_actions = model.obs_dim, model.n_actions
    grad_dtype = model.set_grad_precision(cfg.grad_precision)  # the dense layers' gradient products (model.py)
    optimizer = make_optimizer(model, cfg.lr, eps=1e-5)
    ppo_settings = PPOSettings.of(cfg)
    if cfg.ray.collectors:  # collector actors on a Ray cluster, behind the same interface (ray is imported only here)
        from .ray_collection import RayCollectors

        collector = RayCollectors(cfg, rng, log=lambda line: log(line))
    else:
        collector = Collector(cfg, device, rng)
    # Ray's collectors play while the learner updates already: overlap is the in-process collector's way to do it
    overlap = cfg.overlap and not cfg.ray.collectors
    update_gen = torch.Generator(device=device)  # the update's minibatch shuffles
    update_gen.manual_seed(int(rng.integers(2**62)))
    gens = {"collect": collector.gen, "update": update_gen}
    expert = None  # expert iteration (the config's exit section; rook_env.training.expert)
    if cfg.exit.source:
        from .expert import ExpertIteration

        gens["exit"] = torch.Generator()  # the labelled minibatches' draws
        gens["exit"].manual_seed(int(rng.integers(2**62)))
        expert = ExpertIteration(cfg, model, game.flags, gens["exit"], device)
    # overlap: the collector plays with ``behaviour``, the weights before the update that runs beside it. A rollout
    # collected ahead is ``ahead`` (batch, stats, seconds); ``ahead_from`` says how it started (its number, the
    # weights, the random states), saved in checkpoints so that a resume collects it again.
    behaviour = copy.deepcopy(model).eval() if overlap else model
    ahead: tuple | None = None
    ahead_from: dict | None = None
    state = {"iteration": 0, "decisions": 0, "wall_seconds": 0.0, "best": None, "history": [], "bc": None,
             "candidates": []}
    started = f"new run {out_dir}"

    if resume:
        pool, ahead_from = restore(resume, device, game, model, optimizer, rng, gens, state)
        for sd in pool:
            snap = copy.deepcopy(model.actor)
            snap.load_state_dict(sd)
            collector.pool.append(snap.eval())
        started = f"resumed {resume}: iteration {state['iteration']}, {state['decisions']:,} decisions"
    elif cfg.init_checkpoint:
        model.load_state_dict(load_model(cfg.init_checkpoint, game, obs_dim, n_actions, like=model).state_dict())
        started = f"initialised from {cfg.init_checkpoint}"
    for path in cfg.league:  # fixed pool members (not saved in checkpoints: the config names them)
        member = load_model(path, game, obs_dim, n_actions)
        if member.heuristic_prior:  # the pool plays actors alone: a residual policy would lose its heuristic
            raise CheckpointError(f"league member {path!r} is a residual policy over the heuristic (heuristic_prior="
                                  f"{member.heuristic_prior:g}): league members must be plain networks")
        collector.league.append(member.actor.to(device).eval())
    if ahead_from is not None:  # the rollout the interrupted run had collected ahead, collected again
        if not overlap:
            raise CheckpointError(f"{resume!r} was saved with a rollout collected ahead (overlap: true): resume it "
                                  f"with overlap: true")
        behaviour.load_state_dict(ahead_from["weights"])
        saved = rng_state(rng, gens)
        set_rng_state(rng, ahead_from["rng"], gens)
        ahead = timed(lambda: collector.collect(behaviour, state["decisions"] / cfg.total_decisions))
        set_rng_state(rng, saved, gens)
    # A resumed run drops the events an interrupted session logged after its checkpoint (no duplicate steps).
    writer = SummaryWriter(out_dir, purge_step=state["decisions"] + 1 if resume else None)
    # The run's clock counts from its first session: max_minutes is the budget of the whole run (Config).
    run_clock = RunClock(cfg.total_decisions, cfg.max_minutes, start=session_start - state["wall_seconds"])
    bar = ProgressLine(run_clock) if cfg.progress and not quiet else None

    def log(line: str) -> None:
        if bar is not None:
            bar.write(line)
        elif not quiet:
            print(line, file=sys.stderr, flush=True)

    log(f"{started} on {device}: obs {obs_dim}, actions {n_actions}, critic input {model.critic_dim or obs_dim}, "
        f"{sum(p.numel() for p in model.parameters()):,} parameters, gradient products in "
        f"{str(grad_dtype).removeprefix('torch.')} (grad_precision {cfg.grad_precision})")
    if cfg.max_minutes and resume:
        log(f"time cap: {cfg.max_minutes:g} min for the whole run, {state['wall_seconds'] / 60:.1f} of them spent")

    def run_eval() -> dict:
        res = {"iteration": state["iteration"], "decisions": state["decisions"]}
        res.update(evaluate_field(model, cfg, cfg.eval_deals, cfg.eval_seed))
        for opp in cfg.eval_opponents:
            writer.add_scalar(f"eval/{opp}", res[opp]["mean"], state["decisions"])
        return res

    def book_eval(ev: dict) -> None:
        """best.pt when the evaluation is the best so far; the model alone when it is a playoff candidate."""
        if new_best(state, ev, cfg):
            save_checkpoint(best_ckpt, model, optimizer, cfg, state, rng, collector.pool, gens=gens, ahead=ahead_from)
        path = keep_candidate(state, ev, cfg, out_dir)
        if path is not None:
            save_checkpoint(path, model, None, cfg, state, rng, [], full=False)

    def start_rollout(net: ActorCritic, number: int) -> dict:
        """What starts rollout ``number`` (1, 2, ...), played by ``net``: every ``pool_every`` rollouts the
        network that plays it joins the snapshot pool first. Returns how it started, for :func:`save_checkpoint`."""
        if number > 1 and (number - 1) % cfg.pool_every == 0:
            collector.pool.append(copy.deepcopy(net.actor).eval())
            collector.pool = collector.pool[-cfg.pool_size:]
        return {"number": number, "rng": rng_state(rng, gens),
                "weights": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}}

    def bc_progress(what: str, done: int, total: int) -> None:
        if bar is not None:
            if done == total or done % max(1, total // 100) == 0:
                bar.set_phase(f"behaviour cloning: {what} {done}/{total}")
        elif done == total or done % max(1, total // 10) == 0:
            log(f"behaviour cloning: {what} {done}/{total} ({time.time() - session_start:.0f}s)")

    stop_reason = "total_decisions"
    phase = "ppo"  # what a Ctrl-C interrupts
    rollback = None  # an interrupted iteration's starting point
    try:
        # ------------------------------------------------------------------------------ warm start
        if not resume:
            writer.add_text("config", "```\n" + yaml.safe_dump(dataclasses.asdict(cfg), sort_keys=False) + "\n```")
            if cfg.bc_steps > 0 and not cfg.init_checkpoint:
                phase, state["bc"] = "behaviour cloning", {"interrupted": True}  # what last.pt says on Ctrl-C
                state["bc"] = behaviour_clone(model, cfg, device, rng, bc_progress)
                phase = "ppo"
                acc = state["bc"]["held_out_accuracy"]
                kept = f" (kept step {state['bc']['kept_step']})" if "kept_step" in state["bc"] else ""
                log(f"behaviour cloning: {state['bc']['decisions']} heuristic decisions, {cfg.bc_steps} steps{kept}, "
                    f"held-out accuracy " + " ".join(f"{k} {v:.3f}" for k, v in acc.items())
                    + f", {state['bc']['seconds']:.0f}s")

        run_clock.start_rate(state["decisions"])
        while state["decisions"] < cfg.total_decisions:
            if run_clock.out_of_time():
                stop_reason = "max_minutes"
                break
            # Ctrl-C before this iteration is booked rolls back to here, so that last.pt resumes exactly.
            rollback = {"model": copy.deepcopy(model.state_dict()), "optimizer": copy.deepcopy(optimizer.state_dict()),
                        "rng": rng_state(rng, gens), "pool": list(collector.pool), "ahead": ahead,
                        "ahead_from": ahead_from}
            # Schedules: linear in the progress towards total_decisions (not the time cap: a seed's run must not
            # depend on the machine's speed).
            progress = state["decisions"] / cfg.total_decisions
            lr = linear(cfg.lr, cfg.lr_end, progress)
            ent_coef = linear(cfg.ent_coef, cfg.ent_coef_end, progress)
            for g in optimizer.param_groups:
                g["lr"] = lr

            # ---------------------------------------------------------------- collect (unless collected ahead)
            if ahead is None:
                model.eval()
                start_rollout(model, state["iteration"] + 1)
                ahead = timed(lambda: collector.collect(model, progress))
            batch, cstats, t_collect = ahead
            ahead = ahead_from = None
            n = len(batch["act"])

            # ---------------------------------------------------------------- update
            t1 = time.time()
            # the first critic_warmup updates train the critic alone: the policy waits for advantages worth following
            policy = state["iteration"] >= cfg.critic_warmup
            exit_figures = expert.refresh(model) if expert is not None else {}
            extra = expert.loss() if expert is not None else None
            if overlap:
                # The next rollout, played by the weights before this update, is collected while it runs (on the
                # last iteration too: a run extended with --resume then goes on exactly as one that ran longer).
                behaviour.load_state_dict(model.state_dict())
                next_progress = (state["decisions"] + n) / cfg.total_decisions
                ahead_from = start_rollout(behaviour, state["iteration"] + 2)
                losses, ahead = run_beside(
                    lambda: ppo_update(model, optimizer, batch, ppo_settings, ent_coef, update_gen, extra, policy),
                    lambda: timed(lambda: collector.collect(behaviour, next_progress)))
                t_collect_ahead = ahead[2]
            else:
                losses = ppo_update(model, optimizer, batch, ppo_settings, ent_coef, update_gen, extra, policy)
                t_collect_ahead = 0.0
            t_update = time.time() - t1
            # an iteration's wall time: its collection (none when collected ahead) and the update (beside the
            # next collection when ahead)
            t_iter = t_update + (0.0 if rollback["ahead"] is not None else t_collect)

            # ---------------------------------------------------------------- bookkeeping
            state["iteration"] += 1
            state["decisions"] += n
            state["wall_seconds"] = run_clock.seconds()
            it, dec = state["iteration"], state["decisions"]
            rollback = None  # the iteration is booked

            scalars = iteration_scalars(batch, cstats, losses, lr=lr, ent_coef=ent_coef, mix=mix_at(cfg, progress),
                                        seconds=(t_collect, t_update, t_iter, t_collect_ahead),
                                        update_epochs=cfg.update_epochs, pool_size=len(collector.pool))
            scalars.update(exit_figures)
            for k, v in scalars.items():
                writer.add_scalar(k, v, dec)
            rec = {"iteration": it, "decisions": dec, "wall_seconds": state["wall_seconds"],
                   **{k.split("/")[1]: v for k, v in scalars.items() if k.startswith(("losses", "train", "perf", "exit"))}}
            if "ray" in cstats:  # where the rollout came from (rook_env.training.ray_collection)
                rec["rollout"] = cstats["ray"]
            state["history"].append(rec)
            if cfg.eval_every and it % cfg.eval_every == 0:
                rec["eval"] = run_eval()
                book_eval(rec["eval"])
                if bar is None:
                    log(f"it {it} dec {dec:,}: " + ", ".join(f"vs {o} {rec['eval'][o]['mean']:+.1f}"
                                                             for o in cfg.eval_opponents))
            if it % cfg.checkpoint_every == 0:
                save_checkpoint(last_ckpt, model, optimizer, cfg, state, rng, collector.pool, gens=gens,
                                ahead=ahead_from)
            if bar is not None:
                bar.update(dec, progress_figures(rec, state["history"]))

        if cfg.ray.collectors:  # no more rollouts: the cores go to the evaluation
            collector.close()
        if not state["history"] or "eval" not in state["history"][-1]:  # evaluate the final policy too
            ev = run_eval()
            if state["history"]:
                state["history"][-1]["eval"] = ev
            book_eval(ev)
    except KeyboardInterrupt:
        stop_reason = "interrupted"
        if rollback is not None:  # the iteration in progress is dropped
            model.load_state_dict(rollback["model"])
            optimizer.load_state_dict(rollback["optimizer"])
            set_rng_state(rng, rollback["rng"], gens)
            collector.pool, ahead_from = rollback["pool"], rollback["ahead_from"]
    except Exception:
        # A crash: leave an agent to evaluate (the best checkpoint's model), then fail loudly.
        if bar is not None:
            bar.close()
        if os.path.isfile(best_ckpt):
            agent_from_best(best_ckpt, agent_path, cfg, state)
            print(f"\ntraining failed: {agent_path} holds the best checkpoint's model "
                  f"(iteration {state['best']['iteration']}); last.pt the last saved iteration", file=sys.stderr)
        raise
    finally:
        if expert is not None:
            expert.close()
        if cfg.ray.collectors:
            collector.close()
            log("ray: " + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in collector.ledger.items()))
    if bar is not None:
        bar.close()
    state["wall_seconds"] = run_clock.seconds()

    if stop_reason == "interrupted":
        save_checkpoint(last_ckpt, model, optimizer, cfg, state, rng, collector.pool, gens=gens, ahead=ahead_from)
        writer.close()
        paths = {"last": last_ckpt}
        if os.path.isfile(best_ckpt):
            agent_from_best(best_ckpt, agent_path, cfg, state)
            paths.update(best=best_ckpt, agent=agent_path)
        summary = {"name": cfg.name, "seed": cfg.seed, "stop_reason": stop_reason, "iterations": state["iteration"],
                   "decisions": state["decisions"], "wall_seconds": round(state["wall_seconds"], 1),
                   "interrupted_during": phase, "best": state["best"], "paths": paths,
                   **({"ray": collector.report()} if cfg.ray.collectors else {})}
        if not quiet:
            print("\n" + interruption_note(summary, cfg.eval_every), file=sys.stderr)
        return summary

    # -------------------------------------------------------------------- the end
    save_checkpoint(last_ckpt, model, optimizer, cfg, state, rng, collector.pool, gens=gens, ahead=ahead_from)
    # The shipped form: the best model only (the playoff's winner where there is a playoff).
    best = load_checkpoint(best_ckpt)
    best_model = model_from_checkpoint(best)
    playoff, winner = run_playoff(cfg, state["candidates"], log)
    if winner is not None:
        best, best_model = winner
    save_agent(agent_path, best_model, cfg, state, best)
    final = evaluate_field(best_model, cfg, cfg.final_eval_deals, cfg.final_eval_seed) if cfg.final_eval_deals else {}
    writer.close()
    curve = os.path.join(out_dir, "curve.png")
    plot_curve(state["history"], curve, title=f"{cfg.name} (seed {cfg.seed})", ylabel=game.eval_unit)
    summary = {
        "name": cfg.name, "seed": cfg.seed, "stop_reason": stop_reason, "iterations": state["iteration"],
        "decisions": state["decisions"], "wall_seconds": round(state["wall_seconds"], 1),
        "device": str(device), "machine": machine_info(), "bc": state["bc"], "best": state["best"],
        "final_eval": final, "playoff": playoff, **({"ray": collector.report()} if cfg.ray.collectors else {}),
        "paths": {"last": last_ckpt, "best": best_ckpt, "agent": agent_path, "curve": curve},
        "config": dataclasses.asdict(cfg),
    }
    with open(os.path.join(out_dir, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    if not quiet:
        print_summary(summary)
    return summary


def agent_from_best(best_ckpt: str, agent_path: str, cfg: Config, state: dict) -> None:
    """``agent.pt`` from ``best.pt`` for a run that did not reach its end (Ctrl-C, a crash): its best model so far."""
    best = load_checkpoint(best_ckpt)
    save_agent(agent_path, model_from_checkpoint(best, best_ckpt), cfg, state, best)
