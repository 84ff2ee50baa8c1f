"""The least a vscodelm -> ACP translator can do per turn, as a floor for `bench_turn_overhead.py`.

    python tests/bench/floor_translator.py [--parse]

It speaks just enough of the vscodelm protocol on stdin/stdout for the benchmark's client: the
first `lm/provideLanguageModelChatResponse` starts the agent its `agent` names (ACP `initialize`
and `session/new`); each request becomes one `session/prompt` of its last message's text; each
`agent_message_chunk` becomes an `lm/responsePart`; the prompt's result answers the request. No
history, routing, rules, events or models. Without `--parse` it does not even decode the request
line (it finds the id and the last text by searching the bytes, correct only for the benchmark's
own requests): what is left is the two extra pipe hops and an asyncio loop's turn per message.
With `--parse` it decodes each request line whole with `json.loads`, as a translator without a
cache of the conversation must.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any


def dumps(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class Translator:
    def __init__(self, parse: bool) -> None:
        self.parse = parse
        self.loop = asyncio.get_running_loop()
        self.agent: asyncio.subprocess.Process | None = None
        self.session_id = ""
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.request_id: Any = None

    async def read_agent(self, stdout: asyncio.StreamReader) -> None:
        while line := await stdout.readline():
            message = json.loads(line)
            if message.get("method") == "session/update":
                update = message["params"]["update"]
                if update.get("sessionUpdate") == "agent_message_chunk":
                    part = {"type": "text", "value": update["content"]["text"]}
                    params = {"requestId": self.request_id, "part": part}
                    os.write(
                        1, dumps({"jsonrpc": "2.0", "method": "lm/responsePart", "params": params})
                    )
            elif message.get("id") in self.pending:
                self.pending.pop(message["id"]).set_result(message.get("result"))

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        assert self.agent is not None and self.agent.stdin is not None
        self.next_id += 1
        future = self.pending[self.next_id] = self.loop.create_future()
        self.agent.stdin.write(
            dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        )
        return await future

    async def start(self, agent: dict[str, Any]) -> None:
        env = {**os.environ, **{e["name"]: e["value"] for e in agent.get("env", [])}}
        self.agent = await asyncio.create_subprocess_exec(
            agent["command"], *agent["args"], stdin=-1, stdout=-1, env=env, limit=1 << 26
        )
        assert self.agent.stdout is not None
        self.loop.create_task(self.read_agent(self.agent.stdout))
        await self.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        new = await self.call("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        self.session_id = new["sessionId"]

    async def turn(self, line: bytes) -> None:
        if self.parse or self.agent is None:
            request = json.loads(line)
            rid, text = request["id"], request["params"]["messages"][-1]["content"][0]["value"]
            if self.agent is None:
                await self.start(request["params"]["agent"])
        else:
            at = line.index(b'"id": ') + 6
            rid = int(line[at : line.index(b",", at)])
            # the last message's text: the last `"value"` before the agent (whose env has some)
            at = line.rindex(b'"value": "', 0, line.rindex(b'"agent": ')) + 10
            text = line[at : line.index(b'"', at)].decode()
        self.request_id = rid
        prompt = [{"type": "text", "text": text}]
        await self.call("session/prompt", {"sessionId": self.session_id, "prompt": prompt})
        os.write(1, dumps({"jsonrpc": "2.0", "id": rid, "result": {}}))


async def main() -> None:
    translator = Translator(parse="--parse" in sys.argv[1:])
    reader = asyncio.StreamReader(limit=1 << 26)
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        await translator.turn(line)
    if translator.agent is not None and translator.agent.stdin is not None:
        translator.agent.stdin.close()
        await translator.agent.wait()


if __name__ == "__main__":
    asyncio.run(main())
