"""Message content, both APIs: content parts → text (media as placeholders), core messages made
cheaply, tool-call arguments, and the token estimate."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from typing import Any

from bridge.openai.errors import bad_request
from bridge.protocol import Message, TextPart, ToolCallPart


def estimate_tokens(text: str) -> int:
    """The bridge's token estimate (as `lm/provideTokenCount`): UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)


def _placeholder(part: dict[str, Any], kind: str) -> str:
    if kind in ("image_url", "input_image"):
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str) and url.startswith("data:"):
            return f"[Image: {url[5:].split(';', 1)[0].split(',', 1)[0] or 'image'}]"
        if isinstance(url, str) and len(url) <= 2048:
            return f"[Image: {url}]"
        return "[Image]"
    if kind in ("input_audio",):
        audio = part.get("input_audio")
        fmt = audio.get("format") if isinstance(audio, dict) else None
        return f"[Audio: {fmt or 'audio'}]"
    if kind in ("file", "input_file"):
        inner = part.get("file")
        file = inner if isinstance(inner, dict) else part
        return f"[File: {file.get('filename') or file.get('file_id') or 'file'}]"
    return f"[{kind}]"


_TEXT_KINDS = {"text", "input_text", "output_text", "refusal"}
_MEDIA_KINDS = {"image_url", "input_image", "input_audio", "file", "input_file"}


def content_text(content: Any, where: str, *, allow_media: bool = True) -> str:
    """A message's `content` (a string, null, or a list of content parts) as one text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise bad_request(
            f"Invalid type for '{where}': expected a string or an array of content parts.", where
        )
    texts: list[str] = []
    for i, part in enumerate(content):
        here = f"{where}[{i}]"
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise bad_request(f"Invalid type for '{here}': expected an object.", here)
        kind = part.get("type")
        if not isinstance(kind, str):
            raise bad_request(f"Invalid type for '{here}.type': expected a string.", f"{here}.type")
        if kind in _TEXT_KINDS:
            value = part.get("text") if kind != "refusal" else part.get("refusal", part.get("text"))
            if not isinstance(value, str):
                raise bad_request(f"Missing required parameter: '{here}.text'.", f"{here}.text")
            texts.append(value)
        elif kind in _MEDIA_KINDS and allow_media:
            texts.append(_placeholder(part, kind))
        else:
            raise bad_request(
                f"Invalid value for '{here}.type': {kind!r} is not a supported content part.",
                f"{here}.type",
            )
    return "".join(texts)


def _construct(cls: Any, values: dict[str, Any]) -> Any:
    """`cls.model_construct(**values)` for complete, trusted values, at a fraction of its cost (it
    runs for every message of every request)."""
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


def text_part(text: str) -> TextPart:
    part: TextPart = _construct(TextPart, {"type": "text", "value": text})
    return part


def message(role: str, content: list[Any]) -> Message:
    msg: Message = _construct(Message, {"role": role, "content": content})
    return msg


_TEXT_CACHE: OrderedDict[tuple[str, str], Message] = OrderedDict()
_TEXT_CACHE_LIMIT = (
    4096  # messages (of at most _TEXT_CACHE_MAX_CHARS each), least recently used dropped
)
_TEXT_CACHE_MAX_CHARS = 4096  # a longer text costs more to parse than to wrap: not kept


def text_message(role: str, text: str) -> Message:
    """A one-text message. A conversation's earlier messages come back with every request: they
    are made once and shared (nothing mutates a client's messages; the tracker copies to merge)."""
    key = (role, text)
    cached = _TEXT_CACHE.get(key)
    if cached is not None:
        content = cached.content
        only = content[0] if len(content) == 1 else None
        if (isinstance(only, TextPart) and only.value == text) if text else not content:
            _TEXT_CACHE.move_to_end(key)
            return cached  # (checked: a shared message must never have been changed)
    made = message(role, [text_part(text)] if text else [])
    if len(text) > _TEXT_CACHE_MAX_CHARS:
        return made
    _TEXT_CACHE[key] = made
    if len(_TEXT_CACHE) > _TEXT_CACHE_LIMIT:
        _TEXT_CACHE.popitem(last=False)
    return made


def parse_arguments(arguments: Any, where: str) -> Any:
    if arguments is None or arguments == "":
        return {}
    if not isinstance(arguments, str):
        raise bad_request(f"Invalid type for '{where}': expected a JSON string.", where)
    try:
        return json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments  # kept verbatim: an echo compares equal to itself


def core_parts(parts: list[dict[str, Any]]) -> list[Any]:
    """An exchange's recorded parts (text and tool calls, as dicts) → the core's parts, in order."""
    return [
        text_part(p["value"])
        if p["type"] == "text"
        else ToolCallPart(
            toolCallId=p["toolCallId"], toolName=p["toolName"], parameters=p["parameters"]
        )
        for p in parts
    ]
