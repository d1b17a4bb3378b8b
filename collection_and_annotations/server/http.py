"""Serve the app over HTTP: one process, or several sharing one port (PostgreSQL only).

An asyncio server (uvicorn with httptools, on uvloop) holds the connections and reads each
request whole before a thread of the Flask app sees it (asgi_front.py, deadline_protocol.py):
slow and idle clients cost a socket and a coroutine, never a thread.

Several processes use the cores that one Python process cannot: the launcher binds the port
once, then forks a supervisor that forks the server processes; they accept on the inherited
socket, each with its own database connections, and the supervisor replaces any that dies
(supervisor.py). The launcher keeps the monitor and stops them when it stops.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import uvicorn
from flask import Flask

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.asgi_front import ASGIApp, Front
from collection_and_annotations.server.deadline_protocol import DeadlineProtocol
from collection_and_annotations.server.greenlet_pool import GreenletPool
from collection_and_annotations.server.security import HostCheck
from collection_and_annotations.server.supervisor import Supervisor, die_with_parent
from collection_and_annotations.server.thread_pool import ThreadPool
from collection_and_annotations.server.wsgi_pool import CallPool, WsgiPool

# Requests hold the GIL most of the time and SQLite takes one writer: a few threads per process
# queue better than many (measured with bench/worker_api_load.py).
THREADS_PER_PROCESS = 4
# A worker's steps (claim, read, draft, submit, check) run in a pool of their own, so a slow
# requester request never holds them up (`worker_step_pool`). Measured with
# bench/worker_api_load.py:
# - SQLite: one thread. SQLite takes one writer at a time and answers in microseconds; more
#   threads traded the GIL at every call into it (one served a burst a quarter faster than 4).
# - PostgreSQL, one server process: greenlets of the event loop (greenlet_pool.py), which
#   overlap their round trips without queueing to win the GIL back after each (6-9% more
#   submissions/s than 4 threads, faster in 11 of 12 alternating runs). 16 or 32 slots were
#   no faster and cost PostgreSQL more CPU per request; each slot holds one connection.
# - PostgreSQL, several processes: 4 threads each. There the cores are busy anyway, and the
#   threads' system calls overlap where a greenlet pool's run one after the other (threads
#   were 6-10% faster).
WORKER_STEPS = ("/api/claim", "/api/units/")
WORKER_STEP_SLOTS = 8
# Open connections per process past which requests get 503: well under the file limit.
MAX_CONNECTIONS = 4096
KEEP_ALIVE_SECONDS = 60
BACKLOG = 2048
STOP_SECONDS = 15


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


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: the launcher and the supervisor decide when to
    stop, through `stop`."""

    @contextlib.contextmanager
    def capture_signals(self):  # type: ignore[no-untyped-def]
        yield

    def stop(self) -> None:
        """From any thread or a signal handler."""
        self.should_exit = True
        self.config.app.stop_native()


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


def uvicorn_server(flask_app: Flask, max_connections: int = MAX_CONNECTIONS,
                   native: Mapping[str, ASGIApp] | None = None,
                   trusted_proxies: Iterable[str] | None = None,
                   worker_steps: CallPool | None = None) -> _Server:
    """A server for `flask_app` behind the ASGI front (with `native` ASGI apps by path
    prefix), not yet listening. `X-Forwarded-For`/`-Proto` are believed only from
    `trusted_proxies` (addresses or networks); without any, from nobody: uvicorn would
    otherwise believe every local process. `worker_steps`: the pool of the worker's steps
    (default: threads of their own)."""
    proxies = list(trusted_proxies or [])
    wsgi = WsgiPool(flask_app, THREADS_PER_PROCESS, (WORKER_STEPS, worker_steps or ThreadPool(
        THREADS_PER_PROCESS, "worker-steps")))
    front = Front(wsgi, flask_app.config["MAX_CONTENT_LENGTH"], native)
    return _Server(uvicorn.Config(
        front, http=DeadlineProtocol, lifespan="on", interface="asgi3", access_log=False,
        log_config=None, log_level="warning", server_header=False, backlog=BACKLOG,
        timeout_keep_alive=KEEP_ALIVE_SECONDS, limit_concurrency=max_connections,
        timeout_graceful_shutdown=5, proxy_headers=bool(proxies), forwarded_allow_ips=proxies,
    ))


