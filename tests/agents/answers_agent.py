"""An ACP agent that answers `session/prompt` the ways the SDK-based test agents cannot: raw
JSON-RPC lines on stdio, each answer written exactly as the test needs it.

`python tests/agents/answers_agent.py`. `initialize` and `session/new` are answered normally.
A prompt's text says how it is answered:
- `error`: one chunk `failing `, then a JSON-RPC error answer (-32000, "the model is overloaded");
- `invalid`: one chunk, then a result that is no `PromptResponse` (`stopReason` 42);
- `close`: one chunk, then the agent closes its stdout and stays alive until its stdin ends;
- `float id`: `ECHO: float id`, its answer under the request's id written as a float (`1.0`);
- `tool then end`: the start of a tool call titled `late tool` and the prompt's answer, in one
  write (the bridge reads them in one block);
- `deep`: a chunk `before `; a `session/update` nested 100,000 deep (~200 KB: past any JSON
  decoder's depth, and longer than a read); in one write, one nested 3,000 deep (a short line,
  read with what follows it), the chunk `after` and the prompt's answer;
- anything else: `ECHO: <text>` in one chunk.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def update(session_id: str, update: dict[str, Any]) -> bytes:
    return line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
    )


def chunk(session_id: str, text: str) -> bytes:
    return update(
        session_id,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
    )


def answer(rid: Any, result: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": rid, "result": result})


END = {"stopReason": "end_turn"}


def nested(session_id: str, depth: int) -> bytes:
    """A `session/update` whose update is an array nested `depth` deep."""
    head = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":'
    return head % session_id.encode() + b"[" * depth + b"]" * depth + b"}}\n"


def main() -> int:
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method == "initialize":
            out.write(answer(rid, {"protocolVersion": params.get("protocolVersion", 1)}))
        elif method == "session/new":
            out.write(answer(rid, {"sessionId": "answers-1"}))
        elif method == "session/prompt":
            sid = params["sessionId"]
            text = " ".join(b.get("text", "") for b in params["prompt"]).strip()
            if text == "error":
                error = {"code": -32000, "message": "the model is overloaded"}
                out.write(
                    chunk(sid, "failing ") + line({"jsonrpc": "2.0", "id": rid, "error": error})
                )
            elif text == "invalid":
                out.write(chunk(sid, "odd ") + answer(rid, {"stopReason": 42}))
            elif text == "close":
                out.write(chunk(sid, "closing "))
                out.flush()
                os.close(1)
                for _ in sys.stdin.buffer:  # alive, not answering, until the bridge lets go
                    pass
                return 0
            elif text == "deep":
                out.write(chunk(sid, "before "))
                out.flush()
                out.write(nested(sid, 100_000))
                out.flush()
                out.write(nested(sid, 3_000) + chunk(sid, "after") + answer(rid, END))
            elif text == "float id":
                out.write(
                    chunk(sid, "ECHO: float id") + answer(float(rid), {"stopReason": "end_turn"})
                )
            elif text == "tool then end":
                start = {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "late-1",
                    "title": "late tool",
                    "kind": "read",
                    "status": "pending",
                }
                out.write(update(sid, start) + answer(rid, {"stopReason": "end_turn"}))
            else:
                out.write(chunk(sid, f"ECHO: {text}") + answer(rid, {"stopReason": "end_turn"}))
        elif rid is not None and method is not None:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            out.write(line({"jsonrpc": "2.0", "id": rid, "error": error}))
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
