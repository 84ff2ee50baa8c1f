"""Tool calls shaped the way agents and their tools really send them, against the rules: a command
below the input's top level, the folder a command says it runs in, a fetch's prompt, a search of a
folder that holds a denied one, another spelling of this machine's address, an agent's name.

Each case that says a call reaches something is shown to reach it by something other than the
rules: the file really read in the folder the call names, a real socket connected."""

from __future__ import annotations

import glob
import json
import os
import socket
import subprocess

import pytest

from bridge.approvals import ApprovalContext, Policy
from bridge.rules import Request, Rule, RuleSet

DENY_RM = Rule("deny", command="rm -rf")
ALLOW_LS = Rule("allow", command=("ls", "cat", "echo"))


def decide(tool_call: dict, *rules: Rule, cwd: str | None = None, agent: str = "a") -> str | None:
    return RuleSet(rules).decide(Request.from_tool_call(agent, tool_call, cwd=cwd)).action


OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def on_bypass(tool_call: dict, *rules: Rule, cwd: str | None = None) -> str:
    """What an agent on bypass gets ("ask": a card, which its bypass does not answer)."""
    policy = Policy(rules=list(rules), bypass_agents={"a"})
    ctx = ApprovalContext("c", "s", "a", tool_call, OPTIONS, cwd=cwd)
    resolution = policy.decide(ctx)
    if resolution is None:
        return "ask"
    return {"yes": "allow", "no": "deny"}[resolution.option_id]


# --- a command below the top level --------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        {"server": "shell", "tool": "run", "arguments": {"command": "rm -rf /tmp/x"}},
        {"arguments": {"command": ["bash", "-c", "rm -rf /tmp/x"]}},
        {"arguments": {"cmd": "rm -rf /tmp/x"}},
        {"a": {"b": [{"command": "rm -rf /tmp/x"}]}},
        {"command": "ls", "cmd": "rm -rf /tmp/x"},  # two commands: the second is judged too
        {"command": "ls", "options": {"command": "rm -rf /tmp/x"}},
        {"arguments": {"script": "rm -rf /tmp/x"}},  # other keys a command is put under
        {"script": "rm -rf /tmp/x"},
        {"arguments": {"shell_command": "rm -rf /tmp/x"}},
        {"arguments": {"commandLine": "rm -rf /tmp/x"}},
        {"arguments": {"commands": ["ls", "rm -rf /tmp/x"]}},  # a list of commands: each one
    ],
)
def test_a_command_anywhere_in_a_calls_input_is_judged_and_denied_even_on_bypass(raw):
    call = {"title": "mcp__shell__run", "kind": "other", "rawInput": raw}
    assert decide(call, DENY_RM, ALLOW_LS) == "deny"
    assert on_bypass(call, DENY_RM, ALLOW_LS) == "deny"


def test_a_call_with_several_commands_is_allowed_only_when_each_is():
    both = {"kind": "other", "rawInput": {"command": "ls", "arguments": {"command": "cat x"}}}
    assert decide(both, ALLOW_LS) == "allow"
    one = {"kind": "other", "rawInput": {"command": "ls", "arguments": {"command": "id"}}}
    decision = RuleSet([ALLOW_LS]).decide(Request.from_tool_call("a", one))
    assert decision.action is None
    assert "'id'" in decision.why  # the command that is not allowed is named


def test_an_mcp_tools_own_command_is_allowed_as_a_top_level_one_is():
    nested = {"kind": "other", "rawInput": {"arguments": {"command": "ls -la"}}}
    assert decide(nested, ALLOW_LS) == "allow"


# --- the folder a command runs in ---------------------------------------------------------------


def key_tree(root):
    """`root/keys/id_rsa` (the secret), and `root/proj/sub/up`, a symlink to `keys`."""
    (root / "keys").mkdir()
    (root / "keys" / "id_rsa").write_text("secret key\n")
    (root / "proj" / "sub").mkdir(parents=True)
    (root / "proj" / "sub" / "up").symlink_to("../../keys")
    return root


@pytest.fixture
def tree(tmp_path):
    (key_tree(tmp_path) / "elsewhere").mkdir()
    return tmp_path


