"""An OpenAI-API conformance checker from PyPI (`llm-comply`) against the live server.

It validates the responses against OpenAI's published schemas (Chat Completions) and the Open
Responses spec, streaming included. The model is the `tool` test agent, which behaves like a
tool-calling model (it honours `tool_choice: "required"`); Eliza passes everything that does not
need a model to decide to call a tool.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.openai_server import ServerThread

CLI = Path(sys.executable).with_name("llm-comply")


def comply(server: ServerThread, fmt: str, model: str, *extra: str) -> dict:
    proc = subprocess.run(
        [
            str(CLI),
            "--format",
            fmt,
            "-u",
            server.url,
            "-k",
            "unused",
            "-m",
            model,
            "--json",
            "--timeout",
            "60",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(
            f"llm-comply printed no report (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        ) from None
    failures = {r["id"]: r.get("errors") for r in report["results"] if r["status"] == "failed"}
    assert not failures, json.dumps(failures, indent=2)
    return report


@pytest.mark.parametrize("fmt", ["openai-chat", "open-responses"])
def test_llm_comply_passes(server: ServerThread, fmt):
    report = comply(server, fmt, "tool")
    summary = report["summary"]
    assert (
        summary["failed"] == 0
        and summary["passed"] >= {"openai-chat": 8, "open-responses": 11}[fmt]
    )
    skipped = [r["id"] for r in report["results"] if r["status"] == "skipped"]
    assert all("reasoning" in s for s in skipped)  # only the reasoning-model checks are skipped


def test_llm_comply_with_eliza(server: ServerThread):
    tests = "chat-basic-response,chat-system-prompt,chat-multi-turn,chat-streaming-response,chat-streaming-usage,chat-image-input,chat-error-handling"
    report = comply(server, "openai-chat", "eliza", "-f", tests)
    assert report["summary"]["passed"] == 7
