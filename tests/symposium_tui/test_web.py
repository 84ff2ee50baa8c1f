"""`symposium-tui web` in a real headless Chromium (Debian's `chromium` + `chromium-driver`,
driven by Selenium): the page with the token shows a pending approval from the bridge, and a key
pressed in the page approves it; without the token, or with a foreign Host or Origin, 403.

The page draws the terminal on a canvas, so what it shows is read from what it received: a small
script (added before the page's own) records the bytes of the page's websocket — the app's
terminal output, exactly what xterm.js draws."""

from __future__ import annotations

import asyncio
import http.client
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.support.lmclient import REPO, user
from tests.support.processes import child_pids
from tests.support.remote import ServeProcess
from tests.support.sshd import FakeHost

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason="chromium / chromium-driver not installed (.ci/run installs them)",
)

RECORDER = """
window.__received = "";
(() => {
  const Native = window.WebSocket;
  const decoder = new TextDecoder();
  class Recording extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => {
        if (typeof e.data !== "string") {
          window.__received += decoder.decode(e.data, {stream: true});
        }
      });
    }
  }
  window.WebSocket = Recording;
})();
"""


@pytest.fixture
def host(tmp_path) -> FakeHost:
    h = FakeHost("devbox", tmp_path / "devbox")
    h.runtime_dir.mkdir(parents=True)
    h.config_dir.mkdir(parents=True)
    # A card answers at once (no half-second arming): the test presses its key when it is shown.
    (h.config_dir / "settings.toml").write_text("[preferences]\narm_delay = 0\n")
    return h


class WebProcess:
    def __init__(self, proc: subprocess.Popen[bytes], url: str, port: int) -> None:
        self.proc, self.url, self.port = proc, url, port

    @classmethod
    def start(cls, host: FakeHost) -> WebProcess:
        proc = subprocess.Popen(
            [sys.executable, "-m", "symposium_tui", "web"],
            env=host.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=str(REPO),
        )
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        match = re.search(r"open (http://127\.0\.0\.1:(\d+)/\?token=\S+)", line)
        assert match, line
        # The rest of its output (what a session's console wrote to stderr, which textual-serve
        # copies there) is read and dropped: a full pipe would stall the server.
        threading.Thread(
            target=shutil.copyfileobj, args=(proc.stdout, io.BytesIO()), daemon=True
        ).start()
        web = cls(proc, match.group(1), int(match.group(2)))
        web.wait_listening()
        return web

    def wait_listening(self) -> None:
        """The URL is printed as the server starts: wait until it accepts connections."""
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def get(self, path: str, headers: dict[str, str] | None = None) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", path, headers=headers or {})
            return conn.getresponse().status
        finally:
            conn.close()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def chromium(profile: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--window-size=1200,900",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def _received(driver) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", driver.execute_script("return window.__received"))


async def test_the_browser_view_shows_a_pending_card_and_a_key_press_approves_it(host):
    serve = await ServeProcess.start(host)
    web = WebProcess.start(host)
    client = await serve.client()
    profile = tempfile.mkdtemp(prefix="symposium-chromium-")
    driver = await asyncio.to_thread(chromium, profile)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
        await asyncio.to_thread(driver.get, web.url)
        # The page's console attached to this machine's bridge: ask for something.
        chat = client.chat_start([user("ask permission to deploy")])
        async with asyncio.timeout(60):
            # the card's frame and the tab's count may come in separate screen updates
            while True:
                text = await asyncio.to_thread(_received, driver)
                if all(part in text for part in ("deploy", "local", "Approvals (1)")):
                    break
                await asyncio.sleep(0.1)
        terminal = driver.find_element("css selector", ".xterm-helper-textarea")
        await asyncio.to_thread(terminal.send_keys, "a")
        response = await asyncio.wait_for(chat, 60)
        assert response.text.endswith("Permission granted (allow_once). I ran deploy.")
        (record,) = serve.audit()
        assert record["resolver"] == "console" and record["answer"] == "approve"
    finally:
        await asyncio.to_thread(driver.quit)
        shutil.rmtree(profile, ignore_errors=True)
        await client.close()
        web.stop()
        await serve.stop()


