"""Structured output: `response_format` (Chat Completions) and `text.format` (Responses).

An ACP agent has no JSON mode, so the bridge does what a careful client would:

1. the agent is told the required format in the prompt (the JSON Schema itself, for
   `json_schema`), as a suffix of this request's prompt only;
2. its answer is held back (not streamed) and parsed: the whole text, else a fenced ```json
   block, else the first JSON value in it;
3. the value is validated against the schema with the `jsonschema` package (`json_object`: any
   JSON object);
4. when it does not validate, one repair turn is tried in the same agent session: the agent is
   told what was wrong and asked again;
5. the result is the valid JSON as the message content — or, when the repair did not help either,
   an OpenAI-shaped error (502 `invalid_structured_output`) naming the problem.

A reply that calls tools instead is passed through as usual (the format applies to the final
answer).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from bridge.openai.errors import OpenAIError, bad_request

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n?```", re.DOTALL)


@dataclass
class OutputFormat:
    kind: str  # "json_object" | "json_schema"
    name: str | None = None
    schema: dict[str, Any] | None = None
    strict: bool = False
    description: str | None = None
    _validator: Any = field(default=None, repr=False, compare=False)

    # --- the prompt ---------------------------------------------------------------------------

    def instruction(self) -> str:
        if self.kind == "json_object":
            return (
                "[Answer with only a JSON object: no prose before or after it, no code fence. "
                "The client parses your whole answer as JSON.]"
            )
        schema = json.dumps(self.schema, ensure_ascii=False, separators=(",", ":"))
        about = f" ({self.description})" if self.description else ""
        return (
            f"[Answer with only a JSON value that validates against this JSON Schema, named "
            f"{self.name}{about}: no prose before or after it, no code fence. The client parses "
            f"your whole answer as JSON. Schema: {schema}]"
        )

    def repair_prompt(self, problem: str) -> str:
        return (
            f"[Your last answer was not accepted: {problem}. Answer again with only the corrected "
            f"JSON.]\n\n{self.instruction()}"
        )

    # --- checking the answer -------------------------------------------------------------------

    def check(self, text: str) -> tuple[Any, str | None]:
        """(the value, None) when `text` holds a valid answer, else (None, what is wrong)."""
        value, problem = _extract(text)
        if problem is not None:
            return None, problem
        if self.kind == "json_object":
            if not isinstance(value, dict):
                return None, f"the answer is a JSON {_json_type(value)}, not an object"
            return value, None
        try:
            error = self._best_error(value)
        except RecursionError:  # a value (or a schema) nested past what the validator can walk
            return None, "it is nested too deeply to check against the schema"
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            return (
                None,
                f"it does not match the schema{f' at /{where}' if where else ''}: {error.message}",
            )
        return value, None

    def _best_error(self, value: Any) -> Any:
        import jsonschema

        if self._validator is None:
            cls = jsonschema.validators.validator_for(self.schema)
            self._validator = cls(self.schema, format_checker=cls.FORMAT_CHECKER)
        return jsonschema.exceptions.best_match(self._validator.iter_errors(value))

    # --- what Responses reports -----------------------------------------------------------------

    def responses_format(self) -> dict[str, Any]:
        if self.kind == "json_object":
            return {"type": "json_object"}
        out: dict[str, Any] = {"type": "json_schema", "name": self.name, "schema": self.schema}
        if self.description:
            out["description"] = self.description
        out["strict"] = self.strict
        return out


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _extract(text: str) -> tuple[Any, str | None]:
    stripped = text.strip()
    if not stripped:
        return None, "the answer is empty"
    try:
        return json.loads(stripped), None
    except (ValueError, RecursionError):
        pass
    for block in _FENCE.findall(stripped):
        try:
            return json.loads(block), None
        except (ValueError, RecursionError):
            continue
    # The first value that reads whole, from any `{` or `[` of the prose. What the failed tries
    # read is bounded by a few times the answer's length (each could read to its end: an answer
    # of unclosed brackets would cost the square of its length), and one nested past the
    # decoder's depth ends the search: nothing inside it reads either.
    decoder = json.JSONDecoder()
    budget = 4 * len(stripped) + 4096
    for i, ch in enumerate(stripped):
        if ch in "{[":
            try:
                return decoder.raw_decode(stripped, i)[0], None
            except json.JSONDecodeError as exc:
                budget -= max(1, exc.pos - i)
                if budget <= 0:
                    break
            except (ValueError, RecursionError):
                break
    return None, "the answer is not JSON"


def _schema_format(raw: dict[str, Any], where: str, *, nested: bool) -> OutputFormat:
    """A `json_schema` format: `{"name", "schema", "strict"?, "description"?}` (nested under
    `json_schema` for Chat, flat for Responses)."""
    spec = raw.get("json_schema") if nested else raw
    spec_where = f"{where}.json_schema" if nested else where
    if not isinstance(spec, dict):
        raise bad_request(f"Missing required parameter: '{spec_where}'.", spec_where)
    name = spec.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise bad_request(
            f"Invalid value for '{spec_where}.name': expected 1 to 64 letters, digits, "
            "underscores or dashes.",
            f"{spec_where}.name",
        )
    schema = spec.get("schema", {})
    if not isinstance(schema, dict):
        raise bad_request(
            f"Invalid type for '{spec_where}.schema': expected a JSON Schema object.",
            f"{spec_where}.schema",
        )
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise bad_request(
            f"Invalid schema for response_format '{name}': {exc.message}.", f"{spec_where}.schema"
        ) from None
    except RecursionError:
        raise bad_request(
            f"Invalid schema for response_format '{name}': it is nested too deeply.",
            f"{spec_where}.schema",
        ) from None
    strict = spec.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise bad_request(
            f"Invalid type for '{spec_where}.strict': expected a boolean.", f"{spec_where}.strict"
        )
    description = spec.get("description")
    if description is not None and not isinstance(description, str):
        raise bad_request(
            f"Invalid type for '{spec_where}.description': expected a string.",
            f"{spec_where}.description",
        )
    return OutputFormat("json_schema", name, schema, bool(strict), description)


def _format(raw: Any, where: str, *, nested: bool) -> OutputFormat | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise bad_request(f"Invalid type for '{where}': expected an object.", where)
    kind = raw.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return OutputFormat("json_object")
    if kind == "json_schema":
        return _schema_format(raw, where, nested=nested)
    raise bad_request(
        f"Invalid value for '{where}.type': {kind!r} (expected 'text', 'json_object' or "
        "'json_schema').",
        f"{where}.type",
    )


def chat_response_format(body: dict[str, Any]) -> OutputFormat | None:
    """Chat Completions' `response_format`."""
    return _format(body.get("response_format"), "response_format", nested=True)


def responses_text_format(body: dict[str, Any]) -> OutputFormat | None:
    """Responses' `text.format`."""
    text = body.get("text")
    if text is None:
        return None
    if not isinstance(text, dict):
        raise bad_request("Invalid type for 'text': expected an object.", "text")
    return _format(text.get("format"), "text.format", nested=False)


def invalid_output(problem: str) -> OpenAIError:
    return OpenAIError(
        502,
        f"The agent's answer does not have the requested format ({problem}), also after it was "
        "asked to correct it.",
        param="response_format",
        code="invalid_structured_output",
        retry=False,
    )
