"""Host allow-list (DNS rebinding), security headers and the requester token, over real HTTP."""

from __future__ import annotations

import contextlib
import re
import socket

import pytest
from helpers import (
    Running,
    app_client,
    dialogue,
    free_port,
    http_get,
    http_post,
    live_server,
    serving,
    write_task,
)
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from collection_and_annotations.providers.local import LocalProvider
from collection_and_annotations.server import guard
from collection_and_annotations.server.app import STATIC_DIR, create_app
from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.server.http import HostNames
from collection_and_annotations.server.security import SECURITY_HEADERS, HostCheck


@pytest.fixture
def served(tmp_path, sqlite_url, open_conf):
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", ["relevance"])]}], {"g1": 1})
    return open_conf(str(conf), sqlite_url)


@pytest.fixture
def serve_http(served):
    """Serve the task with `allowed_hosts` on a free loopback port; returns its base URL."""
    with contextlib.ExitStack() as servers:
        yield lambda allowed_hosts=None: servers.enter_context(
            live_server(served, HostNames(allowed=allowed_hosts)))


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "localhost:3000",
                                  "127.0.0.1:{port}", "[::1]:{port}"])
def test_loopback_names_are_served(serve_http, host):
    base = serve_http()
    host = host.format(port=base.rsplit(":", 1)[1])
    assert http_get(f"{base}/api/health", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:3000", "localhost.evil.example",
                                  "10.0.0.1"])
def test_other_names_are_refused_everywhere(serve_http, host):
    base = serve_http()
    for path in ("/", "/api/health", "/api/requester/progress", "/assets/x.js", "/nope"):
        reply = http_get(f"{base}{path}", headers={"Host": host})
        assert reply.status_code == 421, (path, reply.text)
        assert "mephisto.architect.allowed_hosts" in reply.json()["error"]
    reply = http_post(f"{base}/api/claim", headers={"Host": host},
                      json={"worker_id": "w", "assignment_id": "a"})
    assert reply.status_code == 421


def test_allowed_hosts_add_names(serve_http):
    base = serve_http(allowed_hosts=["annotate.example.org", "Proxy.Example:8443"])
    for host in ("annotate.example.org", "annotate.example.org:443", "proxy.example",
                 "localhost"):
        assert http_get(f"{base}/api/health", headers={"Host": host}).status_code == 200
    assert http_get(f"{base}/api/health", headers={"Host": "evil.example"}).status_code == 421
    base = serve_http(allowed_hosts=["*"])
    assert http_get(f"{base}/api/health", headers={"Host": "evil.example"}).status_code == 200


def test_public_host_and_ip_literals_beyond_loopback():
    check = HostCheck("http://cep.example.org:3000")
    assert check.allows("cep.example.org:3000") and check.allows("CEP.example.org")
    assert check.allows("192.168.1.7:3000") and check.allows("[fe80::1]:3000")
    assert not check.allows("evil.example")
    loopback = HostCheck("http://127.0.0.1:3000")
    assert not loopback.allows("192.168.1.7:3000")


def test_security_headers_on_every_response(serve_http):
    base = serve_http()
    page = http_get(f"{base}/")
    script, style = (re.search(rf'<{tag}[^>]*{attr}="(/assets/[^"]+)"', page.text).group(1)
                     for tag, attr in (("script", "src"), ("link", "href")))
    for reply in (page, http_get(f"{base}{script}"), http_get(f"{base}{style}"),
                  http_get(f"{base}/api/health"), http_get(f"{base}/nope"),
                  http_get(f"{base}/", headers={"Host": "evil.example"}),
                  http_get(f"{base}/api/requester/progress"), http_get(f"{base}/dashboard")):
        headers = reply.headers
        csp = headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "script-src 'self';" in csp and "unsafe-eval" not in csp
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
        assert headers["X-Frame-Options"] == "DENY"


def test_built_page_has_no_inline_script():
    """script-src 'self' holds only while the built page keeps its scripts in files."""
    html = (STATIC_DIR / "index.html").read_text()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all("src=" in attrs and not body.strip() for attrs, body in scripts)
    assert re.search(r"<[^>]*\son\w+\s*=", html) is None  # no onload=... handlers either


