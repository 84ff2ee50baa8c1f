"""The settings file: validation with line numbers, comment-preserving edits, locking across
processes, atomic writes, permissions, `symposium-tui config`, and the approval policy it feeds.
Real files and real processes throughout."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
import tomlkit
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from bridge.approvals import ApprovalContext, Rule
from bridge.paths import settings_path
from bridge.settings import AgentConfig, Settings, SettingsError, SettingsStore

REPO = Path(__file__).resolve().parents[2]

EXAMPLE = textwrap.dedent(
    """\
    # My Symposium settings
    [preferences]
    theme = "textual-dark"   # the dark one
    idle_timeout = 1800
    max_agents = 16
    replay = "transcript"
    mouse = true

    # Claude through Zed's adapter
    [agents.claude]
    name = "Claude Code"
    command = "npx"
    args = ["-y", "@zed-industries/claude-agent-acp"]
    env = { ANTHROPIC_API_KEY = "sk-secret" }
    description = "Anthropic's agent"
    bypass = false  # ask me first

    [agents.zed-claude-code]
    bypass = true

    [[rules]]
    action = "allow"
    kind = "read"

    [[rules]]   # never let anyone delete things
    action = "deny"
    title = "rm *"
    agent = "claude*"
    path = "/srv"
    """
)

OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def write(text: str | bytes, path: Path | None = None) -> Path:
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


def snapshot(path: Path) -> tuple[bytes, int, int]:
    st_ = path.stat()
    return path.read_bytes(), st_.st_mtime_ns, st_.st_ino


def age(path: Path) -> None:
    """Back-date the file so a rewrite, even within the same clock tick, shows in its mtime."""
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))


def ctx(
    agent: str, *, kind: str = "edit", title: str = "Edit file", path: str | None = None
) -> ApprovalContext:
    tool_call: dict = {"toolCallId": "t1", "title": title, "kind": kind}
    if kind == "execute":  # an execute call is judged by its command, never its title
        tool_call["rawInput"] = {"command": title}
    if path:
        tool_call["locations"] = [{"path": path}]
    return ApprovalContext(
        connection="c", session_id="s", agent=agent, tool_call=tool_call, options=OPTIONS
    )


def run_py(code: str, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        **kw,
    )


def run_config(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "symposium_tui", "config", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


# --- reading ---------------------------------------------------------------------------------------


def test_every_field_is_read():
    s = Settings.load(write(EXAMPLE))
    assert s.exists
    assert s.preferences == {
        "theme": "textual-dark",
        "idle_timeout": 1800,
        "max_agents": 16,
        "replay": "transcript",
        "mouse": True,
    }
    claude = s.agents["claude"]
    assert claude == AgentConfig(
        id="claude",
        name="Claude Code",
        command="npx",
        args=["-y", "@zed-industries/claude-agent-acp"],
        env={"ANTHROPIC_API_KEY": "sk-secret"},
        description="Anthropic's agent",
        bypass=False,
    )
    assert s.agents["zed-claude-code"] == AgentConfig(id="zed-claude-code", bypass=True)
    assert (
        s.agents["zed-claude-code"].name == "zed-claude-code"
        and not s.agents["zed-claude-code"].runnable
    )
    assert s.rules == [
        Rule("allow", kind="read"),
        Rule("deny", title="rm *", agent="claude*", path="/srv"),
    ]
    assert s.bypass_agents() == {"zed-claude-code"}
    assert list(s.runnable_agents()) == ["claude"]
    assert s.warnings == []


def test_every_field_round_trips_through_the_store():
    store = SettingsStore()
    agent = AgentConfig(
        id="my agent.v2",
        name="Mine",
        command="/opt/agent",
        args=["--acp", "-v"],
        env={"TOKEN": "t", "HOME": "/h"},
        description="a local one",
        bypass=True,
    )
    store.upsert_agent(agent)
    store.add_rule(Rule("allow", kind="read", title="Read *", agent="my*", path="/work"))
    store.add_rule(Rule("deny", kind="execute"))
    for key, value in {
        "theme": "nord",
        "idle_timeout": 60.5,
        "max_agents": 3,
        "replay": "user-text",
        "mouse": False,
        "custom": {"nested": [1, 2]},
    }.items():
        store.set_preference(key, value)
    again = Settings.load(settings_path())
    assert again.agents == {"my agent.v2": agent}
    assert again.rules == [
        Rule("allow", kind="read", title="Read *", agent="my*", path="/work"),
        Rule("deny", kind="execute"),
    ]
    assert again.preferences == {
        "theme": "nord",
        "idle_timeout": 60.5,
        "max_agents": 3,
        "replay": "user-text",
        "mouse": False,
        "custom": {"nested": [1, 2]},
    }
    text = settings_path().read_text()
    assert '[agents."my agent.v2"]' in text
    # And what the registry reads from the same file agrees.
    from bridge import registry

    resolved = registry.resolve("my agent.v2", Settings.load_quietly())
    assert resolved["command"] == "/opt/agent" and resolved["args"] == ["--acp", "-v"]


def test_missing_file_is_empty_settings():
    path = settings_path()
    assert not path.exists()
    for s in (Settings.load(), Settings.load(path), SettingsStore().load()):
        assert s.agents == {} and s.rules == [] and s.preferences == {} and not s.exists
        assert s.path == path
    assert Settings.load().policy().decide(ctx("claude")) is None
    assert not path.exists() and not path.parent.exists()  # reading creates nothing


def test_public_dict_hides_env_values():
    s = Settings.load(write(EXAMPLE))
    public = s.to_public_dict()
    assert public["agents"]["claude"]["env"] == {"ANTHROPIC_API_KEY": "<set>"}
    assert "sk-secret" not in json.dumps(public)
    assert "sk-secret" not in repr(s)
    assert public["bypass_agents"] == ["zed-claude-code"]
    assert public["rules"][1] == {
        "action": "deny",
        "title": "rm *",
        "agent": "claude*",
        "path": "/srv",
    }
    assert s.to_public_dict(redact_env=False)["agents"]["claude"]["env"] == {
        "ANTHROPIC_API_KEY": "sk-secret"
    }


def test_unknown_keys_are_warnings_but_unknown_rule_fields_are_errors():
    s = Settings.load(write('cwd = "/x"\n[agents.a]\ncommand = "a"\nbypassPermissions = true\n'))
    assert s.warnings == [
        "cwd: unknown setting, ignored",
        "agents.a.bypassPermissions: unknown key, ignored (did you mean bypass?)",
    ]
    assert not s.agents["a"].bypass  # fail closed
    # A misspelt rule field would widen an allow rule to everything: refused.
    write('[[rules]]\naction = "allow"\ntitel = "Read *"\n')
    with pytest.raises(SettingsError) as err:
        Settings.load()
    assert err.value.key == "rules[1].titel" and err.value.line == 3


# --- broken files -----------------------------------------------------------------------------------


BROKEN_SYNTAX = [
    (
        '[preferences]\ntheme = "x"\n\n[agents.claude]\ncommand = "npx"\nargs = ["-y"]\nbypass true\n',
        7,
        "expected '=' after a key",
    ),
    ('[agents.a]\ncommand = "a"\n[agents.a]\ncommand = "b"\n', 3, None),
    ('[preferences]\ntheme = "unterminated\n', 2, None),
    ('[[rules]]\naction = "allow"\nkind = \n', 3, None),
]


@pytest.mark.parametrize(("text", "line", "words"), BROKEN_SYNTAX)
def test_broken_toml_names_the_line_and_is_never_written(text, line, words):
    path = write(text)
    age(path)
    before = snapshot(path)
    with pytest.raises(SettingsError) as err:
        Settings.load(path)
    assert err.value.line == line
    assert err.value.path == path
    assert f"{path} line {line}" in str(err.value)
    if words:
        assert words in str(err.value)
    store = SettingsStore()
    for change in (
        lambda: store.set_agent_bypass("claude", True),
        lambda: store.set_preference("theme", "y"),
        lambda: store.add_rule(Rule("allow")),
        lambda: store.update(lambda doc: None),
    ):
        with pytest.raises(SettingsError) as err:
            change()
        assert err.value.line == line
        assert snapshot(path) == before


def test_not_utf8_names_the_line():
    path = write(b'[preferences]\ntheme = "caf\xe9"\n')
    before = snapshot(path)
    with pytest.raises(SettingsError) as err:
        SettingsStore().set_preference("mouse", True)
    assert err.value.line == 2 and "UTF-8" in str(err.value)
    assert snapshot(path) == before


WRONG_TYPES = [
    (
        '[agents.claude]\ncommand = "npx"\nargs = "-y foo"\n',
        "agents.claude.args",
        3,
        "expected a list of strings",
    ),
    (
        '[agents.claude]\ncommand = "npx"\nargs = ["-y", 3]\n',
        "agents.claude.args",
        3,
        "expected a list of strings",
    ),
    (
        '[agents.claude]\ncommand = "npx"\n\n# yes please\nbypass = "yes"\n',
        "agents.claude.bypass",
        5,
        "expected true or false",
    ),
    (
        '[agents]\nclaude = { command = "npx", bypass = 1 }\n',
        "agents.claude.bypass",
        2,
        "expected true or false",
    ),
    (
        '[agents.claude]\ncommand = "npx"\nenv = { PORT = 8080 }\n',
        "agents.claude.env.PORT",
        3,
        "expected a string",
    ),
    ('[agents.claude]\ncommand = ["npx"]\n', "agents.claude.command", 2, "expected a string"),
    ('[agents]\nclaude = "npx"\n', "agents.claude", 2, "expected a table"),
    ('agents = ["a"]\n', "agents", 1, "expected a table"),
    (
        '[[rules]]\naction = "allow"\n\n[[rules]]\nkind = "read"\naction = "permit"\n',
        "rules[2].action",
        6,
        '"allow", "ask" or "deny"',
    ),
    ('[[rules]]\nkind = "read"\n', "rules[1]", 1, "needs an action"),
    (
        'rules = [{ action = "allow" }, { action = "maybe" }]\n',
        "rules[2].action",
        1,
        '"allow", "ask" or "deny"',
    ),
    ('[rules]\naction = "allow"\n', "rules", 1, "expected a list of rules"),
    ("[preferences]\nmax_agents = true\n", "preferences.max_agents", 2, "a whole number"),
    ("[preferences]\nidle_timeout = -1\n", "preferences.idle_timeout", 2, "0 or more"),
    ("preferences = 3\n", "preferences", 1, "expected a table"),
    ('[agents.""]\nbypass = true\n', 'agents.""', 1, "must not be empty"),
]


@pytest.mark.parametrize(("text", "key", "line", "words"), WRONG_TYPES)
def test_wrong_types_name_the_key_and_the_file_is_never_written(text, key, line, words):
    path = write(text)
    age(path)
    before = snapshot(path)
    with pytest.raises(SettingsError) as err:
        Settings.load(path)
    assert err.value.key == key
    assert err.value.line == line
    assert words in str(err.value)
    assert str(err.value).startswith(f"{path} line {line}: {key}: ")
    with pytest.raises(SettingsError):
        SettingsStore().set_agent_bypass("other", True)
    with pytest.raises(SettingsError):
        SettingsStore().set_preference("theme", "x")
    assert snapshot(path) == before


def test_a_change_that_would_break_the_file_is_not_written():
    path = write(EXAMPLE)
    age(path)
    before = snapshot(path)

    def bad(doc):
        doc["agents"]["claude"]["args"] = 42

    with pytest.raises(SettingsError) as err:
        SettingsStore().update(bad)
    assert err.value.key == "agents.claude.args" and "not written" in str(err.value)
    with pytest.raises(SettingsError):
        SettingsStore().set_preference("max_agents", -2)
    assert snapshot(path) == before


def test_an_exception_in_the_change_writes_nothing():
    path = write(EXAMPLE)
    age(path)
    before = snapshot(path)

    def boom(doc):
        doc["preferences"]["theme"] = "changed"
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        SettingsStore().update(boom)
    with pytest.raises(IndexError):
        SettingsStore().remove_rule(5)
    assert snapshot(path) == before


def test_a_change_that_changes_nothing_does_not_write():
    path = write(EXAMPLE)
    age(path)
    before = snapshot(path)
    store = SettingsStore()
    store.set_agent_bypass("zed-claude-code", True)
    store.set_agent_bypass("claude", False)
    store.set_agent_bypass("unknown", False)
    store.set_preference("theme", "textual-dark")
    store.remove_agent("nobody")
    assert snapshot(path) == before
    SettingsStore().set_preference("theme", None)
    SettingsStore().set_preference("absent", None)
    assert "theme" not in Settings.load().preferences


# --- editing keeps a person's file -----------------------------------------------------------------


def test_comments_and_layout_survive_set_agent_bypass():
    path = write(EXAMPLE)
    new = SettingsStore().set_agent_bypass("claude", True)
    assert new.agents["claude"].bypass
    assert path.read_text() == EXAMPLE.replace(
        "bypass = false  # ask me first", "bypass = true  # ask me first"
    )
    SettingsStore().set_agent_bypass("zed-claude-code", False)
    SettingsStore().set_agent_bypass("Claude Code", True)  # an agent the extension names
    text = path.read_text()
    assert text.startswith(
        EXAMPLE.replace("bypass = false  # ask me first", "bypass = true  # ask me first").split(
            "[agents.zed-claude-code]"
        )[0]
    )
    assert "[agents.zed-claude-code]\nbypass = false\n" in text
    assert '[agents."Claude Code"]\nbypass = true\n' in text
    assert "# never let anyone delete things" in text and "# the dark one" in text
    s = Settings.load()
    assert s.bypass_agents() == {"claude", "Claude Code"}


def test_editing_operations_keep_comments():
    path = write(EXAMPLE)
    store = SettingsStore()
    store.set_preference("theme", "nord")
    store.add_rule(Rule("allow", kind="search"))
    store.remove_rule(1, expect=Rule("deny", title="rm *", agent="claude*", path="/srv"))
    store.upsert_agent(
        AgentConfig(
            id="claude",
            name="Claude Code",
            command="claude-acp",
            env={"ANTHROPIC_API_KEY": "sk-new"},
            description="Anthropic's agent",
            bypass=False,
        )
    )
    store.upsert_agent(AgentConfig(id="gemini", command="gemini", args=["--experimental-acp"]))
    store.remove_agent("zed-claude-code")
    text = path.read_text()
    assert "# My Symposium settings" in text and "# Claude through Zed's adapter" in text
    assert 'theme = "nord"   # the dark one' in text
    assert "bypass = false  # ask me first" in text
    assert "zed-claude-code" not in text and "rm *" not in text
    s = Settings.load()
    assert s.agents["claude"] == AgentConfig(
        id="claude",
        name="Claude Code",
        command="claude-acp",
        env={"ANTHROPIC_API_KEY": "sk-new"},
        description="Anthropic's agent",
    )
    assert s.agents["gemini"] == AgentConfig(
        id="gemini", command="gemini", args=["--experimental-acp"]
    )
    assert s.rules == [Rule("allow", kind="read"), Rule("allow", kind="search")]
    with pytest.raises(ValueError):
        store.remove_rule(0, expect=Rule("deny", kind="read"))
    store.add_rule(Rule("deny", kind="delete"), index=0)
    assert Settings.load().rules[0] == Rule("deny", kind="delete")


def test_a_rule_is_edited_in_place_and_moved_whole_with_its_comments():
    path = write(
        EXAMPLE
        + textwrap.dedent(
            """
            # ask before pushing
            [[rules]]
            action = "ask"   # a person decides
            command = "git push"
            match = ["git push origin main"]
            """
        )
    )
    store = SettingsStore()
    first, second, third = Settings.load().rules
    store.replace_rule(
        2, Rule("deny", command="git push", reason="frozen", match=["git push"]), expect=third
    )
    text = path.read_text()
    assert 'action = "deny"   # a person decides' in text and 'reason = "frozen"' in text
    assert text.index("# ask before pushing") < text.index('command = "git push"')
    edited = Settings.load().rules[2]
    assert edited == Rule("deny", command="git push", reason="frozen", match=["git push"])

    moved = store.move_rule(1, 0, expect=second)
    assert moved.rules == [second, first, edited]
    text = path.read_text()
    # the moved entry keeps its own comment, and [[rules]] entries stay a blank line apart
    assert text.index("# never let anyone delete things") < text.index('kind = "read"')
    assert '[[rules]]   # never let anyone delete things\naction = "deny"' in text
    assert 'kind = "read"\n\n[[rules]]' in text
    assert store.move_rule(0, 2, expect=second).rules == [first, edited, second]
    assert Settings.load().rules == [first, edited, second]
    assert "# My Symposium settings" in path.read_text()

    before = snapshot(path)
    with pytest.raises(ValueError, match="rule 1 is no longer"):
        store.move_rule(0, 1, expect=second)  # the file changed since it was shown
    with pytest.raises(IndexError, match="no place 4"):
        store.move_rule(0, 3)
    with pytest.raises(IndexError, match="no rule 4"):
        store.replace_rule(3, Rule("allow"))
    with pytest.raises(SettingsError, match="would break"):
        store.replace_rule(1, Rule("deny", command="git push", match=["git pull"]))
    assert snapshot(path) == before


def test_a_rule_added_before_another_table_is_kept_apart_from_it_by_a_blank_line():
    path = write('[[rules]]\naction = "allow"\nkind = "read"\n\n[agents.eliza]\nbypass = true\n')
    SettingsStore().add_rule(Rule("deny", command="rm"))
    assert path.read_text() == (
        '[[rules]]\naction = "allow"\nkind = "read"\n\n'
        '[[rules]]\naction = "deny"\ncommand = "rm"\n\n'
        "[agents.eliza]\nbypass = true\n"
    )


def test_inline_rules_and_dotted_agents_are_edited_in_their_own_style():
    path = write('agents.claude.command = "npx"\nrules = [{ action = "allow", kind = "read" }]\n')
    store = SettingsStore()
    store.set_agent_bypass("claude", True)
    store.add_rule(Rule("deny", kind="execute"))
    text = path.read_text()
    assert text == (
        'agents.claude.command = "npx"\nagents.claude.bypass = true\n'
        'rules = [{ action = "allow", kind = "read" }, {action = "deny", kind = "execute"}]\n'
    )
    s = Settings.load()
    assert s.agents["claude"].bypass and s.agents["claude"].command == "npx"
    assert s.rules == [Rule("allow", kind="read"), Rule("deny", kind="execute")]


def test_a_new_file_gets_a_header_and_tables():
    store = SettingsStore()
    store.set_agent_bypass("zed-claude-code", True)
    store.add_rule(Rule("allow", kind="read"))
    store.add_rule(Rule("deny", kind="execute"))
    store.set_preference("theme", "nord")
    text = settings_path().read_text()
    assert text.startswith("# Symposium TUI settings.")
    assert "[agents.zed-claude-code]\nbypass = true\n" in text
    assert (
        '[[rules]]\naction = "allow"\nkind = "read"\n\n[[rules]]\naction = "deny"\nkind = "execute"\n'
        in text
    )
    assert '[preferences]\ntheme = "nord"\n' in text
    removed = store.remove_rule(0)
    assert removed.rules == [Rule("deny", kind="execute")]


def test_a_symlinked_settings_file_is_written_through():
    real = settings_path().parent / "dotfiles" / "symposium.toml"
    write(EXAMPLE, real)
    settings_path().symlink_to(real)
    SettingsStore().set_agent_bypass("claude", True)
    assert settings_path().is_symlink()
    assert Settings.load(real).agents["claude"].bypass


# --- processes ------------------------------------------------------------------------------------

WORKER = """
import sys, time
from bridge.settings import SettingsStore
n, start = sys.argv[1], float(sys.argv[2])
while time.time() < start:
    time.sleep(0.001)
