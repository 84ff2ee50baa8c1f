"""The command corpus (cases.py) under the rules of settings.toml, decided by the real approval
broker for an agent asking normally and for one on bypass; the example rules of
docs/approval-rules.md doing what it says; and an oracle that is not our parser — every command
the rules allow, run in a sandbox under strace, starts only programs an allow rule names."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bridge import events as ev
from bridge.approvals import ApprovalBroker, ApprovalContext, Policy
from bridge.settings import Settings, SettingsError
from tests.bridge.corpus.cases import CASES

HERE = Path(__file__).parent
SETTINGS = Settings.load(HERE / "settings.toml")
RULES_DOC = HERE.parents[2] / "docs" / "approval-rules.md"
OPTIONS = [
    {"optionId": "a", "name": "Allow", "kind": "allow_once"},
    {"optionId": "r", "name": "Reject", "kind": "reject_once"},
]


def tool_call(request: Any) -> dict[str, Any]:
    if isinstance(request, dict):
        return {"toolCallId": "t", **request}
    return {
        "toolCallId": "t",
        "title": request,
        "kind": "execute",
        "rawInput": {"command": request},
    }


async def verdict(request: Any, *, bypass: bool) -> str:
    """What the broker does with the request: "allow" or "deny" by policy, "ask" when it goes to
    a person (no console is attached here, so the broker then denies it by default)."""
    policy = Policy(bypass_agents={"agent"} if bypass else set(), rules=list(SETTINGS.rules))
    broker = ApprovalBroker(ev.EventBus(), policy=policy)
    ctx = ApprovalContext("c", "s", "agent", tool_call(request), OPTIONS, cwd=str(HERE))
    resolution = await broker.request(ctx)
    if resolution.resolver == "policy":
        return {"allow_once": "allow", "reject_once": "deny"}[resolution.outcome]
    assert resolution.resolver == "default" and resolution.outcome == "reject_once"
    return "ask"


def case_id(case: tuple[str, Any, str, str]) -> str:
    text = case[1] if isinstance(case[1], str) else repr(case[1])
    return f"{case[0]}: {text!r}"[:90]


def test_the_corpus_covers_every_category_with_enough_cases() -> None:
    categories = {c[0] for c in CASES}
    assert len(CASES) >= 220
    assert categories >= {"spellings", "wrappers", "interpreters", "heredocs", "env assignments",
                          "dangerous options", "redirections", "rawInput shapes",
                          "control characters", "harmless"}  # fmt: skip
    assert sum(1 for c in CASES if c[2] == "allow") >= 30  # "ask for everything" does not pass


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_each_request_gets_its_verdict_for_a_normal_and_a_bypassed_agent(case) -> None:
    _category, request, normal, bypassed = case

    async def both() -> tuple[str, str]:
        return await verdict(request, bypass=False), await verdict(request, bypass=True)

    assert asyncio.run(both()) == (normal, bypassed)


# --- rules explain -------------------------------------------------------------------------------


def explain(*args: str) -> dict[str, Any]:
    script = Path(sys.executable).with_name("symposium-tui")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "symposium_tui"]
    out = subprocess.run(
        [*command, "rules", "explain", "--file", str(HERE / "settings.toml"), "--json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize(
    ("argv", "script"),
    [
        (["git", "status"], "git status"),
        (["bash", "-c", "git status"], "bash -c 'git status'"),
        (["sh", "-c", "rm -Rf /"], "rm -rf /"),
        (["git", "log", "--output=x"], "git log --output=x"),
        (["python3", "-c", "import os; os.system('rm -rf /')"], "echo 'rm -rf /' | bash"),
    ],
)
def test_rules_explain_gives_one_verdict_however_the_request_is_written(argv, script) -> None:
    as_argv = explain("--", *argv)
    as_json = explain(json.dumps({"title": "x", "kind": "execute", "rawInput": {"command": argv}}))
    as_script = explain(
        json.dumps({"title": "x", "kind": "execute", "rawInput": {"command": script}})
    )
    assert as_argv["verdict"] == as_json["verdict"] == as_script["verdict"]
    assert as_argv["parts"] == as_json["parts"]
    for explained in (as_argv, as_json, as_script):  # the part lines agree with the verdict
        actions = [p["action"] for p in explained["parts"]]
        if explained["verdict"] == "allow":
            assert all(a == "allow" or p["role"] == "wrapper"
                       for a, p in zip(actions, explained["parts"], strict=True))  # fmt: skip
        else:
            assert explained["verdict"] in actions or None in actions, explained
        assert ("deny" in actions) == (explained["verdict"] == "deny"), explained


# --- the documented example rules (docs/approval-rules.md) -----------------------------------------


def documented_rules() -> str:
    """docs/approval-rules.md's example rules (the TOML block with `[[rules]]`)."""
    text = RULES_DOC.read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, re.DOTALL)
    return next(b for b in blocks if "[[rules]]" in b and "git push --force" in b)