def really_reads(folder, command: str) -> str:
    """The oracle: what the command prints, run by bash in `folder`."""
    done = subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True, text=True)
    return done.stdout


@pytest.mark.parametrize(
    ("raw", "folder"),
    [
        ({"command": "cat up/id_rsa", "cwd": "{t}/proj/sub"}, "proj/sub"),
        ({"command": ["bash", "-lc", "cat up/id_rsa"], "workdir": "{t}/proj/sub"}, "proj/sub"),
        ({"command": "cat ../../keys/id_rsa", "dir_path": "{t}/proj/sub"}, "proj/sub"),
        ({"command": "cat up/id_rsa", "cwd": "sub"}, "proj/sub"),  # relative to the session's
    ],
)
def test_relative_paths_are_read_in_the_folder_the_command_says_it_runs_in(tree, raw, folder):
    raw = {k: v.replace("{t}", str(tree)) if isinstance(v, str) else v for k, v in raw.items()}
    command = raw["command"] if isinstance(raw["command"], str) else raw["command"][2]
    assert really_reads(tree / folder, command) == "secret key\n"  # it does reach the key
    call = {"title": "Bash", "kind": "execute", "rawInput": raw}
    deny = Rule("deny", path=str(tree / "keys"))
    session = str(tree / "proj") if raw.get("cwd") == "sub" else str(tree / "elsewhere")
    assert decide(call, deny, ALLOW_LS, cwd=session) == "deny"
    assert on_bypass(call, deny, ALLOW_LS, cwd=session) == "deny"


@pytest.mark.parametrize(
    "raw",
    [
        {"server": "sh", "tool": "run", "arguments": {"command": "cat up/id_rsa", "cwd": "{s}"}},
        {"arguments": {"cmd": "cat up/id_rsa", "working_dir": "{s}"}},
        {"command": "cat up/id_rsa", "workingDir": "{s}"},
        {"script": "cat up/id_rsa", "current_directory": "{s}"},
        {"arguments": {"command": "cat up/id_rsa", "options": {"cwd": "{s}"}}},  # Node's exec
    ],
)
def test_a_nested_command_is_read_in_the_folder_its_own_table_names(tree, raw):
    sub = str(tree / "proj" / "sub")
    assert really_reads(sub, "cat up/id_rsa") == "secret key\n"  # the oracle: it reaches the key
    deny = Rule("deny", path=str(tree / "keys" / "id_rsa"))
    raw = json.loads(json.dumps(raw).replace("{s}", sub))
    call = {"title": "mcp__sh__run", "kind": "other", "rawInput": raw}
    assert decide(call, deny, ALLOW_LS, cwd=str(tree / "elsewhere")) == "deny"
    assert on_bypass(call, deny, ALLOW_LS, cwd=str(tree / "elsewhere")) == "deny"


def test_a_write_is_allowed_only_inside_the_folder_the_command_runs_in(tree):
    allow_edit = Rule("allow", kind="edit", path=str(tree / "proj"))
    inside = {"kind": "execute", "rawInput": {"command": "echo x > notes.txt"}}
    assert decide(inside, ALLOW_LS, allow_edit, cwd=str(tree / "proj")) == "allow"
    elsewhere = {"kind": "execute", "rawInput": {"command": "echo x > notes.txt", "cwd": "/etc"}}
    assert decide(elsewhere, ALLOW_LS, allow_edit, cwd=str(tree / "proj")) is None


