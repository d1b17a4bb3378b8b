"""Benchmark: the worker page's download size and how fast its first question can be answered.

    .venv/bin/python bench/frontend_bench.py            # 10 page loads
    .venv/bin/python bench/frontend_bench.py --loads 20

Starts `python welcome.py conf=demo` on a free port of 127.0.0.1 with a temporary data dir, then
measures, in Debian's Chromium (/usr/bin/chromium, driven by Playwright):

(a) the initial JS + CSS: the assets the built `index.html` references, as raw bytes and as
    `gzip -9` bytes, and what Chromium reports as transferred for them (`transferSize` of the
    resource timing entries: the server sends them uncompressed, headers included);
(b) the time from navigation start to the first question being interactive (the first radio or
    checkbox visible and enabled), over `--loads` page loads, each in a new browser context (empty
    cache, no service worker). The measured link is one whose worker already clicked past the
    "Before you start" screen, so its draft reopens at step 1 and a question is the first thing
    on screen. For reference it also times fresh links (new workers) to their first screen being
    interactive (the overview's Next button enabled).

Targets: initial JS + CSS < 250 KB gzip; first question interactive < 1 s.
"""

from __future__ import annotations

import argparse
import gzip
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

REPO = Path(__file__).resolve().parents[1]
STATIC = REPO / "collection_and_annotations" / "server" / "static"
CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
TARGET_GZIP_KB, TARGET_SECONDS = 250, 1.0

FIRST_QUESTION = """() => {
    const input = document.querySelector('input[type=radio], input[type=checkbox]');
    const ready = input && !input.disabled && input.checkVisibility({visibilityProperty: true});
    return ready ? performance.now() : false;
}"""
OVERVIEW_READY = """() => {
    const next = [...document.querySelectorAll('button')].find(b => b.textContent === 'Next');
    return next && !next.disabled ? performance.now() : false;
}"""
ASSET_TRANSFER = """() => performance.getEntriesByType('resource')
    .filter(e => new URL(e.name).pathname.startsWith('/assets/'))
    .map(e => [new URL(e.name).pathname, e.transferSize, e.encodedBodySize])"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_demo(data_dir: Path, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-u", str(REPO / "welcome.py"), "conf=demo",
         f"mephisto.architect.port={port}", "mephisto.architect.hostname=127.0.0.1",
         f"data_dir={data_dir}"],
        cwd=data_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    for line in process.stdout:
        if "press Ctrl-C to stop" in line:
            return process
    raise SystemExit(f"welcome.py conf=demo did not start (exit code {process.wait()})")


def asset_sizes() -> list[tuple[str, int, int]]:
    """(path, raw bytes, gzip -9 bytes) of each JS/CSS asset the built index.html references."""
    html = (STATIC / "index.html").read_text()
    paths = re.findall(r'(?:src|href)="(/assets/[^"]+\.(?:js|css))"', html)
    sizes = []
    for path in paths:
        data = (STATIC / path.lstrip("/")).read_bytes()
        sizes.append((path, len(data), len(gzip.compress(data, compresslevel=9))))
    return sizes


def timed_load(browser: Browser, url: str, ready_js: str) -> tuple[float, list]:
    """Milliseconds from navigation start until `ready_js` holds, in a fresh context."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(url, wait_until="commit")
        ms = page.wait_for_function(ready_js, polling="raf", timeout=15_000).json_value()
        return ms, page.evaluate(ASSET_TRANSFER)
    finally:
        context.close()


def prepare_resumed_link(browser: Browser, url: str) -> None:
    """Click past "Before you start" once, so that the link's draft reopens at step 1."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    with page.expect_response(lambda r: r.url.endswith("/draft") and r.request.method == "PUT"
                              and r.request.post_data_json["position"].get("step") == 1):
        page.get_by_role("button", name="Next", exact=True).click()
    context.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=10, help="page loads to time")
    args = parser.parse_args()
    if not (STATIC / "index.html").is_file():
        raise SystemExit("build the frontend first: cd frontend && npm ci && npm run build")
    chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout
    print(f"browser: {chromium.strip()}")

    sizes = asset_sizes()
    raw, packed = sum(s[1] for s in sizes), sum(s[2] for s in sizes)
    for path, size, gz in sizes:
        print(f"  {path}: {size / 1024:.1f} KB raw, {gz / 1024:.1f} KB gzip -9")
    print(f"initial JS+CSS: {raw / 1024:.1f} KB raw, {packed / 1024:.1f} KB gzip -9 "
          f"(target < {TARGET_GZIP_KB} KB gzip)")

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        server = start_demo(Path(tmp), port)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            resumed = f"{base}/?worker_id=bench&assignment_id=1"
            prepare_resumed_link(browser, resumed)
            timings, transfers = [], []
            for _ in range(args.loads):
                ms, transfer = timed_load(browser, resumed, FIRST_QUESTION)
                timings.append(ms)
                transfers.append(sum(t for _, t, _ in transfer))
            fresh = [timed_load(browser, f"{base}/?worker_id=fresh{i}&assignment_id=1",
                                OVERVIEW_READY)[0] for i in range(5)]
        finally:
            browser.close()
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()

    print(f"Chromium transfer of the JS+CSS per load: {statistics.median(transfers) / 1024:.1f} KB "
          "(uncompressed by the server, headers included)")
    median, worst = statistics.median(timings), max(timings)
    print(f"first question interactive over {len(timings)} loads: median {median:.0f} ms, "
          f"max {worst:.0f} ms (target < {TARGET_SECONDS * 1000:.0f} ms)")
    print(f"  all: {', '.join(f'{t:.0f}' for t in timings)} ms")
    print(f"fresh link, overview interactive over {len(fresh)} loads: median "
          f"{statistics.median(fresh):.0f} ms, max {max(fresh):.0f} ms")
    met = packed / 1024 < TARGET_GZIP_KB and worst / 1000 < TARGET_SECONDS
    print("targets met" if met else "TARGETS MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