def test_the_documented_example_rules_do_what_the_document_says(tmp_path) -> None:
    text = documented_rules()
    # the document shows an example that fails ("`cat` is not allowed → file refused")
    with pytest.raises(SettingsError) as err:
        Settings.parse(text, tmp_path / "settings.toml")
    assert "git status -s && git diff | cat" in str(err.value)
    settings = Settings.parse(
        re.sub(r"match = \[\"git status -s && git diff \| cat\"\].*\n", "", text)
    )
    home = os.path.expanduser("~")

    def decide(request: Any, *, bypass: bool = False) -> str:
        return asyncio.run(verdict_under(settings, request, bypass=bypass))

    # "never force-push, whoever asks — bypass included"
    for command in ("git push --force origin main", "git push -f", "git push origin +main",
                    "cd x && rm -rf build", "rm -Rf /", "sudo rm --recursive --force /"):  # fmt: skip
        assert decide(command) == "deny" and decide(command, bypass=True) == "deny", command
    assert decide("git push origin feature") == "ask"
    # "read-only git, for every agent"
    for command in ("git status", "git diff", "git log --oneline -5", "git status -s && git diff"):
        assert decide(command) == "allow", command
    assert decide("git status -s && git diff | cat") == "ask"  # `cat` is not allowed
    assert decide("git -c core.pager=id log") == "ask"  # not read-only: not covered
    # an edit by claude* inside ~/src/project; a fetch under the Python docs
    edit = {"title": "Edit", "kind": "edit",
            "rawInput": {"file_path": f"{home}/src/project/a.py"}}  # fmt: skip
    assert decide({**edit}) == "ask"  # the agent here is not claude*
    assert asyncio.run(verdict_under(settings, edit, agent="claude-code")) == "allow"
    fetch = {"title": "Fetch", "kind": "fetch",
             "rawInput": {"url": "https://docs.python.org/3/library/os.html"}}  # fmt: skip
    assert decide(fetch) == "allow"


async def verdict_under(
    settings: Settings, request: Any, *, bypass: bool = False, agent: str = "agent"
) -> str:
    policy = Policy(bypass_agents={agent} if bypass else set(), rules=list(settings.rules))
    broker = ApprovalBroker(ev.EventBus(), policy=policy)
    ctx = ApprovalContext("c", "s", agent, tool_call(request), OPTIONS)
    resolution = await broker.request(ctx)
    if resolution.resolver == "policy":
        return {"allow_once": "allow", "reject_once": "deny"}[resolution.outcome]
    return "ask"


# --- an oracle that is not our parser -------------------------------------------------------------

ALLOWED_COMMANDS = [c for c in CASES if isinstance(c[1], str) and c[2] == "allow"]
BWRAP = shutil.which("bwrap")
STRACE = shutil.which("strace")


def allowed_programs() -> set[str]:
    """The programs allow rules name (their first words), and what the rules let through without
    a rule of its own, by design: a shell running a script (`sh -c 'ls'`: the script's commands
    decide) and a harmless wrapper (`timeout 5 ls`: the command it runs decides)."""
    from bridge.shell import SHELLS, WRAPPERS

    names = set(SHELLS) | {name for name, spec in WRAPPERS.items() if spec.role == "wrapper"}
    for rule in SETTINGS.rules:
        if rule.action == "allow":
            names.update(p.split()[0] for p in rule.command or ())
    return names


def sandboxed(command: str, work: Path) -> list[str]:
    """Run `command` with bash in a sandbox — the root read-only, `work` the only writable folder
    (and /tmp/symposium-corpus-allowed, which an allow rule lets commands write), no network —
    under strace; the programs it started, in order (paths as execve got them)."""
    allowed_dir = Path("/tmp/symposium-corpus-allowed")
    allowed_dir.mkdir(exist_ok=True)
    trace = work / ".trace"
    argv = [
        BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--tmpfs", "/tmp", "--bind", str(work), str(work), "--bind", str(allowed_dir),
        str(allowed_dir), "--unshare-net", "--unshare-user-try", "--die-with-parent",
        "--chdir", str(work), "--setenv", "HOME", str(work), "--setenv", "GIT_CONFIG_NOSYSTEM", "1",
        STRACE, "-f", "-qq", "-e", "trace=execve", "-e", "signal=none", "-o", str(trace),
        "bash", "-c", command,
    ]  # fmt: skip
    subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
    programs = []
    for line in trace.read_text().splitlines():
        found = re.search(r'execve\("([^"]+)"', line)
        if found and "= 0" in line.rsplit(")", 1)[-1] + line[-5:]:
            programs.append(found.group(1))
    trace.unlink()
    return programs


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("work")
    (folder / "README.md").write_text("TODO: a line\nmore\n")
    (folder / "src").mkdir()
    (folder / "src" / "a.py").write_text("print(1)\n")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(folder)}
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t",
                 "commit", "-qm", "one"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)
    (folder / "src" / "a.py").write_text("print(2)\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two"],
                   cwd=folder, env=env, check=True, capture_output=True)  # fmt: skip
    return folder