def test_a_path_through_proc_self_cwd_is_read_in_the_calls_folder_and_never_allowed(tree):
    path = "/proc/self/cwd/../keys/id_rsa"
    assert really_reads(tree / "proj", f"cat {path}") == "secret key\n"  # the oracle
    deny = Rule("deny", path=str(tree / "keys"))
    allow = Rule("allow", kind="read", path=str(tree / "proj"))
    read = {"kind": "read", "rawInput": {"file_path": path}}
    assert decide(read, deny, allow, cwd=str(tree / "proj")) == "deny"
    assert on_bypass(read, deny, allow, cwd=str(tree / "proj")) == "deny"
    assert on_bypass({"kind": "read", "rawInput": {"file_path": "/proc/1/cwd/x"}}, deny) == "ask"
    inside = {"kind": "read", "rawInput": {"file_path": "/proc/self/cwd/sub/a"}}
    assert decide(inside, allow, cwd=str(tree / "proj")) is None  # whose cwd is not known
    # a command's /proc/self/cwd is the folder it runs in; another process's is not known
    cat = {"kind": "other", "rawInput": {"arguments": {"command": f"cat {path}"}}}
    assert on_bypass(cat, deny, cwd=str(tree / "proj")) == "deny"
    other = {"kind": "execute", "rawInput": {"command": "cat /proc/1/cwd/x"}}
    assert on_bypass(other, deny) == "ask"


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("x=keys; cat ../$x/id_rsa", "ask"),  # the name, assigned in the command
        ("cat ../$(echo keys)/id_rsa", "ask"),  # …or printed by a `$(…)` in it
        ("cat ~+/../keys/id_rsa", "deny"),  # `~+` is $PWD
        ("cat ~-/id_rsa", "ask"),  # `~-` is $OLDPWD, any folder
        ("grep -R secret .", "ask"),  # it follows sub/up, a symlink to keys
        ("sort --files0-from=list", "ask"),  # the names of the files it reads, in a file
        ('for f in ../keys/*; do cat "$f"; done', "deny"),  # a loop's words name paths too
        ("x=ke; cat ../${x}ys/id_rsa", "ask"),  # a word that starts the folder's path
        ("x=ke; cat < ../${x}ys/id_rsa", "ask"),
        ("x=../ke; y=${x}ys; cat $y/id_rsa", "ask"),  # …in a value, then in another word
        ("echo keys | xargs -I{} cat ../{}/id_rsa", "ask"),  # xargs fills in the name
        ("echo ../key | sed s,$,s/id_rsa, | xargs cat", "ask"),  # …or gives it the paths
        ("HOME=..; cat ~/keys/id_rsa", "ask"),  # `~` after the command set HOME
        ("cd - >/dev/null && cat id_rsa", "ask"),  # `cd -` is `cd ~-`: $OLDPWD, any folder
    ],
)
def test_a_command_that_reaches_a_denied_folder_only_when_it_runs_is_asked(
    tree, monkeypatch, command, verdict
):
    proj = tree / "proj"
    (proj / "list").write_text(f"{tree}/keys/id_rsa\0")
    monkeypatch.setenv("OLDPWD", str(tree / "keys"))
    assert "secret" in really_reads(proj, command)  # the oracle: it reads the key
    deny = Rule("deny", path=str(tree / "keys"))
    call = {"kind": "execute", "rawInput": {"command": command}}
    allow = Rule("allow", command=("cat", "grep", "sort"))
    assert decide(call, deny, allow, cwd=str(proj)) == verdict
    assert on_bypass(call, deny, allow, cwd=str(proj)) == verdict


def test_a_folder_a_command_follows_links_down_is_walked_once_whatever_the_path_rules(
    tree, monkeypatch
):
    """Each deny or ask path rule asks whether `grep -R` meets a symlink into its folder: the
    folders are walked once a request, and each rule is answered from what the walk found."""
    import os

    from bridge.rules import links

    for name in ("a", "b", "c"):
        (tree / name).mkdir()
    (tree / "proj" / "deep" / "er").mkdir(parents=True)
    (tree / "proj" / "deep" / "er" / "to-c").symlink_to(tree / "c")
    walked: list[str] = []
    real_scandir = os.scandir

    def scandir(path):
        walked.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(links.os, "scandir", scandir)
    rules = [Rule("deny", path=str(tree / n)) for n in ("a", "b", "keys", "c")]
    call = {"kind": "execute", "rawInput": {"command": "grep -R secret ."}}
    allow = Rule("allow", command=("grep",))
    assert decide(call, *rules, allow, cwd=str(tree / "proj")) == "ask"
    assert sorted(walked) == sorted(set(walked))  # no folder twice
    assert {os.path.relpath(w, tree) for w in walked} == {
        "proj",
        "proj/sub",
        "proj/deep",
        "proj/deep/er",
    }
    walked.clear()
    quiet = [Rule("deny", path=str(tree / n)) for n in ("a", "b")]  # no link leads into these
    assert decide(call, *quiet, allow, cwd=str(tree / "proj")) == "allow"
    assert len(walked) == 4


