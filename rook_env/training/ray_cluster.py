"""A real multi-node Ray cluster on one machine (:class:`LocalCluster`), and the rule by which rook_env's drivers
join a cluster in the right authentication mode (:func:`match_auth_mode`).

:class:`LocalCluster` starts a head node and worker nodes, each a ``ray start --block`` process with its own CPUs
and a custom resource ``node_<i>``. Its address is ``127.0.0.1:PORT``, but the cluster is not confined to the
loopback interface: Ray registers each node under the machine's own address (``--node-ip-address=127.0.0.1`` would
be replaced by it) and its servers (the GCS, the raylets, the object managers, the workers) listen on every
interface. So by default the cluster runs with token authentication and a token of its own (a file in its
temporary directory, never ``~/.ray``). The cluster test (tests/test_ray_cluster.py) and the benchmarks run on
it; docs/cluster.md gives the ``ray start`` commands for real machines.

Each node is stopped through its own ``ray start`` process (SIGTERM, then SIGKILL of its process group), never
with ``ray stop``, which stops every Ray process on the machine, other clusters' included.

**Authentication.** Ray (2.60) decides the mode per process: a new local ``ray.init()`` turns token
authentication on and writes ``~/.ray/auth_token``; ``ray start --head`` and ``ray.init(address="auto")`` turn it
on when they find a token; ``ray start --address=...`` and ``ray.init(address="HOST:PORT")`` do not. So after any
local ``ray.init()`` on a machine, a head started there requires tokens and a worker or driver started in the same
shell is refused. ``RAY_AUTH_MODE=token`` (with the token on every machine) or ``RAY_AUTH_MODE=disabled``, set for
every process, makes them agree. rook_env's drivers (:func:`rook_env.training.ray_collection.connect`) apply the
head's rule when ``RAY_AUTH_MODE`` is unset (:func:`match_auth_mode`).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time

# The environment of the nodes and of the drivers that join them, besides the authentication variables.
CLUSTER_ENV = {"RAY_USAGE_STATS_ENABLED": "0"}
AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def set_environ(values: dict[str, str | None]) -> dict[str, str | None]:
    """Set these variables in this process's environment (``None``: remove it), so that the processes it starts
    inherit them, and make an imported Ray read its settings again (Ray reads ``RAY_AUTH_MODE`` once, when it is
    imported). Returns the previous values, for restoring. Call it while this process is not connected to Ray."""
    previous = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    _reload_ray_config()
    return previous


def _reload_ray_config() -> None:
    if "ray._raylet" not in sys.modules or "ray" not in sys.modules:
        return  # Ray reads the environment when it is imported
    if sys.modules["ray"].is_initialized():
        return
    raylet = sys.modules["ray._raylet"]
    if hasattr(raylet, "Config"):
        raylet.Config.initialize("")
    if hasattr(raylet, "AuthenticationTokenLoader"):
        raylet.AuthenticationTokenLoader.instance().reset_cache()


def token_available() -> bool:
    """Whether this process would find a Ray authentication token: ``RAY_AUTH_TOKEN``, the file named by
    ``RAY_AUTH_TOKEN_PATH``, or ``~/.ray/auth_token``."""
    if os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
    try:
        with open(path) as fh:
            return bool(fh.read().strip())
    except OSError:
        return False


def match_auth_mode() -> str | None:
    """Before this process joins a running cluster as a driver: when ``RAY_AUTH_MODE`` is unset, set it to ``token``
    if a token is available (:func:`token_available`), the rule ``ray start --head`` applies on its machine (Ray
    applies it to ``ray.init(address="auto")`` but not to an explicit ``HOST:PORT``). Returns the mode now set
    (``None``: unset, Ray's default, no authentication). A driver in token mode also joins a cluster without
    authentication. An imported Ray reads the variables again (they may have changed since it was imported)."""
    mode = os.environ.get("RAY_AUTH_MODE")
    if mode is None and token_available():
        mode = "token"
    set_environ({} if mode is None else {"RAY_AUTH_MODE": mode})
    return mode


class LocalCluster:
    """``nodes`` Ray nodes on this machine, ``cpus`` CPUs each; node i has the custom resource ``node_i`` (1), so
    that work can be pinned to a node. Use as a context manager; ``address`` is the head's ``HOST:PORT``.

    ``own_token`` (the default): token authentication with a new token in the cluster's temporary directory, for
    the nodes and for this process: :meth:`start` sets ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN_PATH`` here
    (:meth:`driver_env`), so that ``ray.init(address=cluster.address)`` here and the processes started from here
    join it; :meth:`stop` restores them. ``own_token=False``: the nodes run in this process's environment as it
    is (``RAY_AUTH_MODE``, ``HOME``'s ``~/.ray/auth_token``), as ``ray start`` in a shell does.
    ``dashboard``: start the dashboard on the head (needed by ``ray list actors`` and the other state commands)."""

    def __init__(self, nodes: int = 2, cpus: float = 1, object_store_mb: int = 1000, start_timeout: float = 120,
                 own_token: bool = True, dashboard: bool = False) -> None:
        self.nodes, self.cpus, self.object_store_mb, self.start_timeout = nodes, cpus, object_store_mb, start_timeout
        self.own_token, self.dashboard = own_token, dashboard
        self.procs: list[subprocess.Popen] = []
        self.logs: list[str] = []
        self.dir = tempfile.mkdtemp(prefix="rook-ray-")
        self.address = f"127.0.0.1:{free_port()}"
        self.dashboard_address = f"127.0.0.1:{free_port()}" if dashboard else None
        self.token_path = os.path.join(self.dir, "auth_token") if own_token else None
        self._restore: dict[str, str | None] | None = None

    def driver_env(self) -> dict[str, str | None]:
        """The variables a process needs to join this cluster (``None``: must be unset)."""
        env: dict[str, str | None] = dict(CLUSTER_ENV)
        if self.own_token:
            env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": self.token_path, "RAY_AUTH_TOKEN": None})
        return env

    def _write_token(self) -> None:
        fd = os.open(self.token_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))

    def add_node(self, env: dict[str, str | None] | None = None) -> None:
        """Start the next node (the head first), with ``env`` on top of the cluster's environment; wait until it
        runs. RuntimeError with the end of its log if it does not start."""
        i = len(self.procs)
        ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
        cmd = [ray_bin, "start", "--block", f"--num-cpus={self.cpus:g}",
               f'--resources={{"node_{i}": 1}}', "--disable-usage-stats",
               f"--object-store-memory={self.object_store_mb * 1_000_000}",
               f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
               f"--metrics-export-port={free_port()}", f"--runtime-env-agent-port={free_port()}"]
        if i == 0:
            cmd += ["--head", f"--port={self.address.rsplit(':', 1)[1]}", f"--ray-client-server-port={free_port()}",
                    f"--temp-dir={self.dir}"]
            if self.dashboard:
                cmd += ["--include-dashboard=true", "--dashboard-host=127.0.0.1",
                        f"--dashboard-port={self.dashboard_address.rsplit(':', 1)[1]}"]
            else:
                cmd += ["--include-dashboard=false"]
        else:
            cmd += [f"--address={self.address}"]
        log = os.path.join(self.dir, f"node_{i}.log")
        self.logs.append(log)
        node_env = dict(os.environ)
        for k, v in {**self.driver_env(), **(env or {})}.items():
            if v is None:
                node_env.pop(k, None)
            else:
                node_env[k] = v
        with open(log, "wb") as fh:  # its own session: the node's processes are one process group, ours to stop
            self.procs.append(subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=node_env,
                                               start_new_session=True))
        deadline = time.time() + self.start_timeout
        while b"Ray runtime started" not in open(log, "rb").read():
            if self.procs[-1].poll() is not None or time.time() > deadline:
                tail = open(log, "rb").read()[-3000:].decode(errors="replace")
                raise RuntimeError(f"ray node {i} did not start ({' '.join(cmd)}):\n{tail}")
            time.sleep(0.5)

    def start(self, attempts: int = 3) -> LocalCluster:
        """Start the nodes; on a failure (a port taken meanwhile by another program) stop them and start again on
        new ports, ``attempts`` times in all."""
        if self.own_token and not os.path.exists(self.token_path):
            self._write_token()
        for attempt in range(attempts):
            try:
                for _ in range(self.nodes):
                    self.add_node()
                break
            except RuntimeError:
                self._stop_nodes()
                if attempt == attempts - 1:
                    raise
                self.logs = []
                self.address = f"127.0.0.1:{free_port()}"
                if self.dashboard:
                    self.dashboard_address = f"127.0.0.1:{free_port()}"
        if self.own_token and self._restore is None:
            self._restore = set_environ(self.driver_env())
        return self

    def _stop_nodes(self) -> None:
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

    def stop(self) -> None:
        """Stop every node this object started (each ``ray start --block`` ends its node's processes on SIGTERM),
        delete its token and restore the variables :meth:`start` set here (the logs stay in :attr:`dir`)."""
        self._stop_nodes()
        if self.own_token and os.path.exists(self.token_path):
            os.remove(self.token_path)
        if self._restore is not None:
            set_environ(self._restore)
            self._restore = None

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
