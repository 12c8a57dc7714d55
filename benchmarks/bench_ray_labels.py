"""Search labels on Ray with one and with two label workers (rook_env.training.labels.ray_workers; docs/cluster.md;
figures in docs/results.md, Scale-out).

    PYTHONPATH=$PWD python benchmarks/bench_ray_labels.py                       # ppo base, 24 worlds, 3 repeats
    PYTHONPATH=$PWD python benchmarks/bench_ray_labels.py --base heuristic --hands-per-worker 200 --shard-hands 25

Needs Ray. It starts a two-node Ray cluster on this machine (:class:`rook_env.training.ray_cluster.LocalCluster`,
one CPU per node, a token of its own) and, in each repeat, interleaved, labels ``hands-per-worker`` hands with one
worker and twice as many with two (one per node), each run into a fresh folder, workers started per run as the
CLI starts them. Figures per run: labels (searched decisions) per second of wall time, from the first worker's
start to the last shard written, and per second of a worker's own labelling time; the median [min, max] over the
repeats and the ratio two workers / one per repeat.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

from rook_env.training.ray_cluster import LocalCluster
from rook_env.training.ray_collection import NAMESPACE
from rook_env.training.labels.ray_workers import label_on_ray
from rook_env.training.labels.search import label_hands


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):,.1f} [{min(xs):,.1f}, {max(xs):,.1f}]"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="ppo")
    p.add_argument("--samples", type=int, default=24)
    p.add_argument("--hands-per-worker", type=int, default=64)
    p.add_argument("--shard-hands", type=int, default=8)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    import ray

    rows: dict[str, list[float]] = {"1 worker": [], "2 workers": [], "1 worker, labelling time": [],
                                    "2 workers, labelling time (each)": [], "2 workers / 1 (wall)": []}
    with LocalCluster(nodes=2, cpus=1) as cluster:
        ray.init(address=cluster.address, namespace=NAMESPACE, log_to_driver=False, _node_ip_address="127.0.0.1")
        try:
            for r in range(a.repeats):
                rate = {}
                for workers in (1, 2):
                    with tempfile.TemporaryDirectory() as out:
                        led = label_on_ray(label_hands, out, a.hands_per_worker * workers, seed=1_000 + r * 100,
                                           base=a.base, samples=a.samples, shard_hands=a.shard_hands, workers=workers,
                                           address=cluster.address, log=lambda line: None)
                    rate[workers] = led["searched"] / led["seconds"]
                    name = "1 worker" if workers == 1 else "2 workers"
                    rows[name].append(rate[workers])
                    rows[name + (", labelling time" if workers == 1 else ", labelling time (each)")].append(
                        led["searched"] / led["worker_seconds"])
                    print(f"repeat {r}: {workers} worker(s) on {len(led['nodes'])} node(s): {led['searched']} labels "
                          f"({led['decisions']} decisions) in {led['seconds']:.1f}s", flush=True)
                rows["2 workers / 1 (wall)"].append(rate[2] / rate[1])
        finally:
            ray.shutdown()
    print(f"\nbase {a.base}, {a.samples} worlds, {a.hands_per_worker} hands per worker, shards of {a.shard_hands}; "
          f"{a.repeats} repeats: median [min, max]")
    print("| measured | labels/s |\n|---|---|")
    for name, xs in rows.items():
        print(f"| {name} | {spread(xs)} |")


if __name__ == "__main__":
    main()