# --- a fetch's prompt ---------------------------------------------------------------------------

DENY_EVIL = Rule("deny", url="https://evil.example/")
ALLOW_DOCS = Rule("allow", kind="fetch", url="https://docs.python.org/3/")


@pytest.mark.parametrize(
    "prompt",
    [
        "Compare https://docs.python.org/3/ with https://evil.example/x",
        "Summarize HTTPS://evil.example/x",  # a browser reads the scheme in any case
    ],
)
def test_every_url_in_a_fetchs_prompt_is_judged(prompt):
    call = {"title": "web_fetch", "kind": "fetch", "rawInput": {"prompt": prompt}}
    assert decide(call, DENY_EVIL, ALLOW_DOCS) == "deny"
    assert on_bypass(call, DENY_EVIL, ALLOW_DOCS) == "deny"


def test_an_allowed_url_in_a_prompt_does_not_carry_another_one_with_it():
    one = {"kind": "fetch", "rawInput": {"prompt": "Summarize https://docs.python.org/3/x"}}
    assert decide(one, ALLOW_DOCS) == "allow"
    two = {
        "kind": "fetch",
        "rawInput": {"prompt": "https://docs.python.org/3/ and https://b.example/"},
    }
    assert decide(two, ALLOW_DOCS) is None


# --- a search of a folder that holds a denied one -----------------------------------------------


def test_a_search_of_a_folder_holding_a_denied_one_is_asked_even_on_bypass(tree):
    (tree / "proj" / "secret").mkdir()
    (tree / "proj" / "secret" / "key").write_text("k\n")
    deny = Rule("deny", path=str(tree / "proj" / "secret"))
    allow = Rule("allow", kind="search", path=str(tree / "proj"))
    # the oracle: a recursive search of the project prints the secret
    found = subprocess.run(["grep", "-r", "k", str(tree / "proj")], capture_output=True, text=True)
    assert "secret/key" in found.stdout
    search = {"kind": "search", "rawInput": {"pattern": "k", "path": str(tree / "proj")}}
    assert decide(search, deny, allow) == "ask"
    assert on_bypass(search, deny, allow) == "ask"
    in_cwd = {"kind": "search", "rawInput": {"pattern": "k"}}  # no path: the folder it runs in
    assert decide(in_cwd, deny, allow, cwd=str(tree / "proj")) == "ask"
    folder_read = {"kind": "read", "rawInput": {"paths": [str(tree / "proj")]}}
    assert decide(folder_read, deny) == "ask"
    beside = {"kind": "search", "rawInput": {"pattern": "k", "path": str(tree / "proj" / "sub")}}
    assert decide(beside, deny, allow) == "allow"
    a_file = {"kind": "read", "rawInput": {"file_path": str(tree / "proj" / "sub" / "a")}}
    assert decide(a_file, deny, Rule("allow", kind="read", path=str(tree / "proj"))) == "allow"


def test_a_tool_not_known_given_a_folder_holding_a_denied_one_is_asked_even_on_bypass(tree):
    # an MCP filesystem server's search_files, Codex's grep_files: kind "other"
    found = subprocess.run(["grep", "-r", "secret", str(tree)], capture_output=True, text=True)
    assert "keys/id_rsa" in found.stdout  # the oracle: what is under the folder is read
    deny = Rule("deny", path=str(tree / "keys"))
    raw = {"server": "fs", "tool": "search_files", "arguments": {"path": str(tree)}}
    call = {"title": "mcp__fs__search_files", "kind": "other", "rawInput": raw}
    assert decide(call, deny) == "ask"
    assert on_bypass(call, deny) == "ask"
    a_file = {"kind": "other", "rawInput": {"arguments": {"path": str(tree / "proj" / "x")}}}
    assert on_bypass(a_file, deny) == "allow"  # a file, not a folder: nothing below it
    no_path = {"kind": "other", "rawInput": {"arguments": {"q": "x"}}}
    assert on_bypass(no_path, deny, cwd=str(tree)) == "allow"  # not the folder it runs in
    # its glob leaves the folder it is given: where it walks is judged (`../../keys/*` from sub)
    args = {"path": str(tree / "proj" / "sub"), "pattern": "../../keys/*"}
    assert "keys/id_rsa" in str(glob.glob(args["pattern"], root_dir=args["path"]))  # the oracle
    climbs = {"kind": "other", "rawInput": {"server": "fs", "tool": "search", "arguments": args}}
    assert on_bypass(climbs, deny) == "deny"