def test_requester_token_only_in_a_header(serve_http, served):
    base = serve_http()
    token = requester_token(served.secret)
    reply = http_get(f"{base}/api/requester/progress?token={token}")
    assert reply.status_code == 401 and "Authorization: Bearer" in reply.json()["error"]
    assert "not as ?token=" in reply.json()["error"]
    reply = http_get(f"{base}/api/requester/progress",
                     headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200


def test_public_url_comes_from_the_provider(served):
    served.provider = LocalProvider(served.secret, "http://cep.example.org:3000", True)
    client = app_client(create_app(served))
    assert client.get("/api/health", headers={"Host": "cep.example.org:3000"}).status_code == 200
    assert client.get("/api/health", headers={"Host": "evil.example"}).status_code == 421


def test_allowed_hosts_from_the_conf_reach_the_server(tmp_path):
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", ["overall_quality"])]}],
                      {"g1": 1})
    port = free_port()
    run = Running(tmp_path, port, str(conf),
                  "mephisto.architect.allowed_hosts=[annotate.example.org]")
    try:
        run.wait_for(r"press Ctrl-C")
        url = f"http://127.0.0.1:{port}/api/health"
        assert http_get(url, headers={"Host": "annotate.example.org"}).status_code == 200
        assert http_get(url, headers={"Host": "evil.example.com"}).status_code == 421
    finally:
        run.process.kill()
        run.process.wait()


def test_public_url_behind_a_proxy(tmp_path):
    """Links, the dashboard line and the host check follow mephisto.architect.public_url;
    links are signed although the server listens on loopback (the proxy makes it public)."""
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", ["overall_quality"])]}],
                      {"g1": 1})
    port = free_port()
    run = Running(tmp_path, port, str(conf), "mephisto.architect.hostname=127.0.0.1",
                  "mephisto.architect.public_url=https://eval.example.org/")
    try:
        link = run.wait_for(r"  (\S+worker_id=worker_1\S*)").group(1)
        assert re.fullmatch(r"https://eval\.example\.org/\?worker_id=worker_1&assignment_id=1"
                            r"&sig=[0-9a-f]+", link), link
        run.wait_for(r"dashboard: https://eval\.example\.org/dashboard ")
        url = f"http://127.0.0.1:{port}/api/health"
        assert http_get(url, headers={"Host": "eval.example.org"}).status_code == 200
        assert http_get(url, headers={"Host": "evil.example.com"}).status_code == 421
    finally:
        run.process.kill()
        run.process.wait()


@pytest.mark.parametrize("trusted, seen", [
    (None, ("127.0.0.1", "http")),  # uvicorn's default would believe loopback: we do not
    (["127.0.0.1"], ("203.0.113.7", "https")),
    (["10.0.0.0/8"], ("127.0.0.1", "http")),  # the peer is not that proxy
])
def test_forwarded_headers_only_from_trusted_proxies(served, trusted, seen):
    app = create_app(served)

    async def peer(request: Request) -> JSONResponse:
        return JSONResponse({"addr": request.client.host, "scheme": request.url.scheme})

    app.router.routes.insert(0, Route("/api/peer", peer))
    with serving(app, trusted_proxies=trusted) as base:
        answer = http_get(f"{base}/api/peer", headers={
            "X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}).json()
    assert (answer["addr"], answer["scheme"]) == seen


def _raw_answer(port: int, data: bytes) -> tuple[str, dict[str, str]]:
    """Send `data` and read the answer until the server closes: (status line, headers)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        received = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                received += chunk
    head = received.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    return head[0], {k.lower(): v.strip() for k, _, v in (line.partition(":")
                                                           for line in head[1:])}


def test_the_servers_own_answers_carry_the_security_headers(served, monkeypatch):
    """408, 413 and 400 come before a route sees the request (the body's deadline and size,
    the address), or from uvicorn itself (a request it cannot parse): each carries the
    security headers of every other answer, and ours are JSON errors."""
    monkeypatch.setattr(guard, "BODY_SECONDS", 1.0)
    with live_server(served) as base:
        port = int(base.rsplit(":", 1)[1])
        head = b"POST /api/claim HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for data, status, json_error in (
                (head + b"Content-Length: 10\r\n\r\n{", "408", True),
                (head + b"Content-Length: 3000000\r\n\r\n{", "413", True),
                (head + b"Transfer-Encoding: chunked\r\n\r\n"
                 + b"100000\r\n" + b" " * 0x100000 + b"\r\n" + b"100000\r\n"
                 + b" " * 0x100000 + b"\r\n0\r\n\r\n", "413", True),
                (b"GET /api/units/a%00b HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Connection: close\r\n\r\n", "400", True),
                (b"NOT HTTP AT ALL\r\n\r\n", "400", False)):
            line, headers = _raw_answer(port, data)
            assert line.startswith(f"HTTP/1.1 {status}"), (status, line)
            assert (headers["content-type"] == "application/json") == json_error, line
            for name, value in SECURITY_HEADERS.items():
                assert headers[name.lower()] == value, (status, name)
