"""`symposium-tui serve --openai HOST:PORT [--api-key KEY]` as a real process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import openai

from tests.support.openai_server import REPO, free_port, start, wait_line


def test_serve_with_openai_and_an_api_key_from_the_environment(settings):
    port = free_port()
    proc = start("--openai", f"127.0.0.1:{port}", env={"SYMPOSIUM_OPENAI_API_KEY": "k1"})
    try:
        line = wait_line(proc, "OpenAI-compatible API on")
        assert f"http://127.0.0.1:{port}/v1" in line
        with openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="k1", max_retries=0
        ) as c:
            r = c.chat.completions.create(
                model="echo", messages=[{"role": "user", "content": "via serve"}]
            )
            assert r.choices[0].message.content == "ECHO: via serve"
        with openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="nope", max_retries=0
        ) as c:
            try:
                c.models.list()
            except openai.AuthenticationError:
                pass
            else:
                raise AssertionError("a wrong key was accepted")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    assert proc.returncode == 0


def test_serve_refuses_a_public_address_without_a_key(settings):
    env = {k: v for k, v in os.environ.items() if k != "SYMPOSIUM_OPENAI_API_KEY"}
    proc = subprocess.run(
        [sys.executable, "-m", "symposium_tui", "serve", "--openai", "0.0.0.0:0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "needs an API key" in proc.stderr


def test_serve_prints_each_start_up_line_once_under_its_own_name(settings):
    port = free_port()
    proc = start("--openai", f"127.0.0.1:{port}")
    seen: list[str] = []
    try:
        while not seen or "OpenAI-compatible API on" not in seen[-1]:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, proc.stderr.read()
            seen.append(line)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    out = "".join(seen) + out
    both = out + err
    for needle in ("serving on", "approvals wait up to", "OpenAI-compatible API on"):
        assert both.count(needle) == 1, both
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines and all(line.startswith("symposium-tui serve: ") for line in lines), out