store = SettingsStore()
for i in range(25):
    store.set_preference(f"p{n}_{i}", i)
    store.set_agent_bypass(f"agent{n}_{i}", True)
print("ok")
"""


def test_concurrent_processes_lose_no_update():
    write(EXAMPLE)
    start = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(n), str(start)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (1, 2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    s = Settings.load()
    for n in (1, 2):
        for i in range(25):
            assert s.preferences[f"p{n}_{i}"] == i
            assert s.agents[f"agent{n}_{i}"].bypass
    assert len(s.preferences) == 5 + 50 and len(s.agents) == 2 + 50
    assert "# never let anyone delete things" in settings_path().read_text()


def test_concurrent_threads_lose_no_update():
    import threading

    store = SettingsStore()
    go = threading.Barrier(4)

    def work(n: int) -> None:
        go.wait()
        for i in range(15):
            store.add_rule(Rule("allow", title=f"t{n}-{i}"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    titles = {r.title for r in Settings.load().rules}
    assert titles == {f"t{n}-{i}" for n in range(4) for i in range(15)}


READER = """
import sys, os
from bridge.settings import Settings, SettingsError
stop = sys.argv[1]
loads = errors = 0
seen = set()
first_error = None
while not os.path.exists(stop):
    try:
        s = Settings.load()
        counter = s.preferences.get("counter")
        if counter not in seen:
            print("seen", counter, flush=True)  # the writer waits for these, now and then
        seen.add(counter)
        loads += 1
    except SettingsError as exc:
        errors += 1
        first_error = first_error or str(exc)