def test_a_delete_or_move_of_a_folder_holding_a_denied_one_is_stopped_even_on_bypass(tree):
    copy = tree / "copy"
    subprocess.run(["cp", "-r", str(tree / "proj"), str(copy)], check=True)
    (copy / "keys").mkdir()
    subprocess.run(["rm", "-r", str(copy)], check=True)  # the oracle: the folder goes with it
    assert not (copy / "keys").exists()
    deny = Rule("deny", path=str(tree / "keys"))
    delete = {"kind": "delete", "rawInput": {"path": str(tree)}}
    assert decide(delete, deny) == "deny"
    assert on_bypass(delete, deny) == "deny"
    move = {"kind": "move", "rawInput": {"source": str(tree), "destination": "/tmp/elsewhere"}}
    assert on_bypass(move, deny) == "ask"  # (a destination that holds it would be no harm)
    a_file = {"kind": "delete", "rawInput": {"path": str(tree / "proj" / "sub" / "a")}}
    assert on_bypass(a_file, deny) == "allow"


@pytest.mark.parametrize(
    ("raw", "verdict"),
    [
        ({"pattern": "../keys/*", "path": "{t}/proj"}, "deny"),  # Claude Code's Glob
        ({"pattern": "{t}/keys/*", "path": "{t}/proj"}, "deny"),  # an absolute pattern
        ({"pattern": "sub/../../keys/*", "path": "{t}/proj"}, "deny"),
        ({"pattern": "*/../../keys/*", "path": "{t}/proj"}, "ask"),  # climbs from a word
        ({"pattern": "../*/id_rsa", "dir_path": "{t}/proj"}, "ask"),  # Gemini CLI's glob
        ({"pattern": "{{t}/keys,x}/*", "path": "{t}/proj"}, "ask"),  # a brace: anywhere
        ({"paths": ["{t}/proj/../*/id_rsa"]}, "ask"),  # read_many_files: paths are globs
        ({"include": "../keys/*", "paths": ["{t}/proj"]}, "deny"),
        ({"pattern": "sub/up/*", "path": "{t}/proj"}, "deny"),  # through a symlink inside
        ({"pattern": "*/up/id_rsa", "path": "{t}/proj"}, "deny"),  # a wildcard, then a symlink
        ({"pattern": "sub/*/*", "path": "{t}/proj"}, "deny"),  # a wildcard matching a symlink
        ({"paths": ["{t}/proj/sub/*"]}, "deny"),  # a read of what a wildcard matches
    ],
)
def test_a_glob_that_leaves_the_searched_folder_is_judged_where_it_walks(tree, raw, verdict):
    raw = {k: v.replace("{t}", str(tree)) if isinstance(v, str) else v for k, v in raw.items()}
    raw = {k: [p.replace("{t}", str(tree)) for p in v] if isinstance(v, list) else v
           for k, v in raw.items()}  # fmt: skip
    glob_text = raw.get("pattern") or raw.get("include") or raw["paths"][0]
    # the oracle: a real glob, read in the searched folder, reaches the key
    braces = subprocess.run(
        ["bash", "-O", "globstar", "-c", f"printf '%s\\n' {glob_text}"],
        cwd=tree / "proj",
        capture_output=True,
        text=True,
    )
    reached = [os.path.realpath(tree / "proj" / line) for line in braces.stdout.split()]
    assert any(r.startswith(str(tree / "keys")) for r in reached)
    deny = Rule("deny", path=str(tree / "keys"))
    allow = [Rule("allow", kind=k, path=str(tree / "proj")) for k in ("search", "read")]
    for kind in ("search", "read"):
        call = {"kind": kind, "rawInput": raw}
        assert decide(call, deny, *allow) == verdict
        assert on_bypass(call, deny, *allow) == verdict
        assert decide(call, *allow) is None  # the allow of the project does not reach the key
    inside = {"kind": "search", "rawInput": {"pattern": "**/*.py", "path": str(tree / "proj")}}
    assert decide(inside, deny, *allow) == "allow"


