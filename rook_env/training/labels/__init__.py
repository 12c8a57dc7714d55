"""Training by labels: a base policy's decisions labelled with what each action is worth, and networks fitted to
the labels. Each module holds one part; importing the package imports none of them.

- :mod:`.config`: :class:`~.config.RoundsConfig` (the ``rounds`` section of a ``train.py`` config with
  ``algorithm: label_rounds``), its checks, the per-phase label shares;
- :mod:`.shards`: how a labelling run is cut into shards, a shard written atomically, label processes that stop
  cleanly;
- :mod:`.ray_workers`: the same shards labelled by workers on a Ray cluster;
- :mod:`.counterfactual`: counterfactual labels for both games (what each legal action is worth when the base
  policy plays on: the partnership game's network on the batched engine, call-your-partner Rook's heuristic);
- :mod:`.fit`: the fit of a network to counterfactual labels (a network fine-tuned, or a residual policy over the
  heuristic);
- :mod:`.rounds`: rounds of labels and fits, each round's network the next one's base (the default run);
- :mod:`.report`: a run of rounds' progress line with its ETA, its log file, its summary;
- :mod:`.search`, :mod:`.online`: search's labels for expert iteration (:mod:`rook_env.training.expert`), offline
  in shards and online from the network's own positions;
- :mod:`.commands`: the tools as subcommands of ``rook-train`` (``labels``, ``fit``, ``rounds``,
  ``search-labels``) and ``train.py``'s run of a config's rounds.
"""
