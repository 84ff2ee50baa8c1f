from __future__ import annotations

from typing import Any

import pytest

from bridge.core import Bridge
from bridge.protocol import Message
from bridge.sessions import ResponseStream

ELIZA_AGENT = {"eliza": {"deterministic": True}}


def text_message(role: str, text: str) -> Message:
    return Message.model_validate({"role": role, "content": [{"type": "text", "value": text}]})


class Conversation:
    """A client of an in-process bridge connection that, like VS Code, resends the whole history."""

    def __init__(self, bridge: Bridge, kind: str = "chat") -> None:
        self.core = bridge.open_connection(kind)
        self.ids = 0

    @property
    def name(self) -> str:
        return self.core.name

    async def send(self, messages: list[Message]) -> list[dict[str, Any]]:
        """One request; returns the parts streamed back (after the request finished)."""
        self.ids += 1
        parts: list[dict[str, Any]] = []
        request = self.core.make_request(self.ids, ELIZA_AGENT, messages, tools=[])
        stream = ResponseStream(self.ids, parts.append)
        await self.core.chat(request, stream)
        return parts

    @staticmethod
    def reply(parts: list[dict[str, Any]]) -> Message:
        return Message.model_validate({"role": "assistant", "content": parts})


@pytest.fixture
async def bridge(tmp_path):
    b = Bridge(cwd=str(tmp_path), idle_timeout=None)
    yield b
    await b.close()


async def new_commit_cancel(conv: Conversation) -> dict[str, Any]:
    """hello → (reply kept) ask permission → (answer edited by the user) why: a new session, a
    commit and a cancel; returns what was said."""
    u1 = text_message("user", "hello")
    r1 = conv.reply(await conv.send([u1]))
    u2 = text_message("user", "ask permission to run the tests")
    r2 = conv.reply(await conv.send([u1, r1, u2]))
    edited = text_message("assistant", "I ran them all, everything passed.")
    u3 = text_message("user", "why")
    r3 = conv.reply(await conv.send([u1, r1, u2, edited, u3]))
    return {"u1": u1, "r1": r1, "u2": u2, "r2": r2, "edited": edited, "u3": u3, "r3": r3}
