"""The vscodelm methods' parameters as the Symposium VS Code extension sends them (docs/protocol.md).

The messages and tool definitions inside them are the core's own model (`bridge.protocol`); what
is here is only the envelope of each `lm/*` method. Field names are the wire's own (camelCase) so
no aliasing cost is paid on the hot path, and unknown keys are ignored, as upstream's serde
parsing does.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

from bridge.protocol import Message, ToolDefinition

__all__ = [
    "CancelParams",
    "ChatInformationParams",
    "ChatRequestOptions",
    "ChatResponseParams",
    "TokenCountParams",
]


class _Params(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=False)


class ChatRequestOptions(_Params):
    tools: list[ToolDefinition] = Field(default_factory=list)
    toolMode: Literal["auto", "required"] | None = None


class ChatResponseParams(_Params):
    """`lm/provideLanguageModelChatResponse`."""

    modelId: str
    messages: list[Message]
    agent: Any
    options: ChatRequestOptions = Field(default_factory=ChatRequestOptions)

    @model_validator(mode="before")
    @classmethod
    def _options_null(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("options", 0) is None:
            data = dict(data)
            data.pop("options")
        return data


class TokenCountParams(_Params):
    """`lm/provideTokenCount` (answered by `bridge.vscodelm.fastpath.token_count`)."""

    modelId: str
    text: str


class CancelParams(_Params):
    """`lm/cancel`."""

    requestId: StrictInt | str  # as request ids are: `true` or `1.0` never name request 1


class ChatInformationParams(_Params):
    """`lm/provideLanguageModelChatInformation`."""

    silent: bool = False