@pytest.mark.skipif(BWRAP is None or STRACE is None, reason="needs bubblewrap and strace")
@pytest.mark.parametrize("case", ALLOWED_COMMANDS, ids=case_id)
def test_an_allowed_command_starts_only_programs_an_allow_rule_names(case, work) -> None:
    command = case[1]
    programs = sandboxed(command, work)
    assert programs, "the sandbox ran nothing: strace saw no execve"
    started = {os.path.basename(p) for p in programs}
    assert started <= allowed_programs(), (command, programs)


@pytest.mark.skipif(BWRAP is None or STRACE is None, reason="needs bubblewrap and strace")
def test_the_oracle_sees_a_program_the_rules_do_not_name(work) -> None:
    # the oracle can fail: a command that starts `id` (named by no allow rule) is seen
    programs = sandboxed("ls && id && timeout 5 whoami", work)
    started = {os.path.basename(p) for p in programs}
    assert {"ls", "id", "timeout", "whoami"} <= started
    assert not {"id", "whoami"} & allowed_programs()


# --- the attacker's spellings, run: each really runs what the rules stop ----------------------------

ATTACKS = [c for c in CASES if c[0] == "attacker spellings" and c[2] != "allow"]
# Spellings whose program is not here, cannot start in the sandbox, or whose effect is not a
# command it starts: their verdicts are still checked above, not what they run.
UNRUNNABLE = {
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log": "a pager "
    "runs only on a terminal",
    "printf -v PATH %s /tmp/evil; ls": "it changes where later commands are found",
    "read PATH <<< /tmp/evil; ls": "it changes where later commands are found",
    "declare -n r=PATH; r=/tmp/evil; ls": "it changes where later commands are found",
    "local -n r; r=PATH": "`local` outside a function is refused; in one, it names a variable",
    "PROMPT_COMMAND='rm -rf /'": "PROMPT_COMMAND runs before an interactive shell's prompt",
    "git -c clean.requireForce=false clean -d -n": "what it would do is read from its "
    "configuration, not its argv (with -n it only lists what it would remove)",
    "git log --show-signature -1": "git runs gpg only for a signed commit (these are not)",
    "git log -1 --format=%G?": "git runs gpg only for a signed commit (these are not)",
    "git log -1 --format='%+G?'": "git runs gpg only for a signed commit (these are not)",
    "TF_CLI_ARGS_apply=-destroy terraform apply -auto-approve": "there is no configuration for "
    "terraform to apply in the work folder",
    "git config clean.requireForce false; git clean -dxn": "what it does is read from the "
    "setting it writes into the shared work folder's .git/config (not run: later cases share it)",
    "for HOME in /tmp; do git status; done": "it changes where git reads its configuration",
    "git diff $(cat /tmp/refs)": "its words come from a file that is not here",
    "echo pwned > /tmp/symposium-corpus-allowed/.\\\n./escaped": "it writes a file, outside the "
    "folder an allow rule names (the sandbox's /tmp is its own)",
    **dict.fromkeys(
        (
            "x=..; echo pwned > /tmp/symposium-corpus-allowed/$x/escaped",
            "echo pwned > /tmp/symposium-corpus-allowed/$(echo ..)/escaped",
            "echo pwned | tee /tmp/symposium-corpus-allowed/{a,../escaped}",
            "echo pwned > /tmp/symposium-corpus-allowed/f*",
        ),
        "it writes a file outside the folder an allow rule names, through `..` or a symlink in "
        "it (the sandbox's /tmp is its own, without that folder)",
    ),
    "ssh-agent ls": "its socket is made in the sandbox's own /tmp",
    "printf '[core]\\n\\tfsmonitor = rm -rf /\\n' >> .git/modules/sub/config; git status": "the "
    "work folder has no submodule (with one, git status runs the fsmonitor: shown by hand)",
    "unbuffer rm -rf /": "unbuffer (expect) is not installed",
    "nocache git push --force": "nocache is not installed",
    "sg root -c 'rm -rf /'": "sg cannot change group in the sandbox's user namespace",
    "git --config-env=alias.p=P p": "its alias comes from the environment, here unset",
    "BASH_ENV=/tmp/x bash -c 'ls'": "the file BASH_ENV names is not here (what it runs is not "
    "known: that is why it is asked)",
    **dict.fromkeys(
        (
            'LC_ALL=zh_TW.BIG5 bash -c \'echo "両\\"; rm -rf /; #"\'',
            'LC_ALL=zh_TW.BIG5\necho "両\\"; rm -rf /; #"',
        ),
        "the machine has no BIG5 locale (with one, built by localedef and found by LOCPATH, bash "
        "runs rm: shown by hand)",
    ),
    "sed -n 1p *": "it needs a file named like an option in the work folder (`-i`: with one, sed "
    "edits the other files in place: shown by hand)",
    **dict.fromkeys(
        ("sudo -s <<< 'rm -rf /'", "su <<< 'rm -rf /'"),
        "sudo and su cannot change user in the sandbox (`setarch x86_64` and `chroot /` show "
        "the shell a wrapper starts reading its input)",
    ),
}