# --- this machine, however it is spelled --------------------------------------------------------


@pytest.fixture
def listening():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


@pytest.mark.parametrize("host", ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0", "localhost"])
def test_a_deny_on_this_machines_address_catches_its_other_spellings(listening, host):
    # the oracle: a connection to that spelling reaches the server bound to 127.0.0.1 only
    with socket.create_connection((host.strip("[]"), listening), timeout=10):
        pass
    deny = Rule("deny", url="http://127.0.0.1/")
    call = {"kind": "fetch", "rawInput": {"url": f"http://{host}:{listening}/"}}
    assert on_bypass(call, deny) == "deny"
    curl = {"kind": "execute", "rawInput": {"command": f"curl http://{host}:{listening}/"}}
    assert on_bypass(curl, deny) == "deny"
    other = {"kind": "fetch", "rawInput": {"url": f"http://192.0.2.1:{listening}/"}}
    assert on_bypass(other, deny) == "allow"


@pytest.mark.parametrize(
    "raw",
    [
        {"server": "http", "tool": "get", "arguments": {"host": "localhost", "port": "{p}"}},
        {"hostname": "0.0.0.0", "port": "{p}"},
        {"address": "127.1:{p}"},
        {"query": "x", "allowed_domains": ["localhost"]},  # WebSearch
    ],
)
def test_a_host_named_under_a_host_key_is_judged_by_deny_url_rules(listening, raw):
    raw = json.loads(json.dumps(raw).replace("{p}", str(listening)))
    host = raw.get("arguments", raw).get("host") or raw.get("hostname") or "localhost"
    host = "127.1" if "address" in raw else host
    with socket.create_connection((host, listening), timeout=10):  # the oracle: it reaches
        pass
    deny = Rule("deny", url="http://127.0.0.1/")
    for kind in ("other", "fetch"):
        assert on_bypass({"kind": kind, "rawInput": raw}, deny) == "deny"
    elsewhere = {"kind": "other", "rawInput": {"host": "192.0.2.1"}}
    assert on_bypass(elsewhere, deny) == "allow"


# --- an agent's name ----------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["claude_code", "claude-code", "Claude-Code"])
def test_an_agent_is_named_in_a_rule_however_its_door_spells_it(agent):
    deny = Rule("deny", agent="claude-code", command="make")
    call = {"kind": "execute", "rawInput": {"command": "make"}}
    assert decide(call, deny, agent=agent) == "deny"
    assert decide(call, Rule("deny", agent="claude_*", command="make"), agent=agent) == "deny"
    assert decide(call, deny, agent="codex") is None


# --- a shell command that goes down a folder above a denied one --------------------------------


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("rm -rf {t}", "deny"),  # takes the denied folder along
        ("rm -r {t}", "deny"),
        ("mv {t} {t}-moved", "deny"),
        ("cd {t} && rm -rf .", "deny"),
        ("grep -r secret {t}", "ask"),  # reads what is inside: the pattern decides when it runs
        ("cd {t} && grep -rn secret .", "ask"),
        ("tar cf /dev/null {t}", "ask"),
        ("find {t} -type f", "ask"),
        ("chmod -R a+r {t}", "ask"),
    ],
)
def test_a_command_that_goes_down_a_folder_above_a_denied_one_is_that_rules(
    tmp_path, command, verdict
):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id_rsa").write_text("secret key\n")
    command = command.replace("{t}", str(tmp_path))
    deny = Rule("deny", path=str(tmp_path / "keys"))
    call = {"kind": "execute", "rawInput": {"command": command}}
    assert decide(call, deny, ALLOW_LS, Rule("allow", command=("grep", "find", "tar"))) == verdict
    assert on_bypass(call, deny) == ("deny" if verdict == "deny" else "ask")


