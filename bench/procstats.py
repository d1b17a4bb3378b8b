"""What the benchmarks read of a server process (from /proc) and of their own event loop, and
how they stop one."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


async def loop_lag(stop: asyncio.Event, lags: list[float]) -> None:
    """How late a 50 ms sleep wakes up, until `stop`: the client's own delay, which would
    otherwise read as the server's."""
    while not stop.is_set():
        before = time.monotonic()
        await asyncio.sleep(0.05)
        lags.append(time.monotonic() - before - 0.05)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (state first)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int, children: bool = False) -> float:
    """User + system CPU time of `pid`; with `children`, also of its children that ended."""
    fields = _stat(pid)
    return sum(int(field) for field in fields[11:15 if children else 13]) \
        / os.sysconf("SC_CLK_TCK")


def tree(root: int) -> list[int]:
    """`root` and its live descendants (the launcher, its supervisor and server processes)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(_stat(entry.name)[1])
            except OSError:
                continue
    found = {root}
    for pid in sorted(parents):  # children have larger pids than their parents, mostly
        if parents[pid] in found:
            found.add(pid)
    return sorted(found)


def tree_cpu_seconds(root: int) -> float:
    """CPU time (user + system) of `root` and its live descendants, from /proc (Linux): the
    server's cost per request, which other load on the machine hardly changes."""
    return sum(_or_zero(cpu_seconds, pid) for pid in tree(root))


def postgres_cpu_seconds() -> float:
    """CPU time of this machine's PostgreSQL: its live processes and the backends that have
    ended (their time is in the postmaster's reaped-children fields)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "postgres":
                total += cpu_seconds(int(entry.name), children=True)
        except OSError:
            continue
    return total


def busy_cpu_seconds() -> float:
    """CPU time the whole machine spent busy (all cores, from /proc/stat: not idle, iowait
    or stolen by the host)."""
    ticks = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4] + (ticks[7] if len(ticks) > 7 else 0)
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def tree_rss_mb(root: int) -> float:
    return sum(_or_zero(rss_mb, pid) for pid in tree(root))


def _or_zero(read: Callable[[int], float], pid: int) -> float:
    try:
        return read(pid)
    except OSError:  # the process ended meanwhile
        return 0.0


def interrupt(server: subprocess.Popen) -> None:
    """Ctrl-C, as a person stops the launcher; killed if it is still up a minute later."""
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