def sandboxed_commands(command: str, work: Path) -> list[list[str]]:
    """Run `command` with bash in the sandbox of `sandboxed` (its input empty), with git tracing
    on; every command that ran: each program's argv (as execve got it) and each git command git ran in itself
    (an alias, a builtin: `GIT_TRACE`)."""
    trace, git_trace = work / ".trace", work / ".git-trace"
    argv = [
        BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", str(work), str(work), "--unshare-net", "--unshare-user-try",
        "--die-with-parent", "--chdir", str(work), "--setenv", "HOME", str(work),
        "--setenv", "GIT_CONFIG_NOSYSTEM", "1", "--setenv", "GIT_TRACE", str(git_trace),
        STRACE, "-f", "-qq", "-s", "256", "-e", "trace=execve", "-e", "signal=none",
        "-o", str(trace), "bash", "-c", command,
    ]  # fmt: skip
    subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
    ran = []
    for line in trace.read_text().splitlines():
        found = re.search(r"execve\(\"([^\"]+)\", \[(.*?)\]", line)
        if found and line.rstrip().endswith("= 0"):  # the program run, by its path's name
            argv = re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(2))
            ran.append([os.path.basename(found.group(1)), *argv[1:]])
    if git_trace.exists():
        for line in git_trace.read_text().splitlines():
            built_in = re.search(r"trace: built-in: (git .*)", line)
            if built_in:
                ran.append(built_in.group(1).split())
        git_trace.unlink()
    trace.unlink()
    return ran


def stopped(argv: list[str]) -> bool:
    """What these rules stop or leave to a person: `rm` recursive (with no terminal it never
    prompts, as with `-f`, and `-i` takes its answers from the command's input),
    `git push` (or the `send-pack` it runs) forced (`--mirror` force-updates every ref, `+ref` the
    one it names), a program no allow rule names (the shell and git themselves aside), or one
    given an option that writes a file or runs a program (`sort -o`, `git log --output`)."""
    from bridge.options import unsafe_options

    name = os.path.basename(argv[0])
    if unsafe_options(tuple(argv)):
        return True
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    longs = {a for a in argv[1:] if a.startswith("--")}
    if name == "rm":

        def given(name: str) -> bool:  # GNU's long options take any unique abbreviation
            return any(len(a) > 2 and name.startswith(a.partition("=")[0]) for a in longs)

        # recursive is enough: with no terminal nothing prompts, and `-i` reads its input
        return bool({"r", "R"} & set(flags) or given("--recursive"))
    if name == "git" and ("push" in argv or "send-pack" in argv):
        plus = any(a.startswith("+") for a in argv)
        return "f" in flags or bool({"--force", "--mirror"} & longs) or plus
    return name not in allowed_programs() | {"bash", "git", "chrt", "setarch", "linux64",
                                             "ssh-agent", "strace"}  # fmt: skip


@pytest.mark.skipif(BWRAP is None or STRACE is None, reason="needs bubblewrap and strace")
@pytest.mark.parametrize("case", [c for c in ATTACKS if c[1] not in UNRUNNABLE], ids=case_id)
def test_each_attacker_spelling_really_runs_what_the_rules_stop(case, work, tmp_path) -> None:
    # the verdicts above are only worth something if bash reads these spellings as the command
    # the rules name: run, each starts (or has git run) a command these rules deny or ask about.
    # Each runs in a copy of the work folder of its own: what an earlier case left (a rebase
    # stopped midway, a moved HEAD) must not decide what this one runs, in whatever order the
    # cases come.
    own = tmp_path / "work"
    shutil.copytree(work, own, symlinks=True)
    before = files_in(own)
    ran = sandboxed_commands(case[1], own)
    after = files_in(own)
    written = {name for name, stat in after.items() if before.get(name) != stat}
    assert any(stopped(argv) for argv in ran) or written, (case[1], ran)


def files_in(folder: Path) -> dict[str, tuple[int, int]]:
    """The files of `folder` (not its subfolders), each with its size and modification time:
    what a command that writes one changes."""
    return {
        p.name: (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.iterdir()
        if (p.is_file() or p.is_socket()) and not p.name.startswith(".")
    }
