"""Keep N forked server processes alive, and make sure none outlives the launcher.

The supervisor is itself a process forked from the launcher, single-threaded, so that it can
fork a replacement at any time: forking the launcher, which runs threads and holds database
connections, would copy locks held by other threads. Children die with their parent through
PR_SET_PDEATHSIG on Linux (even on kill -9), and poll getppid() as a fallback elsewhere. The
signal follows the thread that forked, so both forks happen on a main thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
# Children dying younger than this, one after another, are a crash loop: the first is replaced
# at once, each next one after a wait doubling up to MAX_BACKOFF; one that lived longer resets it.
YOUNG_SECONDS = 10.0
FIRST_BACKOFF, MAX_BACKOFF = 0.5, 30.0
STOP_SECONDS = 10.0
_WATCHED = {signal.SIGCHLD, signal.SIGTERM}


def die_with_parent(parent: int) -> None:
    """Have the kernel send SIGTERM when the parent dies; exit now if it already has."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(0)


def describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


class Supervisor:
    """Runs in the supervisor process: starts `count` children running `body` and replaces
    any that exits, until SIGTERM or the launcher's death; then stops them all and exits."""

    def __init__(self, body: Callable[[int], None], count: int, launcher: int):
        self.body, self.count, self.launcher = body, count, launcher
        self.children: dict[int, float] = {}  # pid -> start time
        self.backoff = 0.0
        self.young_deaths = 0
        self.next_start = 0.0

    def run(self) -> None:
        die_with_parent(self.launcher)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the launcher, which stops us
        signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
        try:
            for _ in range(self.count):
                self._start()
            while os.getppid() == self.launcher:
                self._reap()
                if len(self.children) < self.count and time.monotonic() >= self.next_start:
                    new = self._start()
                    print(f"server process {new} started after a {self.backoff:g} s back-off",
                          file=sys.stderr, flush=True)
                wait = max(0.05, min(1.0, self.next_start - time.monotonic()))
                info = signal.sigtimedwait(_WATCHED, wait)
                if info is not None and info.si_signo == signal.SIGTERM:
                    break
        finally:
            self._stop_all()
            os._exit(0)

    def _start(self) -> int:
        pid = os.fork()
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)
            try:
                self.body(os.getppid())
            except SystemExit as end:
                os._exit(end.code if isinstance(end.code, int) else 1)
            except BaseException:
                traceback.print_exc()
                os._exit(1)
            os._exit(0)
        self.children[pid] = time.monotonic()
        return pid

    def _reap(self) -> None:
        while self.children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            started = self.children.pop(pid, None)
            if started is None:
                continue
            young = time.monotonic() - started < YOUNG_SECONDS
            self.young_deaths = self.young_deaths + 1 if young else 0
            self.backoff = 0.0 if self.young_deaths < 2 else min(
                MAX_BACKOFF, FIRST_BACKOFF * 2 ** (self.young_deaths - 2))
            self.next_start = time.monotonic() + self.backoff
            if self.backoff == 0.0:
                new = self._start()
                what = f"started {new} in its place"
            else:
                what = f"starting another in {self.backoff:g} s (they die young)"
            print(f"server process {pid} ended unexpectedly ({describe_exit(status)}); {what}",
                  file=sys.stderr, flush=True)

    def _stop_all(self) -> None:
        for pid in self.children:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        while self.children and time.monotonic() < deadline:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid:
                self.children.pop(pid, None)
            else:
                time.sleep(0.05)
        for pid in self.children:
            _signal(pid, signal.SIGKILL)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