def test_the_browser_view_refuses_requests_without_the_token_or_from_elsewhere(host):
    web = WebProcess.start(host)
    try:
        token_path = web.url.removeprefix(f"http://127.0.0.1:{web.port}")
        assert web.get(token_path) == 200
        assert web.get("/") == 403
        assert web.get("/?token=wrong") == 403
        assert web.get("/ws") == 403
        assert web.get("/static/js/textual.js") == 403
        assert web.get(token_path, {"Host": "evil.example"}) == 403
        assert web.get(token_path, {"Host": f"evil.example:{web.port}"}) == 403
        assert web.get(token_path, {"Origin": "http://evil.example"}) == 403
        assert web.get(token_path, {"Origin": f"http://127.0.0.1:{web.port}"}) == 200
    finally:
        web.stop()


def test_the_browser_view_refuses_a_page_opened_without_the_token_in_chromium(host):
    web = WebProcess.start(host)
    profile = tempfile.mkdtemp(prefix="symposium-chromium-")
    driver = chromium(profile)
    try:
        driver.get(f"http://127.0.0.1:{web.port}/")
        assert "Forbidden" in driver.page_source
        assert "xterm" not in driver.page_source
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        web.stop()


# --- nothing left behind ----------------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    return set(child_pids(pid))


def _cpu_ticks(pid: int) -> int:
    """CPU time of a process and of its children it reaped (utime, stime, cutime, cstime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15])


def _wait_for(condition, what: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return result


def _new_session(web: WebProcess, seen: set[int]) -> int:
    """The console process the server started for a browser session we have not seen yet."""
    (pid, *_) = _wait_for(lambda: _children(web.proc.pid) - seen, "a session's console")
    seen.add(pid)
    return pid


def _headless(url: str, profile: str) -> subprocess.Popen[bytes]:
    """A bare headless Chromium on `url`, in its own process group (killed as a whole)."""
    return subprocess.Popen(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--window-size=800,600",
            url,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def test_browser_sessions_abrupt_or_clean_leave_no_console_behind_and_the_server_idle(host):
    """20 browsers killed outright while their console runs (the tab's websocket just drops), then
    20 sessions a browser ends cleanly (it navigates away): afterwards the server has no child
    left, and its CPU time (with what its reaped children used) stops growing."""
    web = WebProcess.start(host)
    seen: set[int] = set()
    try:
        for _ in range(20):
            profile = tempfile.mkdtemp(prefix="symposium-chromium-")
            browser = _headless(web.url, profile)
            try:
                _new_session(web, seen)
            finally:
                os.killpg(browser.pid, signal.SIGKILL)
                browser.wait()
                shutil.rmtree(profile, ignore_errors=True)
        profile = tempfile.mkdtemp(prefix="symposium-chromium-")
        driver = chromium(profile)
        try:
            for _ in range(20):
                driver.get(web.url)
                _new_session(web, seen)
                driver.get("about:blank")  # the page's websocket closes cleanly
        finally:
            driver.quit()
            shutil.rmtree(profile, ignore_errors=True)
        assert len(seen) == 40
        _wait_for(lambda: not _children(web.proc.pid), "every session's console to be reaped")
        for pid in seen:  # gone, not left as zombies or reparented elsewhere
            assert not os.path.exists(f"/proc/{pid}"), pid

        def idle() -> bool:
            before = _cpu_ticks(web.proc.pid)
            time.sleep(0.5)
            return _cpu_ticks(web.proc.pid) == before

        _wait_for(idle, "the server's CPU time to stop growing")
        assert web.proc.poll() is None  # still serving
        assert web.get(web.url.removeprefix(f"http://127.0.0.1:{web.port}")) == 200
    finally:
        web.stop()


def test_a_session_console_leaves_on_sigterm_and_the_server_stops_the_rest_when_it_stops(host):
    web = WebProcess.start(host)
    seen: set[int] = set()
    browsers = []
    try:
        for _ in range(2):
            profile = tempfile.mkdtemp(prefix="symposium-chromium-")
            browsers.append((_headless(web.url, profile), profile))
            _new_session(web, seen)
        first, second = sorted(seen)
        os.kill(first, signal.SIGTERM)
        _wait_for(
            lambda: first not in _children(web.proc.pid), "the console to leave and be reaped"
        )
        assert second in _children(web.proc.pid)  # the other session is untouched
        web.proc.terminate()
        web.proc.wait(60)
        _wait_for(lambda: not os.path.exists(f"/proc/{second}"), "the last console to go")
    finally:
        for browser, profile in browsers:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.wait()
            shutil.rmtree(profile, ignore_errors=True)
        web.stop()
