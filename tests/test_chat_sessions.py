"""A bot session lives as long as its chat: a chat that times out releases it."""

from __future__ import annotations

import time

from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf

from collection_and_annotations.engine.chat import expire_idle_chats


def test_the_bot_session_of_a_chat_that_timed_out_is_closed(tmp_path, database_url):
    bot = ScriptedBot("alpha")
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:1", ["alpha"],
                                                  max_resp_time=1), {"alpha": bot},
                        database_url)
    try:
        unit, token = server.claim("w1")
        with event_stream(server.base, unit, token) as stream:
            stream.next("state")
            server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
            stream.next("message")  # the bot answered: its session is open
        assert (bot.sessions, bot.closed) == (1, 0)
        time.sleep(1.2)
        with server.db.session() as session:  # the launcher's sweep
            assert expire_idle_chats(session, server.served.run_id) == 1
        deadline = time.monotonic() + 5
        while bot.closed == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bot.closed == 1
    finally:
        server.stop()
