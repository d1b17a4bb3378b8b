"""Write small task folders (conf, data, units) for tests."""

from __future__ import annotations

import asyncio
import atexit
import functools
import gc
import io
import json
import queue
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import chdir, contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.testclient import TestClient

from collection_and_annotations import PACKAGE_DIR
from collection_and_annotations.engine.runs import end_run
from collection_and_annotations.server.http import (
    HostNames,
    HttpService,
    listening_socket,
    uvicorn_options,
)
from collection_and_annotations.storage.database import Database

REPO = PACKAGE_DIR.parent
BUCKETS = PACKAGE_DIR / "task_config" / "annotation_buckets.json"
# The tests speak plain HTTP to local servers: one TLS context for all their clients, with no
# certificates (httpx would otherwise read certifi's whole bundle for each client it makes).
PLAIN_HTTP_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


@functools.cache
def migrated_sqlite_template() -> Path:
    """An SQLite database migrated to the newest schema once a test process (removed when it
    exits): a copy of it is a migrated database for a small part of a migration's CPU
    (bench/RESULTS.md, "Test suite time")."""
    folder = Path(tempfile.mkdtemp(prefix="cep-migrated-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    db = Database(f"sqlite:///{folder / 'cep.sqlite3'}")
    db.migrate()
    db.dispose()
    return folder / "cep.sqlite3"


def migrated_sqlite(path: Path) -> str:
    """The URL of a database of the newest schema at `path`, a copy of the template."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(migrated_sqlite_template(), path)
    return f"sqlite:///{path}"


def launch_database(data_dir: Path) -> str:
    """The URL of the SQLite database a launch keeps under `data_dir`, made at the newest
    schema (a copy of the template) unless it is there: as on every start but the first."""
    path = data_dir / "cep.sqlite3"
    return f"sqlite:///{path}" if path.exists() else migrated_sqlite(path)


def run_coroutine(coroutine: Coroutine[Any, Any, Any], timeout: float = 30) -> Any:
    """`asyncio.run` in a thread of its own: the browser tests' sync Playwright keeps an event
    loop running in the main thread for the whole session."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result(timeout=timeout)


@contextmanager
def live_server(served: Any, hosts: HostNames | None = None) -> Iterator[str]:
    """A served task behind the whole HTTP stack the launcher runs (`server/http.py`,
    `HttpService`: the worker API, the requester API and, for chat tasks, the chat routes) on
    a free loopback port until the block ends; yields its base URL."""
    port = free_port()
    service = HttpService(served, "127.0.0.1", port, hosts=hosts)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        service.stop()


@contextmanager
def served_run(served: Any) -> Iterator[str]:
    """`live_server` for a run that ends as Ctrl-C ends `welcome.py`'s: the server, then its
    run (stopped); yields the base URL."""
    try:
        with live_server(served) as base:
            yield base
    finally:
        end_run(served.db, served.run_id, "stopped")


@contextmanager
def serving(app: Any, trusted_proxies: list[str] | None = None) -> Iterator[str]:
    """`app` served by uvicorn as the launcher sets it up, on a free loopback port in a thread
    of its own until the block ends; yields its base URL."""
    sock = listening_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, **uvicorn_options(
        trusted_proxies=trusted_proxies)))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the in-process server did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def dialogue(dialogue_id: str, group: str, tasks: list[str], origin: str | None = None,
             turns: int = 4) -> dict[str, Any]:
    record: dict[str, Any] = {
        "dialogue_id": dialogue_id, "group_id": group, "annotation_tasks": tasks,
        "turns": [["user" if i % 2 == 0 else "system", f"turn {i} of a dialogue"]
                  for i in range(turns)],
    }
    if origin:
        record["origin_worker_id"] = origin
    return record


