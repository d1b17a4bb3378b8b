"""Serve the app over HTTP: one process, or several sharing the port (PostgreSQL only).

Several processes use the second core that one Python process cannot: each forks from the
launcher after the run is set up, opens its own database connections and accepts on the same
port (SO_REUSEPORT); the launcher keeps the monitor and stops them when it stops.
"""

from __future__ import annotations

import os
import signal
import threading

from cheroot.wsgi import Server as WSGIServer

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.server.app import create_app

# Requests hold the GIL most of the time and SQLite takes one writer: a few threads per process
# queue better than many (measured with bench/worker_api_load.py).
THREADS_PER_PROCESS = 4
# Idle keep-alive connections wait in a selector, not in a thread; keep many (cheroot keeps 10).
KEEP_ALIVE_CONNECTIONS = 4096


def _server(served: ServedTask, host: str, port: int, shared_port: bool) -> WSGIServer:
    server = WSGIServer((host, port), create_app(served), numthreads=THREADS_PER_PROCESS,
                        request_queue_size=2048, timeout=60, reuse_port=shared_port)
    server.keep_alive_conn_limit = KEEP_ALIVE_CONNECTIONS
    server.prepare()
    return server


def _serve_child(served: ServedTask, host: str, port: int, parent: int) -> None:
    """Body of a forked server process; it ends when told to or when the launcher is gone."""
    served.db.engine.dispose(close=False)  # the launcher's connections are not ours to use
    server = _server(served, host, port, shared_port=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the launcher, which stops us
    threading.Thread(target=server.serve, daemon=True).start()
    while not stop.wait(1.0) and os.getppid() == parent:
        pass
    server.stop()
    os._exit(0)


class HttpService:
    """The serving processes of one run."""

    def __init__(self, served: ServedTask, host: str, port: int, processes: int = 1):
        shared = processes > 1
        served.db.engine.dispose()  # no open connection may cross a fork
        self.children: list[int] = []
        for _ in range(processes - 1):
            pid = os.fork()
            if pid == 0:
                _serve_child(served, host, port, os.getppid())
            self.children.append(pid)
        self.server = _server(served, host, port, shared)
        self.thread = threading.Thread(target=self.server.serve, name="http", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.stop()
        for pid in self.children:
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
