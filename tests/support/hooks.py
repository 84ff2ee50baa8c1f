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


# The rules every CLI's end-to-end test runs under: one command allowed, one denied with a reason.
RULES = """
[[rules]]
action = "allow"
command = "touch"

[[rules]]
action = "deny"
command = "rm"
reason = "nothing is deleted in this project"
"""


def symposium_env() -> dict[str, str]:
    return {
        key: os.environ[key]
        for key in ("SYMPOSIUM_CONFIG_DIR", "SYMPOSIUM_RUNTIME_DIR", "PYTHONPATH")
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


def codex_env(home: Path, codex_home: Path) -> dict[str, str]:
    """Codex's environment: `codex` itself on PATH (so `hook install codex` can ask it about its
    hooks' trust), its home, the fake provider's key, and the isolated symposium directories."""
    agents.install("codex")
    bin_dir = str(agents.agents_dir() / "codex" / "node_modules" / ".bin")
    home.mkdir(parents=True, exist_ok=True)
    codex_home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
        "FAKE_KEY": "x",
        **symposium_env(),
    }


def codex_provider(codex_home: Path, base_url: str) -> None:
    """Codex's model: the fake Responses API (its `base_url` ends in `/v1`), as a custom provider."""
    (codex_home / "config.toml").write_text(
        'model = "gpt-5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{base_url}"\nwire_api = "responses"\nenv_key = "FAKE_KEY"\n'
    )


async def codex_exec(env: dict[str, str], project: Path, prompt: str = "go") -> Run:
    """`codex exec` with Codex's own approvals and sandbox off: the hook is the only gate. Hook
    trust is NOT bypassed: `hook install codex` must have recorded it."""
    proc = await asyncio.create_subprocess_exec(
        "codex",
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
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
