"""Request parameters both APIs share: the model, sampling values, `stop`, and what an agent bridge
cannot honour (refused, naming the `param`)."""

from __future__ import annotations

from typing import Any, TypeGuard

from bridge.openai.errors import bad_request, unsupported


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(body: dict[str, Any], key: str, low: float, high: float) -> None:
    value = body.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise bad_request(
            f"Invalid value for '{key}': expected a number between {low:g} and {high:g}.", key
        )


def check_common(body: dict[str, Any]) -> None:
    """Parameters both APIs share: sampling values OpenAI would reject are rejected (in range they
    are accepted and have no effect: an ACP agent chooses its own model settings — the README
    says so); what an agent bridge cannot honour is refused, naming the `param`."""
    _number(body, "temperature", 0, 2)
    _number(body, "top_p", 0, 1)
    _number(body, "presence_penalty", -2, 2)
    _number(body, "frequency_penalty", -2, 2)
    seed = body.get("seed")
    if seed is not None and not is_int(seed):
        raise bad_request("Invalid type for 'seed': expected an integer.", "seed")
    if body.get("logprobs"):
        raise unsupported(
            "Log probabilities are not available: an agent does not report them.", "logprobs"
        )
    if body.get("top_logprobs") is not None:
        raise unsupported(
            "Log probabilities are not available: an agent does not report them.", "top_logprobs"
        )
    if body.get("logit_bias"):
        raise unsupported("'logit_bias' cannot be applied to an agent's model.", "logit_bias")


def parse_stop(body: dict[str, Any]) -> list[str]:
    """`stop`: a string or up to 4 strings (OpenAI's limit)."""
    stop = body.get("stop")
    if stop is None:
        return []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise bad_request(
            "Invalid type for 'stop': expected a string or an array of strings.", "stop"
        )
    if len(stop) > 4:
        raise bad_request(
            f"Invalid value for 'stop': at most 4 stop sequences are allowed ({len(stop)} given).",
            "stop",
        )
    return [s for s in stop if s]


def optional_int(body: dict[str, Any], key: str, minimum: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if not is_int(value) or value < minimum:
        raise bad_request(f"Invalid value for '{key}': expected an integer >= {minimum}.", key)
    return value


def model_of(body: dict[str, Any]) -> str:
    model = body.get("model")
    if model is None:
        raise bad_request("You must provide a model parameter.", "model")
    if not isinstance(model, str) or not model:
        raise bad_request("Invalid type for 'model': expected a string.", "model")
    return model
