"""One request being answered by the core, independent of the HTTP connection(s) reading it.

The core writes response parts into an `Exchange`; one or more HTTP handlers (*consumers*) read
them. Decoupling the two is what lets

* a client's retry of the same request — marked as one: `x-stainless-retry-count` ≥ 1 with the same
  body, or the same `Idempotency-Key` — attach to the exchange still running, or read the answer of
  one that completed while the client was away, instead of prompting the agent again (a request
  not marked as a retry is always a request of its own, even with a byte-identical body);
* a disconnect cancel the agent's turn only when nobody reads the exchange any more: at once for
  a stream whose response had started (the `openai` SDK never retries those), after a short grace
  for a request an SDK may still retry;
* a slow streaming reader get many parts per SSE event: a consumer takes every part written since
  its last write, so the slower it drains, the more each event carries.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from bridge.openai.errors import OpenAIError, agent_failed, agents_busy, cancelled
from bridge.sessions import RequestCancelled, ResponseStream, SessionFailed

log = logging.getLogger(__name__)

_ids = itertools.count(1)


class Exchange:
    """Parts written by the core for one request; `done` once the core returned."""

    def __init__(
        self,
        key: bytes | None,
        params: Any,
        *,
        budget: int | None = None,
        max_tool_calls: int = 0,
        stop: list[str] | tuple[str, ...] = (),
        output_format: Any = None,
    ) -> None:
        self.seq = next(_ids)
        self.key = key
        self.body_key = (
            key  # the request body's fingerprint (differs from `key` for an Idempotency-Key)
        )
        self.params = params
        self.request_id = f"openai-{self.seq}"
        self.created = int(time.time())
        self.parts: list[dict[str, Any]] = []
        self.listeners: list[asyncio.Event] = []
        self.done = False
        self.error: OpenAIError | None = None
        self.limited = False  # max_tokens / max_tool_rounds reached: finish_reason "length"
        self.cancelled = False
        self.cancel_reason: str | None = None
        self.consumers = 0
        self.finished_at: float | None = None
        self.cancel_handle: asyncio.TimerHandle | None = None
        self.on_done: list[Callable[[Exchange], None]] = []
        self.core: Any = None
        self.task: asyncio.Task[None] | None = None
        self.response_id: str | None = None  # the Responses API's id, once it is encoded
        self.ended = asyncio.Event()  # set once `done`
        self._budget = budget  # UTF-8 bytes of text left (max_tokens × 4)
        self._max_tool_calls = max_tool_calls
        self._tool_calls = 0
        # `stop`: the text is cut at the first stop sequence; the last len(longest)-1 characters
        # are held back until the next text shows they do not start one.
        self._stops = [s for s in stop if s]
        self._hold = max((len(s) for s in self._stops), default=1) - 1
        self._held = ""
        self.stopped = False  # a stop sequence ended the answer: finish_reason "stop"
        # structured output: the answer's text is held until it is validated (see structured.py)
        self.output_format = output_format
        self._format_text: list[str] | None = [] if output_format is not None else None
        self.repaired = False
        self.stream = ResponseStream(self.request_id, self._write)
        if max_tool_calls:
            self.stream.on_agent_tool_call = self._agent_tool_call

    # --- the core's side ------------------------------------------------------------------------------

    def _write(self, part: dict[str, Any]) -> None:
        if self.limited or self.stopped:
            return
        if part["type"] == "text":
            if self._format_text is not None:
                self._format_text.append(part["value"])
                return
            if self._stops:
                value = self._cut(part["value"])
                if not value:
                    return
                part = {"type": "text", "value": value}
        else:
            self._release_text()
        self._publish(part)

    def _release_text(self) -> None:
        """Text held back (for a stop sequence, or a structured answer) goes out as it is: a tool
        call follows it, or the answer ended."""
        if self._format_text:
            text = "".join(self._format_text)
            self._format_text = None  # the answer calls tools: the format applies to a later one
            self._publish({"type": "text", "value": text})
        elif self._format_text is not None:
            self._format_text = None
        if self._held:
            held, self._held = self._held, ""
            self._publish({"type": "text", "value": held})

    def _cut(self, value: str) -> str:
        text = self._held + value
        hits = [i for i in (text.find(s) for s in self._stops) if i >= 0]
        if hits:
            self._held = ""
            self.stopped = True
            asyncio.get_running_loop().call_soon(
                self._cancel_core, "Request ended: a stop sequence was reached"
            )
            return text[: min(hits)]
        if self._hold:
            self._held = text[-self._hold :]
            return text[: -self._hold]
        return text

    def _publish(self, part: dict[str, Any]) -> None:
        if self.limited:
            return
        if self._budget is not None and part["type"] == "text":
            raw = part["value"].encode("utf-8", "surrogatepass")
            if len(raw) >= self._budget:
                kept = raw[: self._budget].decode("utf-8", "ignore")
                self._budget = 0
                self._limit()
                if kept:
                    part = {"type": "text", "value": kept}
                else:
                    self._wake()
                    return
            else:
                self._budget -= len(raw)
        self.parts.append(part)
        for event in self.listeners:
            event.set()

    def _agent_tool_call(self, update: Any) -> None:
        self._tool_calls += 1
        if self._tool_calls > self._max_tool_calls and not self.limited:
            self._limit()

    def _limit(self) -> None:
        """A limit was reached: stop the agent's turn; the answer ends with finish_reason length."""
        self.limited = True
        asyncio.get_running_loop().call_soon(
            self._cancel_core, "Request ended: a limit of the request was reached"
        )

    def _wake(self) -> None:
        for event in self.listeners:
            event.set()

    async def run(self, core: Any, request: Any, after: Exchange | None = None) -> None:
        """Answer `request` through `core` (after `after`, the previous request of a conversation
        the client named, has ended)."""
        self.core = core
        try:
            if after is not None and not after.done:
                await after.ended.wait()
            if self.stream.done:  # cancelled while it waited its turn
                raise RequestCancelled(self.cancel_reason or "Request cancelled")
            await core.chat(request, self.stream)
            if self._format_text is not None:
                await self._structured(core, request)
                if not self.repaired:
                    self._record_delivered()
            elif not self.stopped:
                self._release_text()
            if self.stopped or self.limited:
                self._record_delivered()
        except RequestCancelled as exc:
            if self.stopped or self.limited:
                self._held = ""
                self._record_delivered()
            else:
                self.error = cancelled(str(exc) or "Request cancelled")
        except SessionFailed as exc:
            message = str(exc)
            self.error = (
                agents_busy(message)
                if "too many agent sessions" in message
                else agent_failed(message)
            )
        except asyncio.CancelledError:
            self.cancel("Request cancelled: the bridge is shutting down")
            self.error = OpenAIError(503, "The bridge is shutting down.", code="shutting_down")
            raise
        except Exception as exc:  # noqa: BLE001 - a bug must still answer the client
            log.exception("request %s failed", self.request_id)
            self.error = OpenAIError(
                500,
                f"Internal error in the bridge: {type(exc).__name__}: {exc}",
                code="internal_error",
            )
        finally:
            self.done = True
            self.ended.set()
            self.finished_at = time.monotonic()
            if self.cancel_handle is not None:
                self.cancel_handle.cancel()
                self.cancel_handle = None
            self._wake()
            for callback in self.on_done:
                try:
                    callback(self)
                except Exception:  # noqa: BLE001
                    log.exception("exchange callback failed")

    def _record_delivered(self) -> None:
        """Tell the history what the client received when it is not what the agent streamed."""
        from bridge.protocol import TextPart, ToolCallPart

        session = self.stream.session
        if session is None:
            return
        parts: list[Any] = []
        for p in self.parts:
            if p["type"] == "text":
                if parts and isinstance(parts[-1], TextPart):
                    parts[-1] = TextPart(value=parts[-1].value + p["value"])
                elif p["value"]:
                    parts.append(TextPart(value=p["value"]))
            else:
                parts.append(ToolCallPart.model_validate(p))
        self.core.tracker.set_reply(session.id, parts)

    async def _structured(self, core: Any, request: Any) -> None:
        """Validate the held answer; one repair turn when it does not validate (structured.py)."""
        from dataclasses import replace

        from bridge.openai.content import message, text_part
        from bridge.openai.structured import invalid_output

        fmt = self.output_format
        text = "".join(self._format_text or ())
        value, problem = fmt.check(text)
        if problem is not None:
            log.info(
                "request %s: structured answer rejected (%s): one repair turn",
                self.request_id,
                problem,
            )
            self.repaired = True
            self._format_text = []
            repair = replace(
                request,
                messages=[
                    *request.messages,
                    message("assistant", [text_part(text)] if text else []),
                    message("user", [text_part(fmt.repair_prompt(problem))]),
                ],
                prompt_suffix="",
            )
            self.stream = ResponseStream(self.request_id, self._write)
            if self._max_tool_calls:
                self.stream.on_agent_tool_call = self._agent_tool_call
            await core.chat(repair, self.stream)
            if self._format_text is None:  # the repair turn called tools: passed through
                return
            value, problem = fmt.check("".join(self._format_text))
            if problem is not None:
                self._format_text = None
                self.error = invalid_output(problem)
                return
        self._format_text = None
        self._publish({"type": "text", "value": json.dumps(value, ensure_ascii=False)})

    # --- cancellation ---------------------------------------------------------------------------------

    def _cancel_core(self, reason: str) -> None:
        stream = self.stream
        if stream.done:
            return
        if self.core is None or not self.core.cancel(self.request_id, reason):
            if stream.session is not None:
                stream.session.cancel_stream(stream, reason)
            else:
                stream.cancel(reason)

    def cancel(self, reason: str) -> None:
        if self.done:
            return
        self.cancelled = True
        self.cancel_reason = reason
        self._cancel_core(reason)

    # --- consumers ------------------------------------------------------------------------------------

    def attach(self, event: asyncio.Event) -> None:
        self.consumers += 1
        self.listeners.append(event)
        if self.cancel_handle is not None:
            self.cancel_handle.cancel()
            self.cancel_handle = None

    def detach(self, event: asyncio.Event, *, disconnected: bool, grace: float) -> None:
        self.consumers -= 1
        if event in self.listeners:
            self.listeners.remove(event)
        if self.consumers > 0 or self.done or not disconnected:
            return
        reason = "Request cancelled: the client disconnected"
        if grace > 0:
            self.cancel_handle = asyncio.get_running_loop().call_later(grace, self.cancel, reason)
        else:
            self.cancel(reason)

    @property
    def replayable(self) -> bool:
        """May a retry be answered from this exchange?"""
        return not self.cancelled and (not self.done or self.error is None)