def worker_step_pool(served: ServedTask, processes: int) -> CallPool:
    """The pool of the worker's steps in each of `processes` server processes, as suits the
    database (see WORKER_STEPS)."""
    if served.db.engine.dialect.name != "postgresql":
        return ThreadPool(1, "worker-steps")
    if processes == 1:
        return GreenletPool(WORKER_STEP_SLOTS, "worker-steps")
    return ThreadPool(THREADS_PER_PROCESS, "worker-steps")


def native_routes(served: ServedTask, allowed_hosts: Iterable[str] | None,
                  processes: int) -> dict[str, ASGIApp]:
    """Routes that run in the event loop: live chat, for a task kind that chats with bots
    (several processes relay its events through PostgreSQL)."""
    if not served.chats:
        return {}
    from collection_and_annotations.server.chat.app import PREFIX, ChatApp

    return {PREFIX: ChatApp(served.db, served.secret, served.blueprint.rules,
                            HostCheck(served.provider.public_url, allowed_hosts),
                            served.blueprint.make_bots,
                            relay=processes > 1)}


def _serve_child(served: ServedTask, sock: socket.socket, max_connections: int,
                 hosts: HostNames, supervisor: int, processes: int) -> None:
    """Body of a forked server process: serve until SIGTERM or the supervisor's death."""
    die_with_parent(supervisor)
    served.db.engine.dispose(close=False)  # the launcher's connections are not ours to use
    server = uvicorn_server(create_app(served, allowed_hosts=hosts.allowed), max_connections,
                            native_routes(served, hosts.allowed, processes), hosts.proxies,
                            worker_step_pool(served, processes))
    signal.signal(signal.SIGTERM, lambda *_: server.stop())

    def watch_parent() -> None:  # where PR_SET_PDEATHSIG is missing
        while os.getppid() == supervisor:
            time.sleep(1.0)
        server.stop()

    threading.Thread(target=watch_parent, daemon=True).start()
    server.run(sockets=[sock])


class HttpService:
    """The serving processes of one run."""

    def __init__(self, served: ServedTask, host: str, port: int, processes: int = 1,
                 hosts: HostNames | None = None):
        hosts = hosts or HostNames()
        max_connections = min(MAX_CONNECTIONS, raise_file_limit() - 64)
        sock = listening_socket(host, port)
        self.supervisor: int | None = None
        self.server: _Server | None = None
        if processes > 1:
            served.db.engine.dispose()  # no open connection may cross a fork
            launcher = os.getpid()
            pid = os.fork()
            if pid == 0:
                Supervisor(lambda parent: _serve_child(served, sock, max_connections,
                                                       hosts, parent, processes),
                           processes, launcher).run()
            self.supervisor = pid
            sock.close()
        else:
            self.server = uvicorn_server(create_app(served, allowed_hosts=hosts.allowed),
                                         max_connections, native_routes(served, hosts.allowed, 1),
                                         hosts.proxies, worker_step_pool(served, 1))
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
            self.server.stop()
            self.thread.join(STOP_SECONDS)
        if self.supervisor is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.supervisor, signal.SIGTERM)
            deadline = time.monotonic() + STOP_SECONDS
            while not os.waitpid(self.supervisor, os.WNOHANG)[0]:
                if time.monotonic() > deadline:  # its children die with it (PR_SET_PDEATHSIG)
                    os.kill(self.supervisor, signal.SIGKILL)
                    os.waitpid(self.supervisor, 0)
                    break
                time.sleep(0.05)
