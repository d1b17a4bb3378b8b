"""Serve a loaded conf (`cli.launch` reads it): check everything, then serve the task."""

from __future__ import annotations

import gc
import signal
import socket
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from omegaconf import DictConfig, OmegaConf
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from collection_and_annotations.blueprints import TaskBlueprint, build_blueprint
from collection_and_annotations.cli.public_address import public_host, url_host
from collection_and_annotations.config.checks import check_services_supported
from collection_and_annotations.engine.allocation import Limits, expire_overdue
from collection_and_annotations.engine.chat import expire_idle_chats, mark_interrupted_replies
from collection_and_annotations.engine.join import Presence, check_joinable, running_run
from collection_and_annotations.engine.launcher import Launcher
from collection_and_annotations.engine.provider_sync import ProviderSync
from collection_and_annotations.engine.runs import (
    Progress,
    end_run,
    heartbeat,
    start_run,
    unit_counts,
)
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.errors import UserError
from collection_and_annotations.providers import provider_class
from collection_and_annotations.providers.base import Provider, ProviderError
from collection_and_annotations.quality.blocklist import check_blocklists, load_blocklist
from collection_and_annotations.quality.qualifications import required_names
from collection_and_annotations.quality.stats import Outcomes, task_outcomes
from collection_and_annotations.server.app import check_frontend_built
from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.server.http import HostNames, HttpService
from collection_and_annotations.storage.database import Database, default_url

if TYPE_CHECKING:
    from collection_and_annotations.judges.served import ServedJudges

SAMPLE_LINKS = 5
MAINTENANCE_EVERY = 60.0  # seconds between refreshes of the planner's statistics
SERVING_GC_THRESHOLDS = (50_000, 50, 100)  # young objects, then young and middle collections


def check_port_free(host: str, port: int) -> None:
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UserError(f"cannot resolve hostname '{host}' ({exc.strerror}); set "
                        "mephisto.architect.hostname to a name of this machine, an address, "
                        "or 0.0.0.0 to listen everywhere") from None
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UserError(f"port {port} on {host} is not free ({exc.strerror}); stop what uses "
                            f"it or pick another with mephisto.architect.port=<port>") from None


def base_url(architect: DictConfig) -> str:
    """Where workers and requesters reach the server: the configured public URL (behind a
    TLS-terminating proxy), else this machine's name or address and the port."""
    if architect.public_url:
        return str(architect.public_url).rstrip("/")
    return f"http://{url_host(public_host(architect.hostname))}:{architect.port}"


