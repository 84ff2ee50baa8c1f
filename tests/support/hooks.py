"""For the hook door's tests: the real CLIs in their own terminal mode, offline.

Each CLI talks to a scripted fake of its remote model API on loopback (`tests/agents/
fake_anthropic.py` for the Anthropic and Gemini APIs, `tests/agents/fake_openai_responses.py` for
OpenAI's Responses API): the model cannot run here, the CLI and its hooks do. The hooks are put in
place by `symposium-tui hook install`, as a person would, and inherit the CLI's environment: the
test's isolated config and runtime directories.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agents import install as agents

SCRIPT = str(Path(sys.executable).parent / "symposium-tui")


def symposium_env() -> dict[str, str]:
    return {
        key: os.environ[key]
        for key in ("SYMPOSIUM_CONFIG_DIR", "SYMPOSIUM_RUNTIME_DIR")
        if key in os.environ
    }


def hook_install(cli: str, cwd: Path, *flags: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [SCRIPT, "hook", "install", cli, *flags],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def write_settings(text: str) -> None:
    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(text)


def audit(kind: str = "decision") -> list[dict[str, Any]]:
    path = Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "audit.jsonl"
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [line for line in lines if line.get("type") == kind]


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


async def claude_print(home: Path, project: Path, base_url: str, prompt: str = "go") -> Run:
    """`claude -p PROMPT` in `project`, its model the fake at `base_url`."""
    launch = agents.claude_code(home, base_url)
    env = {**launch.env, **symposium_env()}
    proc = await asyncio.create_subprocess_exec(
        launch.command,
        "-p",
        prompt,
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode is not None
    return Run(proc.returncode, out.decode(), err.decode())


async def gemini_print(home: Path, project: Path, base_url: str, prompt: str = "go") -> Run:
    """`gemini -p PROMPT --approval-mode yolo` in `project` (a trusted folder), its model the fake
    at `base_url`. Print mode offers the shell tool only when the approval mode lets tools run
    unasked: Gemini CLI's own gate is open, so the hook is the only one deciding."""
    launch = agents.gemini_agent(home, base_url, trusted=[project])
    settings = home / ".gemini" / "settings.json"
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    env = {**launch.env, **symposium_env()}
    proc = await asyncio.create_subprocess_exec(
        launch.command,
        "-p",
        prompt,
        "--approval-mode",
        "yolo",
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode is not None
    return Run(proc.returncode, out.decode(), err.decode())
