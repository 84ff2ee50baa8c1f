"""Old import path of `bridge.vscodelm.fastpath` (the vscodelm door's start-up fast path)."""

from bridge.vscodelm.fastpath import (
    CANCEL,
    CHAT_INFORMATION,
    CHAT_RESPONSE,
    KNOWN_METHODS,
    MODEL_INFO,
    TOKEN_COUNT,
    Handover,
    answer_cheap,
    chat_information,
    serve_until_loaded,
    start_loader,
    token_count,
)

__all__ = [
    "CANCEL",
    "CHAT_INFORMATION",
    "CHAT_RESPONSE",
    "KNOWN_METHODS",
    "MODEL_INFO",
    "TOKEN_COUNT",
    "Handover",
    "answer_cheap",
    "chat_information",
    "serve_until_loaded",
    "start_loader",
    "token_count",
]
