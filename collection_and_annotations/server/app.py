"""Flask application factory: the worker page, the worker API and the requester API."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.errors import UserError
from collection_and_annotations.server import (
    requester_dashboard,  # noqa: F401 (its routes)
    requester_judges,  # noqa: F401 (its routes)
    requester_quals,  # noqa: F401 (its routes)
    requester_review,  # noqa: F401 (its routes)
)
from collection_and_annotations.server.requester_api import requester_api
from collection_and_annotations.server.security import HostCheck, harden
from collection_and_annotations.server.static_files import IMMUTABLE, REVALIDATE, StaticFiles
from collection_and_annotations.server.worker_api import worker_api

STATIC_DIR = Path(__file__).resolve().parent / "static"


def check_frontend_built(static_dir: Path = STATIC_DIR) -> None:
    if not (static_dir / "index.html").is_file():
        raise UserError("the worker page is not built (no server/static/index.html); run "
                        "./setup.sh, or: cd frontend && npm ci && npm run build", static_dir)


def create_app(
    served: ServedTask, static_dir: Path = STATIC_DIR, allowed_hosts: Iterable[str] | None = None
) -> Flask:
    """The app for one run; `allowed_hosts` (conf: mephisto.architect.allowed_hosts) adds host
    names to loopback and the public URL's host, e.g. a proxy's; `*` turns the check off."""
    app = Flask(__name__, static_folder=None)
    harden(app, HostCheck(served.provider.public_url, allowed_hosts),
           getattr(served.provider, "platform_origins", ()))
    app.config["SERVED_TASK"] = served
    app.config["MAX_CONTENT_LENGTH"] = 2_000_000
    app.json.sort_keys = False
    app.register_blueprint(worker_api)
    app.register_blueprint(requester_api)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):  # type: ignore[no-untyped-def]
        return jsonify({"error": exc.description}), exc.code

    @app.get("/api/health")
    def health():  # type: ignore[no-untyped-def]
        return jsonify({"ok": True, "task": served.task_name, "run_id": served.run_id})

    static = StaticFiles(static_dir)

    @app.get("/")
    def index():  # type: ignore[no-untyped-def]
        return static.response("index.html", REVALIDATE)

    @app.get("/dashboard")
    def dashboard():  # type: ignore[no-untyped-def]
        """The requester's page (docs/dashboard.md); a build older than it has none."""
        if not (static_dir / "dashboard.html").is_file():
            return jsonify({"error": "the requester dashboard is not built (no "
                                     "server/static/dashboard.html); rebuild the frontend: "
                                     "cd frontend && npm run build"}), 404
        return static.response("dashboard.html", REVALIDATE)

    @app.get("/assets/<path:name>")
    def assets(name: str):  # type: ignore[no-untyped-def]
        return static.response(f"assets/{name}", IMMUTABLE)

    return app
