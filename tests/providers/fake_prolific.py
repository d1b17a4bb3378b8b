"""A fake Prolific API on 127.0.0.1, in a thread, answering in Prolific's documented shapes
(studies, submissions and their transitions, bulk bonus payments). `fail` makes the next calls
to a route fail: with an HTTP error ("http": 503, or a status code), or by answering too late
("slow": the call takes effect but the client has given up, so it cannot know)."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from collection_and_annotations.server.http import listening_socket

SLOW_SECONDS = 1.5
Body = dict[str, Any]


class FakeProlific:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.studies: dict[str, dict[str, Any]] = {}
        self.submissions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.paid: list[str] = []
        # route -> ["http" | "slow" | an HTTP status]
        self.fail: dict[str, list[str | int]] = defaultdict(list)
        self._open = 0  # calls being answered
        self._answered = threading.Condition()
        sock = listening_socket("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}/api/v1/"
        self.server = uvicorn.Server(uvicorn.Config(self._app(), log_config=None,
                                                    log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    def settle(self, timeout: float = 10) -> None:
        """Wait until every call it got is answered, the slow ones too (their client gave up
        on them long before), so that what they did is in `calls` and `paid`."""
        with self._answered:
            assert self._answered.wait_for(lambda: not self._open, timeout), "a call hangs"

    def count(self, method: str, prefix: str) -> int:
        return sum(1 for m, p, _ in self.calls if m == method and p.startswith(prefix))

    async def _failing(self, route: str) -> None:
        if self.fail[route]:
            failure = self.fail[route].pop(0)
            if failure == "slow":
                await anyio.sleep(SLOW_SECONDS)
                return
            raise HTTPException(503 if failure == "http" else int(failure))

    def _route(self, path: str, method: str, handler: Any) -> Route:
        """`handler(body, **path parameters)` behind the token check, each call recorded."""

        async def endpoint(request: Request) -> Response:
            if request.headers.get("Authorization") != "Token test-token":
                return JSONResponse({"error": "bad token"}, 401)
            raw = await request.body()
            body = json.loads(raw) if raw else None
            self.calls.append((request.method, request.url.path.removeprefix("/api/v1/"),
                               body))
            with self._answered:
                self._open += 1
            try:
                answer = await handler(body, **request.path_params)
            finally:
                with self._answered:
                    self._open -= 1
                    self._answered.notify_all()
            if isinstance(answer, Response):
                return answer
            content, status = answer if isinstance(answer, tuple) else (answer, 200)
            return JSONResponse(content, status)

        return Route(f"/api/v1/{path}", endpoint, methods=[method])

    def _app(self) -> Starlette:
        async def create_study(body: Body) -> Any:
            study = {**body, "id": f"study{len(self.studies) + 1}", "status": "UNPUBLISHED"}
            self.studies[study["id"]] = study
            return study, 201

        async def study_transition(_body: Body, study_id: str) -> Any:
            self.studies[study_id]["status"] = "ACTIVE"
            return self.studies[study_id]

        async def get_study(_body: Body, study_id: str) -> Any:
            return self.studies[study_id]

        async def update_study(body: Body, study_id: str) -> Any:
            self.studies[study_id].update(body)
            return self.studies[study_id]

        async def request_return(body: Body, submission_id: str) -> Any:
            reasons = body.get("request_return_reasons")
            if not isinstance(reasons, list) or not reasons:
                return {"error": "request_return_reasons is required"}, 400
            return {"id": submission_id, "status": "RETURNED",
                    "return_requested": "2026-11-23T00:00:00Z"}

        async def list_submissions(_body: Body, study_id: str) -> Any:
            return {"results": self.submissions[study_id], "_links": {"next": None}}

        async def transition(body: Body, submission_id: str) -> Any:
            await self._failing("transition")
            if body["action"] == "REJECT" and (len(body.get("message", "")) < 100
                                               or not body.get("rejection_category")):
                return {"error": "message too short"}, 400
            return {"id": submission_id, "status": "PROCESSING"}

        async def set_up_bonus(body: Body) -> Any:
            await self._failing("bonus-setup")
            number = self.count("POST", "submissions/bonus-payments/")
            return {"id": f"bonus{number}", "study": body["study_id"], "amount": 50,
                    "fees": 17, "total_amount": 67}, 201

        async def pay(_body: Body, bonus_id: str) -> Any:
            await self._failing("pay")
            self.paid.append(bonus_id)
            return Response(status_code=202)

        return Starlette(routes=[
            self._route("studies/", "POST", create_study),
            self._route("studies/{study_id}/transition/", "POST", study_transition),
            self._route("studies/{study_id}/", "GET", get_study),
            self._route("studies/{study_id}/", "PATCH", update_study),
            self._route("submissions/{submission_id}/request-return/", "POST", request_return),
            self._route("studies/{study_id}/submissions/", "GET", list_submissions),
            self._route("submissions/{submission_id}/transition/", "POST", transition),
            self._route("submissions/bonus-payments/", "POST", set_up_bonus),
            self._route("bulk-bonus-payments/{bonus_id}/pay/", "POST", pay),
        ])
