"""What the benchmarks read of a server process (from /proc) and of their own event loop."""

from __future__ import annotations

import asyncio
import os
import time
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


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