def write_task(folder: Path, lines: list[Any], units: dict[str, int] | None, *,
               task_name: str = "t", task: dict[str, Any] | None = None,
               raw_lines: list[str] | None = None, port: int = 3999) -> Path:
    """A conf in `folder` whose data/units files sit beside it; returns the conf path."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{task_name}.jsonl"
    text = raw_lines if raw_lines is not None else [json.dumps(line) for line in lines]
    data.write_text("\n".join(text) + "\n")
    if units is not None:
        (folder / f"{task_name}_units.json").write_text(json.dumps(units))
    task_keys = {"task_name": task_name, "task_title": "Test task",
                 "assignment_duration_in_seconds": 600, **(task or {})}
    conf = folder / f"{task_name}.yaml"
    task_yaml = "\n".join(f"    {k}: {json.dumps(v)}" for k, v in task_keys.items())
    conf.write_text(
        "#@package _global_\n"
        "defaults:\n  - /mephisto/blueprint: static_annotation\n"
        f"mephisto:\n  architect:\n    hostname: 127.0.0.1\n    port: {port}\n"
        f"  blueprint:\n    data_jsonl: {data}\n    annotations_config_path: {BUCKETS}\n"
        f"  task:\n{task_yaml}\n"
    )
    return conf


class Running:
    """`welcome.py` in a subprocess, its output read line by line without blocking."""

    def __init__(self, tmp_path: Path, port: int, conf: str = "demo", *overrides: str,
                 argv: list[str] | None = None, fresh: bool = False):
        """`welcome.py conf=<conf> <overrides>` on `port`, or the Python arguments `argv`.
        Without a `database_url` its SQLite database under `data_dir` is at the newest schema
        already, as on every start but the first (a copy, without a migration's CPU), unless
        the test is about a `fresh` data_dir."""
        if not (fresh or argv or any(o.startswith("database_url=") for o in overrides)):
            launch_database(tmp_path / "data")
        argv = argv or [str(REPO / "welcome.py"), f"conf={conf}",
                        f"mephisto.architect.port={port}", f"data_dir={tmp_path / 'data'}",
                        *overrides]
        self.process = subprocess.Popen(
            [sys.executable, "-u", *argv],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.lines: list[str] = []
        self.output: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.output.put(line)

    def wait_for(self, pattern: str, timeout: float = 30) -> re.Match:
        deadline = time.monotonic() + timeout
        while True:
            for line in self.lines:
                if found := re.search(pattern, line):
                    return found
            ended = not self._reader.is_alive()  # its output is all read: no line will come
            try:
                wait = 0.01 if ended else max(0.01, min(0.5, deadline - time.monotonic()))
                self.lines.append(self.output.get(timeout=wait))
            except queue.Empty:
                if ended or time.monotonic() >= deadline:
                    raise AssertionError(f"no line matching {pattern!r}:\n"
                                         + "".join(self.lines)) from None


def _claims_in_process(served: Any, url: str, visits: list[tuple[str, str]],
                       statuses: Any) -> None:
    """In a forked process, on connections of its own: claim each (worker id, assignment id)
    visit through the API, eight at once; the answers' statuses go to `statuses`."""
    from collection_and_annotations.server.app import create_app
    from collection_and_annotations.storage.database import Database

    served.db = Database(url)
    client = app_client(create_app(served))

    def claim(visit: tuple[str, str]) -> int:
        return client.post("/api/claim", json={"worker_id": visit[0],
                                                "assignment_id": visit[1]}).status_code

    with ThreadPoolExecutor(8) as pool:
        statuses.extend(list(pool.map(claim, visits)))
    served.db.dispose()


def claims_from_processes(served: Any, url: str,
                          visits: list[list[tuple[str, str]]]) -> list[int]:
    """Each list of (worker id, assignment id) visits claimed through the API from a forked
    process of its own, all at once; every answer's status."""
    import multiprocessing

    served.db.dispose()  # each process opens its own connections
    context = multiprocessing.get_context("fork")
    statuses = context.Manager().list()
    processes = [context.Process(target=_claims_in_process, args=(served, url, own, statuses))
                 for own in visits]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=180)
        assert process.exitcode == 0
    return list(statuses)


