"""A server listening on every interface (`hostname: 0.0.0.0`) without a `public_url` prints
links to this machine's real address (never `localhost`, which other machines cannot reach),
and answers requests made through them."""

from __future__ import annotations

import re
import signal
from urllib.parse import urlsplit

from helpers import Running, free_port, http_get, http_post, write_task

from collection_and_annotations.providers.local import is_loopback

LINES = [{"data": [{"dialogue_id": "d0", "group_id": "g0", "annotation_tasks": ["issues"],
                    "turns": [["user", "hi"], ["system", "hello"]]}]}]


def test_links_and_host_check_use_the_machines_address(tmp_path):
    conf = write_task(tmp_path, LINES, {"g0": 1})
    port = free_port()
    server = Running(tmp_path, port, str(conf), "mephisto.architect.hostname=0.0.0.0")
    try:
        link = server.wait_for(r"(http://\S+/\?worker_id=worker_1\S+)").group(1)
        server.wait_for("press Ctrl-C to stop")
        host = urlsplit(link).hostname
        assert not is_loopback(host), link  # e.g. not getfqdn()'s "localhost"
        assert "&sig=" in link  # reachable beyond loopback: links are signed
        page = http_get(link, timeout=10)
        assert page.status_code == 200, page.text
        query = dict(part.split("=", 1) for part in urlsplit(link).query.split("&"))
        claimed = http_post(f"http://{host}:{port}/api/claim", json=query, timeout=10)
        assert claimed.status_code == 200, claimed.text
        token = re.search(r"token: ([0-9a-f]+)", "".join(server.lines)).group(1)
        progress = http_get(f"http://{host}:{port}/api/requester/progress", timeout=10,
                            headers={"Authorization": f"Bearer {token}"})
        assert progress.status_code == 200, progress.text
    finally:
        server.process.send_signal(signal.SIGINT)
        server.process.wait(30)