def test_the_oracle_sees_a_recursive_command_reach_inside_the_denied_folder(tmp_path):
    # what the verdicts above rest on, by bash itself: grep -r prints the key, rm -r removes it
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id_rsa").write_text("secret key\n")
    assert "secret key" in really_reads(tmp_path, f"grep -r secret {tmp_path}")
    really_reads(tmp_path.parent, f"rm -r {tmp_path}")
    assert not (tmp_path / "keys" / "id_rsa").exists()


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf $HOME",
        'rm -rf "${HOME}/"',
        "mv $HOME $HOME-moved",
        "rm -r {t}/../{home,none}",
        "rm -rf {t}/k*",
        "rm -rf {t}/ke?s",
        "cd $HOME && rm -rf ./{keys,x}",
        "rm -rf ~/[k]eys",
    ],
)
def test_every_spelling_bash_expands_to_a_folder_above_a_denied_one_is_that_rules(
    tmp_path, monkeypatch, command
):
    """`$HOME`, braces and globs in a delete's or move's operands are read as bash reads them. The
    oracle is bash, run with the same HOME in the folder above: the key must really go."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    command = command.replace("{t}", str(home))

    def make() -> None:
        (home / "keys").mkdir(parents=True, exist_ok=True)
        (home / "keys" / "id_rsa").write_text("secret key\n")

    make()
    subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env={**os.environ, "HOME": str(home)}, check=False
    )
    assert not (home / "keys" / "id_rsa").exists(), f"bash left the key: {command!r}"
    make()
    deny = Rule("deny", path=str(home / "keys"))
    call = {"kind": "execute", "rawInput": {"command": command}}
    assert decide(call, deny, cwd=str(tmp_path)) == "deny", command
    assert on_bypass(call, deny, cwd=str(tmp_path)) == "deny", command


def test_relative_words_after_a_cd_to_a_folder_only_known_when_it_runs_are_asked(tmp_path):
    """`cd $DIR && rm -rf -- *`: DIR is the agent's, not the rules' to know — with DIR set to the
    folder that holds the denied one, bash removes it. Asked, bypass included; a `cd` the rules
    can follow is read as before."""
    data, work = tmp_path / "data", tmp_path / "work"
    (data / "keys").mkdir(parents=True)
    (data / "keys" / "id_rsa").write_text("secret key\n")
    (work / "build").mkdir(parents=True)
    command = "cd $DIR && rm -rf -- *"
    env = {**os.environ, "DIR": str(data)}
    subprocess.run(["bash", "-c", command], cwd=work, env=env, check=False)
    assert not (data / "keys").exists()  # the oracle: it did take the denied folder
    assert (work / "build").exists()
    deny = Rule("deny", path=str(data / "keys"))
    call = {"kind": "execute", "rawInput": {"command": command}}
    assert decide(call, deny, cwd=str(work)) == "ask"
    assert on_bypass(call, deny, cwd=str(work)) == "ask"
    plain = {"kind": "execute", "rawInput": {"command": f"cd {work} && rm -rf -- *"}}
    assert on_bypass(plain, deny, cwd=str(work)) == "allow"


@pytest.mark.parametrize(
    "command", ["ls {t}", "grep secret {t}/notes.txt", "rm -rf {t}/build", "cat {t}/notes.txt"]
)
def test_a_command_that_does_not_go_down_a_folder_above_a_denied_one_is_not(tmp_path, command):
    (tmp_path / "keys").mkdir()
    call = {"kind": "execute", "rawInput": {"command": command.replace("{t}", str(tmp_path))}}
    assert decide(call, Rule("deny", path=str(tmp_path / "keys")), ALLOW_LS) != "deny"
    assert on_bypass(call, Rule("deny", path=str(tmp_path / "keys"))) == "allow"


def test_a_glob_naming_a_program_is_looked_at_again_for_each_call(tmp_path):
    """`ln -s DIR/r[m] x; ./x -rf /` runs rm when DIR holds it: a glob's files are read for each
    call, never kept, so one made after an earlier call is still seen."""
    folder = tmp_path / "bin"
    folder.mkdir()
    command = f"ln -s {folder}/r[m] x; ./x -rf /"
    call = {"kind": "execute", "rawInput": {"command": command}}
    deny = Rule("deny", command=("rm -rf",))
    assert on_bypass(call, deny) == "allow"  # the glob matches nothing: it names no program
    (folder / "rm").write_bytes(b"#!/bin/sh\n")  # (any file of that name: the glob names it)
    assert on_bypass(call, deny) == "ask"  # now it names rm
