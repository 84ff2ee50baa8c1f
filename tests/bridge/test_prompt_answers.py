"""A turn's `session/prompt` and its answer, however the agent answers (real endpoint subprocess,
a real agent process speaking raw JSON-RPC lines: `tests/agents/answers_agent.py`).

The endpoint writes a turn's prompt itself, in the step that routed its request, and takes the
answer before the ACP SDK would: each way an answer can go must end the request as the SDK's call
did — an error answer or a malformed result fails that request with a clear message and the
endpoint serves the next one; an agent that stops writing fails it rather than leaving it
waiting; whatever the agent sent before its answer is in the reply, even in the same read; and
what the agent reads is a `session/prompt` the SDK's own model accepts (checked on a tap of the
agent's stdin), as the SDK would have written it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.support.lmclient import REPO, assistant, echo_agent, user

ECHO = [sys.executable, str(REPO / "tests" / "agents" / "echo_agent.py")]

ANSWERS_AGENT = str(REPO / "tests" / "agents" / "answers_agent.py")


def answers_agent() -> dict[str, Any]:
    return {
        "id": "answers",
        "name": "Answers",
        "command": sys.executable,
        "args": [ANSWERS_AGENT],
        "env": [],
    }


async def test_an_error_answer_fails_the_request_with_the_agents_message_and_the_next_is_served(lm):
    failed = await lm.chat([user("error")], agent=answers_agent(), timeout=60)
    assert failed.error is not None
    assert "the model is overloaded" in failed.error["message"], failed.error
    # That session is gone; the agent answers the next conversation in a new one.
    ok = await lm.chat([user("hello")], agent=answers_agent(), timeout=60)
    assert ok.error is None, ok.error
    assert ok.text == "ECHO: hello"


async def test_an_answer_that_is_no_prompt_response_fails_the_request_and_the_endpoint_serves_on(
    lm,
):
    failed = await lm.chat([user("invalid")], agent=answers_agent(), timeout=60)
    assert failed.error is not None
    assert "stopReason" in failed.error["message"], failed.error
    ok = await lm.chat([user("still here")], agent=echo_agent(), timeout=60)
    assert ok.text == "ECHO: still here"


async def test_an_agent_that_closes_its_output_mid_turn_fails_the_request_rather_than_hang(lm):
    # The agent stays alive, its stdout closed: nothing will ever answer the prompt.
    failed = await lm.chat([user("close")], agent=answers_agent(), timeout=60)
    assert failed.error is not None
    assert "Connection closed" in failed.error["message"], failed.error
    ok = await lm.chat([user("next")], agent=echo_agent(), timeout=60)
    assert ok.text == "ECHO: next"


async def test_an_answer_whose_id_is_echoed_as_a_float_still_answers_the_prompt(lm):
    # JSON has one number type: the SDK finds its calls by a dict lookup, where 7.0 finds 7.
    reply = await lm.chat([user("float id")], agent=answers_agent(), timeout=60)
    assert reply.error is None, reply.error
    assert reply.text == "ECHO: float id"


async def test_an_update_read_in_one_block_with_the_answer_is_in_the_reply(lm):
    reply = await lm.chat([user("tool then end")], agent=answers_agent(), timeout=60)
    assert reply.error is None, reply.error
    assert "late tool" in reply.text, reply.parts
    assert reply.order[-2:] == ["complete", "response"]
    # The conversation goes on in the same session.
    history = [user("tool then end"), assistant(*reply.parts), user("more")]
    more = await lm.chat(history, agent=answers_agent(), timeout=60)
    assert more.text == "ECHO: more"


async def test_the_prompt_on_the_wire_is_an_acp_prompt_request_with_the_replay_marked(tmp_path, lm):
    """What the agent reads (tapped on its stdin) is a `session/prompt` the ACP SDK's own model
    accepts: the earlier turns replayed in a first block marked `_meta.symposium.replay`, the
    new prompt last, under an integer id, answered once."""
    from acp.schema import PromptRequest

    log = tmp_path / "tap.jsonl"
    tapped = {
        "id": "echo",
        "name": "Echo",
        "command": sys.executable,
        "args": [str(REPO / "tests" / "agents" / "acp_tap.py"), str(log), "--", *ECHO],
        "env": [],
    }
    # A conversation that comes with history: a new session, its history replayed.
    history = [user("earlier"), assistant("said before"), user("now")]
    reply = await lm.chat(history, agent=tapped, timeout=60)
    assert reply.error is None, reply.error
    more = await lm.chat([*history, reply.as_assistant(), user("then")], agent=tapped)
    assert more.text == "ECHO: then"
    sent = [json.loads(line)["msg"] for line in log.read_text().splitlines()]
    prompts = [m for m in sent if isinstance(m, dict) and m.get("method") == "session/prompt"]
    assert [type(m["id"]) for m in prompts] == [int, int]
    assert prompts[0]["id"] != prompts[1]["id"]
    request = PromptRequest.model_validate(prompts[0]["params"])
    assert request.prompt[-1].text == "now"
    assert request.prompt[0].field_meta == {"symposium": {"replay": True}}
    assert "said before" in request.prompt[0].text
    # The next turn continues the session: its prompt alone, nothing replayed.
    following = PromptRequest.model_validate(prompts[1]["params"])
    assert [b.text for b in following.prompt] == ["then"]
    for prompt in prompts:
        answers = [m for m in sent if isinstance(m, dict) and m.get("id") == prompt["id"]]
        assert [("result" in m) for m in answers] == [False, True]  # the request, its answer


async def test_updates_nested_past_the_decoders_depth_are_dropped_and_the_turn_ends_with_the_rest(
    lm,
):
    """An agent's line no JSON decoder can read (nested 100,000 deep, and 3,000 deep in a read
    with the rest of the turn) costs that line, never the connection the turn waits on."""
    reply = await lm.chat([user("deep")], agent=answers_agent(), timeout=60)
    assert reply.error is None, reply.error
    assert reply.text == "before after"
    history = [user("deep"), assistant(*reply.parts), user("more")]
    more = await lm.chat(history, agent=answers_agent(), timeout=60)
    assert more.text == "ECHO: more"


def test_the_prompts_params_are_the_bytes_the_json_encoder_writes():
    """`prompt_params` writes plain text blocks from a template: for every prompt, the very bytes
    `json.dumps(..., separators=(",", ":"))` gives, escapes and all; a block of another shape (a
    replay's `_meta`, keys in another order, a text that is no string) takes the encoder."""
    from bridge.render import REPLAY_META
    from bridge.sessions.agent import prompt_params

    texts = ["hi", "", 'quote " backslash \\ newline \n tab \t', "café ☕ 日本", "\x00\x1f\x7f"]
    texts += ["lone \ud800 surrogate", "\u2028\u2029", "😀" * 3]
    cases: list[tuple[Any, list[dict[str, Any]]]] = [
        ("s-1", []),
        *(("s-1", [{"type": "text", "text": t}]) for t in texts),
        ("sé\n", [{"type": "text", "text": t} for t in texts]),
        (
            "s-1",
            [{"type": "text", "text": "ctx", "_meta": REPLAY_META}, {"type": "text", "text": "x"}],
        ),
        ("s-1", [{"text": "order", "type": "text"}]),
        ("s-1", [{"type": "text", "text": 1}]),
        ("s-1", [{"type": "image", "text": "x"}]),
        ("s-1", [{"type": "text", "data": "x"}]),
        (None, [{"type": "text", "text": "no session"}]),
    ]
    for session_id, blocks in cases:
        expected = json.dumps({"sessionId": session_id, "prompt": blocks}, separators=(",", ":"))
        assert prompt_params(session_id, blocks) == expected.encode("utf-8"), (session_id, blocks)


def test_a_text_parts_line_names_its_request_as_the_json_encoder_does():
    """The template a request's text parts are written from names the request's id as JSON
    does: an integer as its digits, a string quoted and escaped, `true` never as `1`."""
    from bridge.vscodelm.endpoint import PartWriter

    class Peer:
        def __init__(self) -> None:
            self.lines: list[bytes] = []

        def send_raw(self, line: bytes) -> None:
            self.lines.append(line)

        def notify(self, method: str, params: Any) -> None:
            raise AssertionError("a text part is written from its template")

    for request_id in (0, 7, -3, 10**30, "r-1", 'q"\\é', True, False):
        peer = Peer()
        PartWriter(peer, request_id).write({"type": "text", "value": "hé"})  # type: ignore[arg-type]
        (line,) = peer.lines
        assert json.loads(line) == {
            "jsonrpc": "2.0",
            "method": "lm/responsePart",
            "params": {"requestId": request_id, "part": {"type": "text", "value": "hé"}},
        }
        assert b'"requestId":' + json.dumps(request_id).encode() + b',"part"' in line, request_id
