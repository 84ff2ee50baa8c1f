"""Secrets out of everything we record or show: event logs, traces, the console, errors.

An agent definition's `env` (an API key, typically) travels in every vscodelm request; a client may
send other credentials under telling names. `redact(value)` returns a copy of a JSON-like value
with every `env` value, and everything under a key that names a secret (`*KEY*`, `*TOKEN*`,
`*SECRET*`, `*PASSWORD*`, `Authorization`, `Cookie`, credentials), replaced by `[redacted]`.
`redact_line(bytes)` does the same to one JSON wire line, cheaply when it holds nothing to hide.
`redact_free_text(text, secrets)` does it to free text, such as what an agent writes on its stderr:
known secret values, `NAME=value` / `"name": "value"` with a secret-naming NAME, `Bearer …`
credentials, a URL's password, and the shapes of well-known API keys.
Standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = "[redacted]"

_WORDS = frozenset(
    {
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "authorization",
        "auth",
        "credential",
        "credentials",
        "cookie",
        "bearer",
    }
)
_NOT_SECRET_KEYS = frozenset(
    {"agent", "sort", "cache", "primary", "session", "idempotency", "", "route"}
)
_UPPER_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL", "COOKIE")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SPLIT = re.compile(r"[^a-z0-9]+")
# A wire line can only need redacting if it has an "env" key or a key with one of these in it.
_MAYBE = re.compile(
    rb'"(?:env|[^"]{0,80}?(?:key|token|secret|passw|auth|credential|cookie|bearer)[^"]{0,80}?)"\s*:',
    re.IGNORECASE,
)


def sensitive_key(name: Any) -> bool:
    """Does a key name say its value is a secret? `ANTHROPIC_API_KEY`, `GITHUB_TOKEN`, `apiKey`,
    `client_secret`, `Authorization` do; `max_tokens`, `toolCallId`, `keywords` do not."""
    if not isinstance(name, str) or not name:
        return False
    if name.isupper() and any(part in name for part in _UPPER_PARTS):
        return True
    words = _SPLIT.split(_CAMEL.sub(r"\1_\2", name).lower())
    if any(w in _WORDS for w in words):
        return True
    # `api_key`, `private_key`, `openaiKey`… but not our own `agent_key` or a bare `key`
    return any(
        w == "key" and i > 0 and words[i - 1] not in _NOT_SECRET_KEYS for i, w in enumerate(words)
    )


def _redact_env(env: Any) -> Any:
    if isinstance(env, dict):
        return dict.fromkeys(env, REDACTED)
    if isinstance(env, list):
        out: list[Any] = []
        for item in env:
            if isinstance(item, dict) and "value" in item:
                out.append({**item, "value": REDACTED})
            elif isinstance(item, str) and "=" in item:  # "NAME=value"
                out.append(item.split("=", 1)[0] + "=" + REDACTED)
            else:
                out.append(REDACTED)
        return out
    return REDACTED if env not in (None, "") else env


def redact(value: Any, mask: Any = None) -> Any:
    """A copy of `value` with env values and secret-named keys' values redacted (each replaced
    by `mask(value)` when given, else by `[redacted]`). A value too deeply nested to walk is
    redacted whole (fail closed)."""
    try:
        return _masked(value, mask) if mask is not None else _redact(value)
    except RecursionError:
        return REDACTED if mask is None else mask(repr(value)[:4096])


def _redact(value: Any) -> Any:
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if k == "env" or (k == "headers" and isinstance(v, (dict, list))):
                out[k] = _redact_env(v) if k == "env" else _redact_headers(v)
            elif sensitive_key(k) and v not in (None, "", [], {}) and not isinstance(v, bool):
                out[k] = REDACTED
            else:
                out[k] = _redact(v)
        return out
    if isinstance(value, list):
        return [_redact(v) for v in value]
    return value


_PROCESS_KEY: bytes | None = None


def fingerprint(value: Any) -> str:
    """A stand-in for a secret that compares equal exactly when the secret does, within this
    process (an HMAC under a random per-process key), and reveals nothing of it."""
    import hashlib
    import hmac
    import secrets

    global _PROCESS_KEY
    if _PROCESS_KEY is None:
        _PROCESS_KEY = secrets.token_bytes(32)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return "secret:" + hmac.new(_PROCESS_KEY, text.encode(), hashlib.sha256).hexdigest()[:24]


def _masked(value: Any, mask: Any) -> Any:
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if k == "env" and isinstance(v, dict):
                out[k] = {name: mask(x) for name, x in v.items()}
            elif k == "env" and isinstance(v, list):
                out[k] = [
                    {**x, "value": mask(x["value"])}
                    if isinstance(x, dict) and "value" in x
                    else mask(x)
                    for x in v
                ]
            elif sensitive_key(k) and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                out[k] = mask(v)
            else:
                out[k] = _masked(v, mask)
        return out
    if isinstance(value, list):
        return [_masked(v, mask) for v in value]
    return value


def _redact_headers(headers: Any) -> Any:
    """HTTP headers of an MCP server definition: `[{name, value}]` or `{name: value}`."""
    if isinstance(headers, dict):
        return {k: REDACTED if sensitive_key(k) else _redact(v) for k, v in headers.items()}
    out = []
    for item in headers:
        if isinstance(item, dict) and sensitive_key(item.get("name")):
            out.append({**item, "value": REDACTED})
        else:
            out.append(_redact(item))
    return out


def redact_line(data: bytes) -> bytes:
    """One JSON wire line with its secrets redacted; the same bytes when it has nothing to hide
    (or is not JSON)."""
    if not _MAYBE.search(data):
        return data
    try:
        message = json.loads(data)
        cleaned = _redact(message)
        if cleaned == message:
            return data
        return json.dumps(cleaned, ensure_ascii=False, separators=(",", ":")).encode()
    except (ValueError, RecursionError):
        # Not JSON (or too deep to walk) yet with a secret-looking key in it: fail closed.
        return b'"[redacted: a line of %d bytes that could not be parsed]"' % len(data)


def redact_text(text: str, secrets: list[str]) -> str:
    """`text` with each of `secrets` (values known to be secret, e.g. an agent's env values)
    replaced: for free-form text such as an agent's stderr or an error message."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return text


# Free text: `API_KEY=…`, `token: …`, `"apiKey": "…"`; the value runs to a quote, space or separator.
_ASSIGNMENT = re.compile(
    r"""(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,80})(?P<sep>["']?[ \t]*[:=][ \t]*["']?)"""
    r"""(?P<value>[^\s"',;&]+)"""
)
_SCHEME_CREDENTIAL = re.compile(r"(?i)\b(bearer|basic)([ \t]+)[A-Za-z0-9._~+/=-]{6,}")
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@")
# Well-known API key shapes (OpenAI/Anthropic, GitHub, Slack, AWS access keys, Google).
_KEY_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})"
)


def _assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    if not sensitive_key(match.group("key")) or value == REDACTED:
        return match.group(0)
    if value.lower() in ("bearer", "basic"):  # its credential follows (and is redacted)
        return match.group(0)
    return match.group("key") + match.group("sep") + REDACTED


def redact_free_text(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """Free text (an agent's stderr line, an error) as it may be logged, traced or shown: each of
    `secrets` (values known to be secret) replaced, then every value a secret-naming key assigns,
    `Bearer`/`Basic` credentials, a URL's password and well-known API key shapes."""
    text = redact_text(text, list(secrets))
    text = _SCHEME_CREDENTIAL.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _ASSIGNMENT.sub(_assignment, text)
    return _KEY_SHAPES.sub(REDACTED, text)


def environment_secrets(env: Any = None) -> list[str]:
    """The values of the variables of `env` (default: this process's environment) whose names
    say they are secret: an agent inherits them, and may print them."""
    import os

    source = os.environ if env is None else env
    return [str(v) for k, v in source.items() if v and sensitive_key(k)]
