"""The supervisor replaces a server process that dies at once, but backs off when they keep
dying young (a crash loop must not fork as fast as it can)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from collection_and_annotations.server.supervisor import Supervisor

    launcher = os.getpid()
    pid = os.fork()
    if pid == 0:
        Supervisor(lambda parent: sys.exit(3), 1, launcher).run()
    time.sleep(2.6)
    os.kill(pid, signal.SIGTERM)
    _, status = os.waitpid(pid, 0)
    print("supervisor exit", os.waitstatus_to_exitcode(status), file=sys.stderr)
""")


def test_children_dying_in_a_loop_are_restarted_with_a_growing_back_off():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=30)
    lines = done.stderr.splitlines()
    deaths = [line for line in lines if "ended unexpectedly (exit status 3)" in line]
    assert "started" in deaths[0] and "in its place" in deaths[0]  # the first: at once
    waits = [float(w) for w in re.findall(r"starting another in ([\d.]+) s", done.stderr)]
    assert waits[:3] == [0.5, 1.0, 2.0] and len(deaths) <= 5, done.stderr
    assert lines[-1] == "supervisor exit 0"
