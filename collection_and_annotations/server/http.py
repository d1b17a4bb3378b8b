"""Serve the app over HTTP: uvicorn in one process, or gunicorn's arbiter over several uvicorn
worker processes sharing one port (PostgreSQL only).

One process serves in a thread of the launcher. Several: the launcher binds the port, then
forks gunicorn's arbiter, which forks the server processes from the app it was handed
(preloaded: the task is read once) and replaces any that dies. Neither the arbiter nor a
server process outlives its parent (`die_with_parent`), even after a kill -9. The launcher
keeps the monitor and stops them when it stops.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import uvicorn
from gunicorn.app.base import BaseApplication
from starlette.applications import Starlette
from uvicorn_worker import UvicornWorker

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.security import security_headers
from collection_and_annotations.server.web import DATABASE_THREADS

# Open connections per process past which requests get 503: well under the file limit.
MAX_CONNECTIONS = 4096
KEEP_ALIVE_SECONDS = 60
BACKLOG = 2048
STOP_SECONDS = 15
# Requests still running when the server stops get this long (an open chat stream ends then).
GRACE_SECONDS = 3
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class HostNames:
    """conf mephisto.architect: more names the server answers to, and the reverse proxies
    whose forwarding headers are believed."""

    allowed: list[str] | None = None
    proxies: list[str] | None = None

    @classmethod
    def of(cls, architect: Any) -> HostNames:
        """From the conf's `mephisto.architect`."""
        return cls(architect.allowed_hosts, architect.trusted_proxies)


def raise_file_limit() -> int:
    """Raise the soft limit on open files to the hard one; returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def listening_socket(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.setblocking(False)
    return sock


def uvicorn_options(platform_origins: Sequence[str] = (),
                    trusted_proxies: Iterable[str] | None = None,
                    max_connections: int = MAX_CONNECTIONS) -> dict[str, Any]:
    """uvicorn's settings for each server process. The security headers go on every answer,
    uvicorn's own too (400 for a request it cannot parse, 503 past `max_connections`).
    `X-Forwarded-For`/`-Proto` are believed only from `trusted_proxies` (addresses or
    networks); without any, from nobody: uvicorn would otherwise believe loopback."""
    proxies = list(trusted_proxies or [])
    return {
        "http": "httptools", "loop": "uvloop", "lifespan": "on", "interface": "asgi3",
        "access_log": False, "log_config": None, "log_level": "warning",
        "server_header": False, "backlog": BACKLOG, "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "limit_concurrency": max_connections, "timeout_graceful_shutdown": GRACE_SECONDS,
        "proxy_headers": bool(proxies), "forwarded_allow_ips": proxies,
        "headers": list(security_headers(platform_origins).items()),
    }


def die_with_parent(parent: int) -> None:
    """Have the kernel send SIGTERM when the parent dies; exit now if it already has."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(0)


class _Arbiter(BaseApplication):
    """gunicorn's arbiter over `processes` uvicorn workers of the preloaded `app`."""

    def __init__(self, app: Starlette, sock: socket.socket, processes: int,
                 options: dict[str, Any]):
        self.app = app
        worker = type("ServerProcess", (UvicornWorker,), {"CONFIG_KWARGS": options})
        self.settings = {
            "bind": [f"fd://{sock.fileno()}"], "workers": processes, "worker_class": worker,
            "preload_app": True, "graceful_timeout": GRACE_SECONDS + 2,
            "loglevel": "warning", "accesslog": None, "errorlog": "-",
            "control_socket_disable": True, "post_fork": _server_process_forked,
        }
        super().__init__()

    def load_config(self) -> None:
        for name, value in self.settings.items():
            self.cfg.set(name, value)

    def load(self) -> Starlette:
        return self.app


def _server_process_forked(arbiter: Any, worker: Any) -> None:
    """gunicorn's post_fork hook, in the new server process."""
    die_with_parent(worker.ppid)
    if worker.age > arbiter.num_workers:
        print(f"server process {worker.pid} started in place of one that ended",
              file=sys.stderr, flush=True)


class HttpService:
    """The serving processes of one run."""

    def __init__(self, served: ServedTask, host: str, port: int, processes: int = 1,
                 hosts: HostNames | None = None, relay_chat: bool = False,
                 threads: int = DATABASE_THREADS):
        hosts = hosts or HostNames()
        options = uvicorn_options(served.provider.platform_origins,
                                  hosts.proxies, min(MAX_CONNECTIONS, raise_file_limit() - 64))
        app = create_app(served, allowed_hosts=hosts.allowed, relay_chat=relay_chat,
                         threads=threads)
        sock = listening_socket(host, port)
        self.port: int = sock.getsockname()[1]  # the port asked for, or the one given for 0
        self.arbiter: int | None = None
        self.server: uvicorn.Server | None = None
        self.app = app
        if processes > 1:
            served.db.dispose()  # no open connection may cross a fork
            launcher = os.getpid()
            sock.set_inheritable(True)
            pid = os.fork()
            if pid == 0:
                _run_arbiter(_Arbiter(app, sock, processes, options), launcher)
            self.arbiter = pid
            sock.close()
        else:
            self.server = uvicorn.Server(uvicorn.Config(app, **options))
            self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                           name="http", daemon=True)
            self.thread.start()
            deadline = time.monotonic() + STOP_SECONDS
            while not self.server.started:  # serving before the links are printed
                if not self.thread.is_alive() or time.monotonic() > deadline:
                    raise RuntimeError("the HTTP server did not start (see the errors above)")
                time.sleep(0.01)

    def stop(self) -> None:
        if self.server is not None:
            chat = self.app.state.chat
            if chat is not None:
                chat.stop_streams()
            self.server.should_exit = True
            self.thread.join(STOP_SECONDS)
        if self.arbiter is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.arbiter, signal.SIGTERM)
            deadline = time.monotonic() + STOP_SECONDS
            while not os.waitpid(self.arbiter, os.WNOHANG)[0]:
                if time.monotonic() > deadline:  # its children die with it (PR_SET_PDEATHSIG)
                    os.kill(self.arbiter, signal.SIGKILL)
                    os.waitpid(self.arbiter, 0)
                    break
                time.sleep(0.05)


def _run_arbiter(arbiter: _Arbiter, launcher: int) -> None:
    """Body of the forked arbiter process: serve until SIGTERM or the launcher's death. Its
    own process group: a Ctrl-C in the terminal reaches the launcher, which stops it."""
    code = 1
    try:
        die_with_parent(launcher)
        os.setpgid(0, 0)
        arbiter.run()
        code = 0
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else 1
    finally:
        os._exit(code)