def data_location(url: str) -> str:
    """The database as a user finds it: the SQLite file, or the URL without its password."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return f"SQLite file {Path(parsed.database or '').resolve()}"
    return parsed.set(password=None).render_as_string(hide_password=False)


def checked_provider(cfg: DictConfig) -> type[Provider]:
    """The conf's provider class, its own check passed (credentials) before anything is
    written or sent."""
    provider_cls = provider_class(cfg.mephisto.provider._provider_type)
    provider_cls.check(cfg)
    return provider_cls


def requester_lines(served: ServedTask) -> list[str]:
    """Where the requester works: the dashboard, the API and its token."""
    url = served.provider.public_url
    return [f"dashboard: {url}/dashboard  (sign in with the requester token)",
            f"requester API: {url}/api/requester/progress",
            f"  token: {requester_token(served.secret)}  "
            "(send as 'Authorization: Bearer <token>')"]


def prepare(cfg: DictConfig) -> tuple[Database, TaskBlueprint]:
    """Every check that needs no writes, in the order a user fixes them."""
    blueprint = build_blueprint(cfg)
    check_services_supported(cfg)
    required_names(cfg.mephisto.blueprint, cfg.mephisto.task.task_name)
    checked_provider(cfg)
    for warning in blueprint.check_bots():
        print(f"warning: {warning}", file=sys.stderr)
    check_blocklists(cfg.mephisto.blueprint.worker_blocklist_paths,
                     cfg.mturk.worker_blocklist_paths)
    architect = cfg.mephisto.architect
    check_port_free(architect.hostname, architect.port)
    check_frontend_built()
    if architect.server_processes < 1:
        raise UserError("mephisto.architect.server_processes must be 1 or more")
    sqlite = (cfg.database_url or "sqlite").startswith("sqlite")
    if architect.server_processes > 1 and sqlite:
        raise UserError("several server processes (mephisto.architect.server_processes="
                        f"{architect.server_processes}) need PostgreSQL: set database_url, or "
                        "serve SQLite with one process")
    if architect.join and sqlite:
        raise UserError("mephisto.architect.join=true lets launchers on several machines serve "
                        "one run through one PostgreSQL database; SQLite is a file of one "
                        "machine: set database_url to PostgreSQL, or leave join out")
    # creates data_dir: last
    db = Database(cfg.database_url or default_url(cfg.data_dir), architect.lock_timeout_s)
    db.check_reachable()
    return db, blueprint


def served_task(
    cfg: DictConfig, db: Database, blueprint: TaskBlueprint, ids: tuple[int, int],
    provider: Provider, secret: str, blocked: frozenset[str] = frozenset(),
    taking_work: bool = True,
) -> ServedTask:
    """What the server serves for the run `ids` (task id, run id) of the conf `cfg`."""
    task_cfg = cfg.mephisto.task
    return ServedTask(
        db=db, blueprint=blueprint, task_name=task_cfg.task_name, task_id=ids[0], run_id=ids[1],
        title=task_cfg.task_title or task_cfg.task_name, description_html=task_cfg.task_description,
        limits=Limits(task_cfg.allowed_concurrent, task_cfg.maximum_units_per_worker,
                      task_cfg.max_num_concurrent_units, task_cfg.assignment_duration_in_seconds,
                      required_names(cfg.mephisto.blueprint, task_cfg.task_name)),
        provider=provider, secret=secret, blocked_workers=blocked,
        return_rejected_units=task_cfg.return_rejected_units, taking_work=taking_work,
    )


def open_task(
    cfg: DictConfig, conf_path: str, db: Database, blueprint: TaskBlueprint
) -> ServedTask:
    """Migrate, create the run and its units: the first writes, after every check passed."""
    blocked = load_blocklist(cfg.mephisto.blueprint.worker_blocklist_paths,
                             cfg.mturk.worker_blocklist_paths)
    provider_cls = provider_class(cfg.mephisto.provider._provider_type)
    db.migrate()
    secret = db.setting("secret")
    task_cfg = cfg.mephisto.task
    run_config = {"conf_path": conf_path, "conf": OmegaConf.to_container(cfg),
                  **blueprint.describe()}
    public_url = base_url(cfg.mephisto.architect)
    provider = provider_cls.create(cfg, secret, public_url)
    plans = blueprint.plan()
    joined = running_run(db, task_cfg.task_name) if cfg.mephisto.architect.join else None
    if joined is not None:
        check_joinable(db, joined, run_config["conf"]["mephisto"]["task"],
                       {plan.key for plan in plans})
        print(f"joining run {joined.id} of task '{task_cfg.task_name}', served by "
              f"{joined.server} (mephisto.architect.join)")
        return served_task(cfg, db, blueprint, (joined.task_id, joined.id), provider, secret,
                           blocked)
    started = start_run(db, task_cfg.task_name, blueprint, run_config, plans,
                        Launcher.this().describe(public_url), cfg.mephisto.blueprint.random_seed)
    for server in started.taken_over:
        print(f"the last server of this task ({server}) is no longer running; its run is "
              "taken over")
    for line in started.changes.summary():
        print(line)
    task_id, run_id = started.task_id, started.run_id
    try:
        started_lines = provider.start(db, task_cfg.task_name,
                                       Progress.of(unit_counts(db, task_id)).total)
    except ProviderError as exc:
        end_run(db, run_id, "stopped")
        raise UserError(f"{provider.name}: {exc}; the run was stopped, start it again once "
                        "the platform is reachable") from None
    for line in started_lines:
        print(line)
    served = served_task(cfg, db, blueprint, (task_id, run_id), provider, secret, blocked)
    if served.blueprint.chats:
        with db.session() as session:
            interrupted = mark_interrupted_replies(session, task_id)
        if interrupted:
            print(f"{interrupted} chat(s) were waiting for a bot reply when the last server "
                  "stopped; their workers are offered to ask again")
    return served


def _load(cfg: DictConfig, conf_path: str) -> ServedTask:
    """Checks, then the run. A large task builds hundreds of thousands of objects that live as
    long as the server: collecting garbage while they are made is a large share of start-up,
    and frozen afterwards they stay out of every later collection (and are shared, not copied,
    by forked server processes).

    Serving then makes fewer, larger young collections (SERVING_GC_THRESHOLDS): with
    Python's defaults, thousands of open chats made the collector run every few milliseconds,
    its full collections stopping the event loop (bench/RESULTS.md, "Live chat load")."""
    gc.disable()
    try:
        db, blueprint = prepare(cfg)
        served = open_task(cfg, conf_path, db, blueprint)
    finally:
        gc.enable()
    gc.freeze()
    gc.set_threshold(*SERVING_GC_THRESHOLDS)
    return served


def served_judges(cfg: DictConfig) -> ServedJudges | None:
    """The conf's LLM judges, built; their libraries load only for a conf that names some."""
    if not cfg.mephisto.blueprint.judges:
        return None
    from collection_and_annotations.judges.served import ServedJudges

    return ServedJudges.from_conf(cfg)


