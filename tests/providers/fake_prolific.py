"""A fake Prolific API on 127.0.0.1, in a thread, answering in Prolific's documented shapes
(studies, submissions and their transitions, bulk bonus payments). `fail` makes the next calls
to a route fail: with an HTTP error ("http": 503, or a status code), or by answering too late
("slow": the call takes effect but the client has given up, so it cannot know)."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

from flask import Flask, abort, jsonify, request
from werkzeug.serving import make_server

SLOW_SECONDS = 1.5


class FakeProlific:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.studies: dict[str, dict[str, Any]] = {}
        self.submissions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.paid: list[str] = []
        # route -> ["http" | "slow" | an HTTP status]
        self.fail: dict[str, list[str | int]] = defaultdict(list)
        self.app = self._app()
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}/api/v1/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()

    def count(self, method: str, prefix: str) -> int:
        return sum(1 for m, p, _ in self.calls if m == method and p.startswith(prefix))

    def _failing(self, route: str) -> None:
        if self.fail[route]:
            failure = self.fail[route].pop(0)
            if failure == "slow":
                time.sleep(SLOW_SECONDS)
                return
            abort(503 if failure == "http" else failure)

    def _app(self) -> Flask:
        app = Flask("fake_prolific")

        @app.before_request
        def _record():  # type: ignore[no-untyped-def]
            if request.headers.get("Authorization") != "Token test-token":
                return jsonify({"error": "bad token"}), 401
            self.calls.append((request.method, request.path.removeprefix("/api/v1/"),
                               request.get_json(silent=True)))
            return None

        @app.post("/api/v1/studies/")
        def create_study():  # type: ignore[no-untyped-def]
            study = {**request.get_json(), "id": f"study{len(self.studies) + 1}",
                     "status": "UNPUBLISHED"}
            self.studies[study["id"]] = study
            return jsonify(study), 201

        @app.post("/api/v1/studies/<study_id>/transition/")
        def study_transition(study_id):  # type: ignore[no-untyped-def]
            self.studies[study_id]["status"] = "ACTIVE"
            return jsonify(self.studies[study_id])

        @app.get("/api/v1/studies/<study_id>/")
        def get_study(study_id):  # type: ignore[no-untyped-def]
            return jsonify(self.studies[study_id])

        @app.patch("/api/v1/studies/<study_id>/")
        def update_study(study_id):  # type: ignore[no-untyped-def]
            self.studies[study_id].update(request.get_json())
            return jsonify(self.studies[study_id])

        @app.post("/api/v1/submissions/<submission_id>/request-return/")
        def request_return(submission_id):  # type: ignore[no-untyped-def]
            reasons = request.get_json().get("request_return_reasons")
            if not isinstance(reasons, list) or not reasons:
                return jsonify({"error": "request_return_reasons is required"}), 400
            return jsonify({"id": submission_id, "status": "RETURNED",
                            "return_requested": "2026-11-23T00:00:00Z"})

        @app.get("/api/v1/studies/<study_id>/submissions/")
        def list_submissions(study_id):  # type: ignore[no-untyped-def]
            return jsonify({"results": self.submissions[study_id], "_links": {"next": None}})

        @app.post("/api/v1/submissions/<submission_id>/transition/")
        def transition(submission_id):  # type: ignore[no-untyped-def]
            self._failing("transition")
            body = request.get_json()
            if body["action"] == "REJECT" and (len(body.get("message", "")) < 100
                                               or not body.get("rejection_category")):
                return jsonify({"error": "message too short"}), 400
            return jsonify({"id": submission_id, "status": "PROCESSING"})

        @app.post("/api/v1/submissions/bonus-payments/")
        def set_up_bonus():  # type: ignore[no-untyped-def]
            self._failing("bonus-setup")
            body = request.get_json()
            number = self.count("POST", "submissions/bonus-payments/")
            return jsonify({"id": f"bonus{number}", "study": body["study_id"], "amount": 50,
                            "fees": 17, "total_amount": 67}), 201

        @app.post("/api/v1/bulk-bonus-payments/<bonus_id>/pay/")
        def pay(bonus_id):  # type: ignore[no-untyped-def]
            self._failing("pay")
            self.paid.append(bonus_id)
            return "", 202

        return app
