"""A real multi-node Ray cluster on one machine (:class:`LocalCluster`): a head node and worker nodes, each a
``ray start --block`` process with its own CPUs and a custom resource ``node_<i>``, on loopback addresses. The
cluster test (tests/test_ray_cluster.py) and benchmarks/bench_ray.py run on it; docs/cluster.md shows the same
commands for real machines.

Each node is stopped through its own ``ray start`` process (SIGTERM, then SIGKILL of its process group), never
with ``ray stop``, which would also stop any other Ray cluster running on the machine.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time


# The environment of the nodes, and of the drivers that join them (:meth:`LocalCluster.driver_env`). Ray 2.60 turns
# token authentication on for a process that finds ~/.ray/auth_token (written by any local ``ray.init()`` on the
# machine), so nodes and drivers started at different times would disagree; this test cluster on loopback addresses
# states the mode for all of them.
CLUSTER_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    """``nodes`` Ray nodes on this machine, ``cpus`` CPUs each; node i has the custom resource ``node_i`` (1), so
    that work can be pinned to a node. Use as a context manager; ``address`` is the head's ``HOST:PORT``."""

    def __init__(self, nodes: int = 2, cpus: float = 1, object_store_mb: int = 1000, start_timeout: float = 120) -> None:
        self.nodes, self.cpus, self.object_store_mb, self.start_timeout = nodes, cpus, object_store_mb, start_timeout
        self.procs: list[subprocess.Popen] = []
        self.logs: list[str] = []
        self.dir = tempfile.mkdtemp(prefix="rook-ray-")
        self.address = f"127.0.0.1:{free_port()}"

    def _start(self, i: int) -> None:
        ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
        cmd = [ray_bin, "start", "--block", "--node-ip-address=127.0.0.1", f"--num-cpus={self.cpus:g}",
               f'--resources={{"node_{i}": 1}}', "--disable-usage-stats",
               f"--object-store-memory={self.object_store_mb * 1_000_000}",
               f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
               f"--metrics-export-port={free_port()}", f"--runtime-env-agent-port={free_port()}"]
        if i == 0:
            cmd += ["--head", f"--port={self.address.rsplit(':', 1)[1]}", "--include-dashboard=false",
                    f"--ray-client-server-port={free_port()}", f"--temp-dir={self.dir}"]
        else:
            cmd += [f"--address={self.address}"]
        log = os.path.join(self.dir, f"node_{i}.log")
        self.logs.append(log)
        env = {**os.environ, **CLUSTER_ENV}
        with open(log, "wb") as fh:  # its own session: the node's processes are one process group, ours to stop
            self.procs.append(subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                               start_new_session=True))
        deadline = time.time() + self.start_timeout
        while b"Ray runtime started" not in open(log, "rb").read():
            if self.procs[-1].poll() is not None or time.time() > deadline:
                tail = open(log, "rb").read()[-3000:].decode(errors="replace")
                self.stop()
                raise RuntimeError(f"ray node {i} did not start ({' '.join(cmd)}):\n{tail}")
            time.sleep(0.5)

    def start(self, attempts: int = 3) -> LocalCluster:
        """Start the nodes; on a failure (a port taken meanwhile by another program) stop them and start again on
        new ports, ``attempts`` times in all."""
        for attempt in range(attempts):
            try:
                for i in range(self.nodes):
                    self._start(i)
                return self
            except RuntimeError:
                if attempt == attempts - 1:
                    raise
                self.logs = []
                self.address = f"127.0.0.1:{free_port()}"
        return self

    def stop(self) -> None:
        """Stop every node this object started (each ``ray start --block`` ends its node's processes on SIGTERM)."""
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            try:  # whatever of the node is left
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.procs = []

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