def serve(cfg: DictConfig, conf_path: str) -> int:
    judges = served_judges(cfg)  # checked before anything is written
    served = _load(cfg, conf_path)
    architect = cfg.mephisto.architect
    # Whatever has started is stopped, whenever Ctrl-C comes (while the links print too).
    http: HttpService | None = None
    presence: Presence | None = None
    sync: ProviderSync | None = None
    judging: ServedJudges | None = None
    monitor: Monitor | None = None
    try:
        http = HttpService(served, architect.hostname, architect.port,
                           architect.server_processes, HostNames.of(architect),
                           relay_chat=architect.server_processes > 1 or architect.join,
                           threads=architect.database_threads)
        # Launchers that join one run share it until the last of them stops (engine/join.py).
        presence = Presence(served.db, served.run_id) if architect.join else None
        # `kill` (SIGTERM) stops as cleanly as Ctrl-C: server processes ended, run closed.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        finished = _announce(served)
        # Only a platform that pays has calls to retry; local links record decisions at once.
        if served.provider.pays:
            sync = ProviderSync(served.db, served.provider, served.task_id)
            sync.start()
        if judges is not None:
            judges.start(served)
            judging = judges
        monitor = Monitor(served, cfg.monitoring_log_rate, cfg.exit_when_complete, finished)
        monitor.run()
    except KeyboardInterrupt:
        state = ("the run is complete" if monitor is not None and monitor.complete
                 else "completed work is saved; run the same conf again to continue")
        print(f"\nstopping: {state}; the data is in {data_location(served.db.url)}")
    finally:
        if judging is not None:
            judging.stop()
        if sync is not None:
            sync.stop()
        if http is not None:
            http.stop()
        # a launcher that never joined leaves a shared run to the others
        if presence.leave() if presence is not None else not architect.join:
            end_run(served.db, served.run_id,
                    "completed" if monitor is not None and monitor.complete else "stopped")
        served.db.dispose()
    return 0


