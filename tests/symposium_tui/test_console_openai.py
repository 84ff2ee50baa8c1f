"""The console serving the OpenAI-compatible API beside its own socket (`--openai HOST:PORT`):
the real `openai` SDK chats with Eliza through the console's in-process bridge, and a permission
the agent asks for on that path is a card in the console, answered with a key."""

from __future__ import annotations

import threading
import time

import pytest

from tests.support.openai_server import free_port
from tests.support.tmux import TMUX, Terminal

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


def test_console_serves_openai_clients_and_their_approvals_are_cards(tmp_path):
    import openai

    term = Terminal(tmp_path)
    port = free_port()
    try:
        term.start("console", "--no-mouse", "--openai", f"127.0.0.1:{port}")
        term.wait_for("No pending approvals")
        client = openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=30
        )
        models = None
        for _ in range(600):  # the bridge starts right after the first frame (a 60 s limit)
            try:
                models = client.models.list()
                break
            except openai.APIConnectionError:
                time.sleep(0.1)
        assert models is not None and "eliza" in [m.id for m in models.data]

        reply = client.chat.completions.create(
            model="eliza", messages=[{"role": "user", "content": "Hello"}]
        )
        assert reply.choices[0].message.content

        result: dict[str, str] = {}

        def ask() -> None:
            r = client.chat.completions.create(
                model="eliza",
                messages=[{"role": "user", "content": "ask permission to rotate the keys"}],
            )
            result["text"] = r.choices[0].message.content or ""

        worker = threading.Thread(target=ask)
        worker.start()
        term.wait_for("⚠ rotate the keys")  # the console is on its Approvals tab: the card itself
        term.wait_until_gone("(arming…)")
        term.keys("a")
        worker.join(30)
        assert result["text"].endswith("Permission granted (allow_once). I ran rotate the keys.")
    finally:
        term.keys("C-q")
        term.close()
