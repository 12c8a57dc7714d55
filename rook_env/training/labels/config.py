"""The label rounds' config: :class:`RoundsConfig` (the ``rounds`` section of a ``train.py`` config with
``algorithm: label_rounds``, and the options of ``rook-train rounds``), its checks, and the command line's
``KEY=VALUE`` words of its mappings (:func:`parse_shares`, :func:`parse_opponents`). :func:`phase_probs` turns a
label share and per-phase shares into each phase's chance of a label.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from rook_env.games.partnership.rules import PHASE_NAMES as PARTNERSHIP_PHASES

__all__ = ["RANDOM_NETWORK", "SEED_STRIDE", "RoundsConfig", "parse_opponents", "parse_pairs", "parse_shares",
           "phase_probs"]


def phase_probs(label_prob: float, phase_label_prob: dict[str, float] | None = None, prefix: str = "",
                names: Sequence[str] | None = None) -> list[float]:
    """The chance that a decision with a choice is labelled, per phase id of the game whose phase ``names`` these
    are (None: the partnership game's, ``rook_env.games.partnership.rules.PHASE_NAMES``): ``label_prob``, or
    ``phase_label_prob[name]`` for the phases it names; a ValueError names a bad one (after ``prefix``, "rounds."
    in a train.py config)."""
    names = PARTNERSHIP_PHASES if names is None else names

    if not 0.0 < label_prob <= 1.0:
        raise ValueError(f"{prefix}label_prob must be in (0, 1], got {label_prob!r}")
    probs = [float(label_prob)] * len(names)
    for name, share in (phase_label_prob or {}).items():
        if name not in names:
            raise ValueError(f"{prefix}phase_label_prob: unknown phase {name!r}; the phases are {', '.join(names)}")
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{prefix}phase_label_prob.{name} must be in [0, 1], got {share!r}")
        probs[list(names).index(name)] = float(share)
    return probs


def parse_pairs(items: Sequence[str], value: type, field_name: str, form: str) -> dict:
    """A command line's KEY=VALUE words as a mapping, each value read by ``value``; a word without a key or whose
    value does not read is named, with ``form`` (e.g. "PHASE=SHARE (e.g. play=0.45)"). The key is what comes before
    the last "=", so it may hold "=" itself (an agent spec's options)."""
    pairs = {}
    for item in items:
        key, _, text = item.rpartition("=")
        try:
            if not key:
                raise ValueError
            pairs[key] = value(text)
        except ValueError:
            raise ValueError(f"{field_name}: give {form}, got {item!r}") from None
    return pairs


def parse_shares(items: Sequence[str]) -> dict[str, float]:
    """``["bid=0.15", "play=0.45"]`` (``--phase-label-prob``) as ``{"bid": 0.15, "play": 0.45}``."""
    return parse_pairs(items, float, "phase_label_prob", "PHASE=SHARE (e.g. play=0.45)")


def parse_opponents(items: Sequence[str]) -> dict[str, int]:
    """``["ppo:past.pt=10240"]`` (``--opponents``) as ``{"ppo:past.pt": 10240}``."""
    return parse_pairs(items, int, "opponents", "SPEC=DEALS (e.g. ppo:past.pt=10240)")


SEED_STRIDE = 1_000_000  # seeds between the label sets of a round: a set's shards must fit in it
RANDOM_NETWORK = "random"  # RoundsConfig.network: round 1's base is a freshly initialised network (from scratch)


@dataclass
class RoundsConfig:
    """Rounds of counterfactual labels (:mod:`rook_env.training.labels.rounds`): the ``rounds`` section of a config
    with ``algorithm: label_rounds``, and the options of ``rook-train rounds``."""

    # the partnership checkpoint of round 1's base, or "random": a network of train.py's default shape initialised
    # from ``seed`` (written to <out>/round_0/network.pt), the loop from scratch
    network: str = "rook_env/agents/checkpoints/ppo_default.pt"
    out: str = ""  # the folder of the rounds; "" in a train.py config: the run's folder, runs/<name>/
    rounds: int = 1
    # A time budget: a round starts only while the minutes of the rounds so far (labels, fits, selection, as
    # rounds.json records them) plus the last round's minutes fit in it, so the loop stops near the budget whatever
    # the machine's speed; ``rounds`` stays the most it runs. 0: no budget (``rounds`` rounds)
    max_minutes: float = 0.0
    self_hands: int = 111_616  # deals labelled in self-play per round
    heuristic_hands: int = 136_704  # deals labelled against the heuristic per round
    # More label sets per round, the other team played by an agent of the field: {agent spec: deals}, e.g.
    # {"ppo:networks/ppo_v5.pt": 10240} (a past network, a best response). Labels against a field
    # hold the network where a best response found gains; {}: none
    opponents: dict[str, int] = field(default_factory=dict)
    seed: int = 95_000_000  # round 1's first self-play shard (rook_env.training.labels.rounds)
    shard_hands: int = 256
    label_prob: float = 0.25
    # other label shares for the phases named (rook_env.games.partnership.rules.PHASE_NAMES), e.g. {bid: 0.15,
    # play: 0.45}: a bid's or a discard's branches play the whole hand out, a card's the rest of it
    phase_label_prob: dict[str, float] = field(default_factory=dict)
    tables: int = 2048
    processes: int = 2
    margin: float = 10.0  # points, trained in by the fit (rook_env.training.labels.fit)
    lr: float = 1e-4
    epochs: int = 5
    # Rounds of labels each fit reads: this round's and the replay - 1 rounds before it (1: this round's only). Older
    # labels value the actions under an older network's play-out: more deals per fit for the price of some
    # staleness, so that one noisy round does not undo what the rounds before it taught.
    replay: int = 1
    threads: int = 2
    # Selection: every round's network plays select_deals duplicate deals (seed select_seed, apart from every held-out
    # seed) against the heuristic and agent.pt is the best of them; 0: agent.pt is the last round's network
    select_deals: int = 0
    select_seed: int = 1000
    # The opponents of the selection and of the held-out matches at the end, each a duplicate match on the same deals:
    # "heuristic" or agent specs the batched engine plays (a network: "ppo:<path>", a path ending in .pt, "ppo").
    # A round's selection score is the mean over them, so that no one opponent's style picks the network
    # (rook_env.evaluation.field says why)
    select_field: list[str] = field(default_factory=lambda: ["heuristic"])
    # With selection: the mean of the weights of the last ``average`` rounds' networks (one lineage, each round a
    # fine-tune of the one before) is a candidate too, scored on the same deals (<out>/average.pt); 0: none
    average: int = 0
    # At the end of a train.py run, agent.pt plays final_eval_deals held-out duplicate deals (from final_eval_seed,
    # apart from the label and selection seeds) against the heuristic and against the network round 1 started from;
    # 0: no match (the summary gives the fit's validation figures only)
    final_eval_deals: int = 500
    final_eval_seed: int = 50_000_000
    # label-worker actors on a Ray cluster instead of the processes (docs/cluster.md: the same shards); 0: processes
    workers: int = 0
    ray_address: str = ""  # with workers: the cluster ("auto", HOST:PORT; "": a private local Ray instance)

    def check(self, prefix: str = "") -> RoundsConfig:
        """Raise ValueError naming the first field (after ``prefix``, "rounds." in a train.py config) out of range."""
        def fail(name: str, why: str) -> None:
            raise ValueError(f"{prefix}{name} {why}, got {getattr(self, name)!r}")

        for name in ("rounds", "shard_hands", "tables", "processes", "epochs", "replay", "threads"):
            if getattr(self, name) < 1:
                fail(name, "must be >= 1")
        for name in ("self_hands", "heuristic_hands", "seed", "workers", "select_deals", "select_seed",
                     "final_eval_deals", "final_eval_seed"):
            if getattr(self, name) < 0:
                fail(name, "must be >= 0")
        if self.average == 1 or self.average < 0:
            fail("average", "must be 0 (none) or at least 2 rounds")
        if not self.select_field or any(not isinstance(s, str) or not s.strip() for s in self.select_field):
            fail("select_field", "must name at least one opponent, each an agent spec")
        if len(set(self.select_field)) != len(self.select_field):
            fail("select_field", "names an opponent twice")
        if self.average and not self.select_deals:
            fail("average", "is a candidate of the selection: give select_deals > 0 too")
        for spec, hands in self.opponents.items():
            if spec in ("self", "heuristic"):
                raise ValueError(f"{prefix}opponents: {spec!r} has its own field ({spec}_hands), got it in opponents")
            if isinstance(hands, bool) or not isinstance(hands, int) or hands < 0:
                raise ValueError(f"{prefix}opponents: the deals against {spec!r} must be an integer >= 0, "
                                 f"got {hands!r}")
        if self.self_hands + self.heuristic_hands + sum(self.opponents.values()) < 2:
            fail("self_hands", "+ heuristic_hands + the opponents' deals must be at least 2 (the fit validates on "
                 "held-out deals)")
        shards = -(-max(self.self_hands, self.heuristic_hands, *self.opponents.values()) // self.shard_hands)
        if shards > SEED_STRIDE:
            fail("shard_hands", f"is too small: {shards} shards per label set would overlap the next set's seeds "
                 f"(at most {SEED_STRIDE})")
        if not 0.0 < self.label_prob <= 1.0:
            fail("label_prob", "must be in (0, 1]")
        phase_probs(self.label_prob, self.phase_label_prob, prefix)
        if not self.lr > 0:
            fail("lr", "must be > 0")
        if not self.max_minutes >= 0:
            fail("max_minutes", "must be >= 0 (0: no time budget)")
        if self.margin < 0:
            fail("margin", "must be >= 0")
        if self.network != RANDOM_NETWORK and not os.path.isfile(self.network):
            fail("network", f"must be a checkpoint file that exists or {RANDOM_NETWORK!r} (from scratch)")
        return self