def _announce(served: ServedTask) -> bool:
    """Print what a requester needs to start; returns whether the task was already finished
    (every unit completed in earlier runs)."""
    provider, run_id = served.provider, served.run_id
    progress = Progress.of(unit_counts(served.db, served.task_id))
    print(f"task '{served.task_name}', run {run_id}: {progress.total} units "
          f"({progress.done} already completed)")
    print(f"data: {data_location(served.db.url)}")
    finished = progress.total > 0 and progress.complete
    if finished:
        print(f"task '{served.task_name}' is finished: all {progress.total} units were completed "
              "in earlier runs, so there is no work to serve.\n"
              "  to collect more, add dialogues to the data file or raise the annotators per "
              "group in the units file, then run this conf again;\n"
              "  for a separate study on the same data, give it a new name: "
              "mephisto.task.task_name=<new name>")
    else:
        print("worker links (each new assignment_id gives that worker a new unit):")
        for i in range(1, SAMPLE_LINKS + 1):
            print(f"  {provider.link(f'worker_{i}', '1')}")
    print("\n".join(requester_lines(served)))
    print(f"  submissions: {provider.public_url}/api/requester/submissions?format=csv")
    if provider.require_signature and not finished:
        print(f"  more signed links: {provider.public_url}/api/requester/links?worker_id=W&n=3")
    print("press Ctrl-C to stop", flush=True)
    return finished


def _progress_line(progress: Progress, outcomes: Outcomes | None = None) -> str:
    stamp = datetime.now().strftime("%H:%M:%S")
    line = (f"[{stamp}] progress: {progress.done}/{progress.total} units completed, "
            f"{progress.in_progress} in progress, {progress.waiting} waiting")
    quality = outcomes.summary() if outcomes is not None else ""
    return f"{line}; {quality}" if quality else line


def _tick(served: ServedTask) -> tuple[Progress, Outcomes]:
    """Once a second: tell other launchers we serve the run, return overdue units to the pool,
    count progress and screening/gold outcomes (two aggregate queries)."""
    with served.db.session() as session:
        heartbeat(session, served.run_id)
        if served.blueprint.chats:
            expire_idle_chats(session, served.run_id)
        expire_overdue(session, served.run_id)
    progress = Progress.of(unit_counts(served.db, served.task_id))
    with served.db.read() as session:
        return progress, task_outcomes(session, served.task_id)


class Monitor:
    """Prints progress as units complete, and keeps the run's background work going. When
    no work is left the server stays up for the dashboard and exports until Ctrl-C (or
    returns, with `exit_when_complete`); work that comes back (a rejected unit returned to
    the pool) is served again. A database error in this loop is reported and retried: it
    never stops the server."""

    def __init__(self, served: ServedTask, log_every: int, exit_when_complete: bool,
                 complete: bool = False):
        self.served, self.log_every, self.exit_when_complete = served, log_every, \
            exit_when_complete
        self.complete = complete

    def run(self) -> None:
        served = self.served
        last_seen: tuple[int, Outcomes] | None = None
        last_log, last_maintenance = 0.0, time.monotonic()
        failures = 0
        while True:
            try:
                progress, outcomes = _tick(served)
                if time.monotonic() - last_maintenance >= MAINTENANCE_EVERY:
                    served.db.refresh_statistics(("units", "worker_groups", "drafts"))
                    last_maintenance = time.monotonic()
            except SQLAlchemyError as exc:
                failures += 1
                reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
                print(f"warning: background check failed ({type(exc).__name__}: {reason}); "
                      "retrying", file=sys.stderr, flush=True)
                time.sleep(min(30.0, 0.5 * 2 ** min(failures, 6)))
                continue
            failures = 0
            if (progress.done, outcomes) != last_seen or \
                    time.monotonic() - last_log >= self.log_every:
                print(_progress_line(progress, outcomes), flush=True)
                last_seen, last_log = (progress.done, outcomes), time.monotonic()
            if progress.complete and not self.complete:
                self.complete = True
                print("all units are completed; the run is complete", flush=True)
                if not self.exit_when_complete:
                    print(f"the server stays up for the dashboard and exports "
                          f"({served.provider.public_url}/dashboard); press Ctrl-C to stop",
                          flush=True)
            elif not progress.complete and self.complete:
                self.complete = False
                print("work came back to the pool; serving it", flush=True)
            if self.complete and self.exit_when_complete:
                return
            time.sleep(1.0)