def cli(*args: str, cwd: Path | None = None,
        env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m collection_and_annotations <args>` run in this process by click's test runner
    (`cwd` the working directory and `env` set in the environment meanwhile, None unsets),
    answered like `subprocess.run`: for tests of what a command writes and says. A test of the
    process itself (start-up, imports, signals, kill -9) runs it as a subprocess. An
    exception's traceback ends stderr."""
    from click.testing import CliRunner

    from collection_and_annotations.cli import main

    with chdir(cwd or Path.cwd()):
        result = CliRunner().invoke(main, list(args), env=env)
    stderr = result.stderr
    if result.exc_info and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(["cep", *args], result.exit_code, result.stdout, stderr)


def http_client(**options: Any) -> httpx.Client:
    """An httpx client of a local test server (`options` as httpx.Client takes them)."""
    return httpx.Client(verify=PLAIN_HTTP_TLS, **options)


def http_get(url: str, **options: Any) -> httpx.Response:
    """`httpx.get` of a local test server."""
    return httpx.get(url, verify=PLAIN_HTTP_TLS, **options)


def http_post(url: str, **options: Any) -> httpx.Response:
    """`httpx.post` to a local test server."""
    return httpx.post(url, verify=PLAIN_HTTP_TLS, **options)


def http_put(url: str, **options: Any) -> httpx.Response:
    """`httpx.put` to a local test server."""
    return httpx.put(url, verify=PLAIN_HTTP_TLS, **options)


def app_client(app: Any) -> TestClient:
    """Starlette's test client for `app`, as a browser on this machine calls it (the Host
    check allows localhost)."""
    return TestClient(app, base_url="http://localhost", follow_redirects=False)


def welcome(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python welcome.py <args>` run in this process (its entry point in a thread of its own,
    stdout, stderr and warnings captured, `cwd` the working directory), answered like
    `subprocess.run`: for tests of what a launch refuses and says, without paying for a
    Python start. A launch still running after `timeout` seconds (a conf that should have
    been refused is being served) fails the test. An exception's traceback ends stderr, exit
    code 1. A test of the process itself (start-up, signals, serving) runs `Running`."""
    from collection_and_annotations.cli.launch import main

    stdout, stderr = io.StringIO(), io.StringIO()
    answer: list[int] = []

    def launch() -> None:
        try:
            answer.append(main(list(args)))
        except SystemExit as exc:
            answer.append(exc.code if isinstance(exc.code, int) else 1)
        except BaseException:  # as Python would: the traceback on stderr, exit code 1
            stderr.write(traceback.format_exc())
            answer.append(1)

    gc_thresholds, format_warning = gc.get_threshold(), warnings.formatwarning
    thread = threading.Thread(target=launch, name="welcome.py", daemon=True)
    with (chdir(cwd), redirect_stdout(stdout), redirect_stderr(stderr),
          warnings.catch_warnings()):
        warnings.simplefilter("default")  # a fresh process shows each warning once
        warnings.showwarning = _show_warning
        try:
            thread.start()
            thread.join(timeout)
        finally:
            # the launch's settings for a serving process are not this one's
            warnings.formatwarning = format_warning
            gc.unfreeze()
            gc.set_threshold(*gc_thresholds)
    if thread.is_alive():
        raise AssertionError(f"welcome.py {' '.join(args)} was still running after {timeout} s "
                             f"(serving?):\n{stdout.getvalue()}{stderr.getvalue()}")
    return subprocess.CompletedProcess(["welcome.py", *args], answer[0], stdout.getvalue(),
                                       stderr.getvalue())


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Python's way of showing a warning (on stderr, as `formatwarning` says), in place of
    pytest's recording of it."""
    (file or sys.stderr).write(warnings.formatwarning(message, category, filename, lineno, line))
