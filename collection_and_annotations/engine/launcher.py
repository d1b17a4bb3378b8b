"""Which launcher serves a run, as its `task_runs.server` records it ("<host> pid <pid>, <url>"),
and whether that launcher is gone: a restart on the same host after a crash (kill -9, power
cut of the process) takes the run over at once instead of waiting for the dead launcher's
heartbeat to grow stale."""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

_RECORDED = re.compile(r"^(?P<host>\S+) pid (?P<pid>\d+),")
# A process's start time is read as the boot time in whole seconds (so up to a second early)
# plus clock ticks; one that seems to start this much after the run still counts as started
# before it, for a wall clock stepped since.
CLOCK_SLACK = timedelta(seconds=1)


@dataclass(frozen=True)
class Launcher:
    host: str
    pid: int

    @classmethod
    def this(cls) -> Launcher:
        return cls(socket.gethostname(), os.getpid())

    @classmethod
    def recorded(cls, server: str | None) -> Launcher | None:
        """The launcher a run's `server` names (None when it names none)."""
        found = _RECORDED.match(server or "")
        return cls(found["host"], int(found["pid"])) if found else None

    def describe(self, public_url: str) -> str:
        """What a run records as its `server` (a column of 200 characters)."""
        return f"{self.host} pid {self.pid}, {public_url}"[:200]


def is_gone(server: str | None, run_created: datetime) -> bool:
    """Whether the launcher recorded in `server` (for a run created at `run_created`, naive
    UTC) surely no longer serves it: it ran on this host and its pid is now free, a zombie,
    this very process, or a process started after the run was created (the pid was reused).
    A launcher on another host, or one this cannot tell about, is never gone."""
    recorded, here = Launcher.recorded(server), Launcher.this()
    if recorded is None or recorded.host != here.host:
        return False
    if recorded.pid == here.pid:
        return True
    started = _started(recorded.pid)
    if started is None:
        return True
    return started is not _UNKNOWN and started > run_created + CLOCK_SLACK


_UNKNOWN = datetime.min  # a live process whose start time this system does not tell


def _started(pid: int) -> datetime | None:
    """When process `pid` started (naive UTC); None when there is no such live process."""
    if Path("/proc/self/stat").is_file():  # Linux
        return _started_by_proc(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # another user's process: alive
    return _UNKNOWN


def _started_by_proc(pid: int) -> datetime | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return None
    except OSError:
        return _UNKNOWN
    if fields[0] in ("Z", "X"):  # a zombie: dead, waiting for its parent to reap it
        return None
    try:
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        ticks = int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, IndexError, ValueError):
        return _UNKNOWN
    return datetime.fromtimestamp(boot + ticks, UTC).replace(tzinfo=None)