print(loads, errors, len(seen), first_error)
"""


def test_readers_never_see_a_half_written_file(tmp_path):
    store = SettingsStore()
    store.set_preference("counter", 0)
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(stop)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None

    def reader_saw(at_least: int) -> None:
        """Wait until the reader has loaded a counter of `at_least` or more (it is reading)."""
        while True:
            line = reader.stdout.readline()
            assert line.startswith("seen "), (line, reader.stderr.read() if not line else "")
            if int(line.split()[1]) >= at_least:
                return

    try:
        reader_saw(0)  # the reader is loading
        big = "x" * 20000  # many write() calls' worth, were the file written in place
        for i in range(1, 150):
            store.update(
                lambda doc, i=i: (
                    doc["preferences"].__setitem__("counter", i),
                    doc["preferences"].__setitem__("filler", big[: 1000 + (i * 997) % 19000]),
                )
            )
            if i % 25 == 0:  # the reads interleave with the writes, however busy the machine
                reader_saw(i)
    finally:
        stop.touch()
    out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    loads, errors, distinct, first_error = out.strip().splitlines()[-1].split(" ", 3)
    assert int(errors) == 0, first_error
    assert int(loads) >= 6 and int(distinct) >= 6


def test_permissions_dir_0700_file_0600():
    old = os.umask(0)
    try:
        path = settings_path()
        assert not path.parent.exists()
        SettingsStore().set_preference("theme", "nord")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(str(path) + ".lock").stat().st_mode) == 0o600
    # A file a person created world-readable (it may hold API keys) is 0600 after the next write.
    path.chmod(0o644)
    SettingsStore().set_preference("theme", "dark")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


# --- symposium-tui config -------------------------------------------------------------------------


def test_config_command_shows_the_settings():
    path = write(EXAMPLE)
    r = run_config()
    assert r.returncode == 0, r.stderr
    assert f"settings:    {path}" in r.stdout
    assert "claude (Claude Code): npx -y @zed-industries/claude-agent-acp" in r.stdout
    # An entry without a command: what it is for, and what it does not do.
    assert (
        "zed-claude-code: no command: settings only (its name and bypass apply when VS Code or "
        "`symposium-tui acp` runs it; the chat cannot start it)  [bypass]"
    ) in r.stdout
    assert "bypass (approvals skipped): zed-claude-code" in r.stdout
    assert (
        "1. allow kind=read" in r.stdout
        and "2. deny agent=claude* title=rm * path=/srv" in r.stdout
    )
    assert 'theme = "textual-dark"' in r.stdout
    assert "ANTHROPIC_API_KEY" in r.stdout and "sk-secret" not in r.stdout

    r = run_config("--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["path"] == str(path) and data["exists"] is True
    assert data["agents"]["claude"]["command"] == "npx"
    assert data["bypass_agents"] == ["zed-claude-code"]
    assert data["rules"][0] == {"action": "allow", "kind": "read"}
    assert data["preferences"]["max_agents"] == 16
    assert "sk-secret" not in r.stdout


def test_config_command_without_a_file():
    r = run_config()
    assert r.returncode == 0, r.stderr
    assert f"settings:    {settings_path()}  (not there yet" in r.stdout
    assert not settings_path().exists()
    assert json.loads(run_config("--json").stdout)["exists"] is False


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('[agents.claude]\ncommand = "npx"\nbypass true\n', 3),
        ('[agents.claude]\ncommand = "npx"\n\nargs = "nope"\n', 4),
    ],
)
def test_config_command_reports_a_broken_file_and_leaves_it(text, line):
    path = write(text)
    age(path)
    before = snapshot(path)
    r = run_config()
    assert r.returncode == 1
    assert f"{path} line {line}" in r.stderr
    assert snapshot(path) == before
    r = run_config("--json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["error"]["line"] == line
    assert snapshot(path) == before


# --- the approval policy ----------------------------------------------------------------------------


def test_policy_from_settings():
    policy = Settings.load(write(EXAMPLE)).policy()
    assert policy.bypass_agents == {"zed-claude-code"}
    assert policy.session_bypass == set()

    res = policy.decide(ctx("zed-claude-code", kind="execute", title="rm -rf build"))
    assert (res.outcome, res.option_id, res.resolver, res.rule) == (
        "allow_once",
        "yes",
        "policy",
        "agent bypass",
    )

    res = policy.decide(ctx("claude", kind="read", title="Read file"))
    assert (res.outcome, res.option_id) == ("allow_once", "yes") and res.rule.startswith("rule 1")

    res = policy.decide(
        ctx("claude-2", kind="execute", title="rm -rf build", path="/srv/app/build")
    )
    assert (res.outcome, res.option_id) == ("reject_once", "no") and res.rule.startswith("rule 2")

    assert (
        policy.decide(ctx("claude", kind="execute", title="rm -rf build", path="/home/x")) is None
    )
    assert policy.decide(ctx("claude", kind="edit")) is None

    # The console's Bypass answer persists, and the next policy includes it.
    SettingsStore().set_agent_bypass("claude", True)
    res = Settings.load().policy().decide(ctx("claude", kind="edit"))
    assert res.outcome == "allow_once" and res.rule == "agent bypass"


# --- a model check ----------------------------------------------------------------------------------

OPS = st.one_of(
    st.tuples(
        st.just("pref"),
        st.sampled_from(["custom", "a", "b.c", "with space"]),
        st.one_of(st.none(), st.text(max_size=8), st.integers(0, 10**6), st.booleans()),
    ),
    st.tuples(st.just("pref"), st.just("theme"), st.one_of(st.none(), st.text(max_size=8))),
    st.tuples(
        st.just("bypass"), st.sampled_from(["claude", "x", "Claude Code", "a.b"]), st.booleans()
    ),
    st.tuples(
        st.just("add_rule"),
        st.sampled_from(["allow", "deny"]),
        st.sampled_from([None, "read", "execute"]),
    ),
    st.tuples(st.just("remove_rule"), st.integers(0, 3), st.none()),
    st.tuples(st.just("move_rule"), st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.just("replace_rule"), st.integers(0, 3), st.sampled_from(["ask", "deny"])),
    st.tuples(st.just("remove_agent"), st.sampled_from(["claude", "x"]), st.none()),
)


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPS, max_size=12))
def test_edits_match_a_model(ops):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "settings.toml"
        write(EXAMPLE, path)
        store = SettingsStore(path)
        s = store.load()
        prefs, rules = dict(s.preferences), list(s.rules)
        bypass = {a: c.bypass for a, c in s.agents.items()}
        for op, a, b in ops:
            if op == "pref":
                store.set_preference(a, b)
                if b is None:
                    prefs.pop(a, None)
                else:
                    prefs[a] = b
            elif op == "bypass":
                store.set_agent_bypass(a, b)
                if a in bypass or b:
                    bypass[a] = b
            elif op == "add_rule":
                store.add_rule(Rule(a, kind=b))
                rules.append(Rule(a, kind=b))
            elif op == "remove_rule":
                if a < len(rules):
                    store.remove_rule(a)
                    del rules[a]
                else:
                    with pytest.raises(IndexError):
                        store.remove_rule(a)
            elif op == "move_rule":
                if a < len(rules) and b < len(rules):
                    store.move_rule(a, b, expect=rules[a])
                    rules.insert(b, rules.pop(a))
                else:
                    with pytest.raises(IndexError):
                        store.move_rule(a, b)
            elif op == "replace_rule":
                if a < len(rules):
                    store.replace_rule(a, Rule(b, title=f"t{a}"), expect=rules[a])
                    rules[a] = Rule(b, title=f"t{a}")
                else:
                    with pytest.raises(IndexError):
                        store.replace_rule(a, Rule(b))
            elif op == "remove_agent":
                store.remove_agent(a)
                bypass.pop(a, None)
            now = Settings.load(path)
            assert now.preferences == prefs
            assert now.rules == rules
            assert {k: c.bypass for k, c in now.agents.items()} == bypass
        assert tomlkit.parse(path.read_text())  # still a document tomlkit round-trips
        text = path.read_text()
        assert "# My Symposium settings" in text
