"""The rule matcher (bridge.rules): shell commands parsed part by part, paths, URLs, examples."""

from __future__ import annotations

import itertools
import os
import posixpath
import shlex

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bridge.rules import Request, Rule, RuleError, RuleSet, parse_command, propose_rule
from bridge.settings import Settings, SettingsError


def run(command: str, *rules: Rule, agent: str = "claude") -> str | None:
    req = Request(agent=agent, kind="execute", title=command, command=command)
    return RuleSet(rules).decide(req).action


ALLOW_GIT = Rule("allow", command=("git status", "git diff", "ls", "grep", "echo"))
DENY_RM = Rule("deny", command="rm", reason="we never delete here")


# --- commands: every part on its own -----------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "git status && ls | grep x",
        "git status; ls",
        "(ls; git status)",
        "{ ls; git diff; }",
        "git status || echo failed",
        "echo $(git status)",
        "echo `ls`",
        "for f in a b; do ls $f; done",
        "ls 2>&1 | grep x",
        "ls > /dev/null",
        "LC_ALL=C TZ=UTC ls",  # assignments that only choose a language or a time zone
        "env -u B LANG=C git status",
        "sh -c 'ls && git status'",
        'bash -lc "git diff | grep x"',
    ],
)
def test_a_command_is_allowed_when_every_part_is_allowed(command: str) -> None:
    assert run(command, ALLOW_GIT) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "git status && rm -rf /",
        "ls | rm x",
        "(ls; rm x)",
        "echo $(rm -rf ~)",
        "echo `rm x`",
        "ls <(rm x)",
        "x=$(rm a) ls",
        "ls > $(rm x)",
        "sh -c 'ls; rm x'",
        "bash -c 'sh -c \"rm x\"'",
        "env A=1 rm x",
        "/bin/rm x",  # a deny rule's first word also matches by basename
        "if true; then rm x; fi",
        'echo "$(rm a)"',
    ],
)
def test_a_command_is_denied_when_any_part_is_denied(command: str) -> None:
    assert run(command, ALLOW_GIT, DENY_RM) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "git status && make",  # one part has no rule
        "ls `id`",
        "echo hi > notes.txt",  # a write by redirection is never allowed by a prefix
        "ls >> log",
        "sh -c 'ls' > out",  # …nor a shell whose script is allowed
        "./ls",  # allow needs the first word exactly as written
        "git push",
    ],
)
def test_what_is_not_every_part_allowed_is_left_to_a_person(command: str) -> None:
    assert run(command, ALLOW_GIT, DENY_RM) is None


@pytest.mark.parametrize(
    "command",
    [
        "echo 'unterminated",  # cannot be parsed
        "$CMD status",  # the command name is only known when it runs
        "$(which git) status",
        "echo ${x:-$(id)}",  # a substitution bashlex leaves inside ${…}
        'sh -c "$SCRIPT"',  # a shell script only known when it runs
        "env -S 'ls $X' x",  # an env -S string with expansions
        "env A=1 -u B git status",  # env runs a command named `-u`
        "{rm,-rf,x}",  # brace expansion makes the command name when it runs
        "/bin/r? x",  # so does a glob
        "ls; /bin/r* x",
        "x'${'",  # bashlex alone would loop forever on it, taking memory without end
        "git push '${',",
    ],
)
def test_what_cannot_be_known_is_asked_when_a_deny_rule_might_match_it(command: str) -> None:
    # an ask that beats bypass (the deny rule might match), not just "no rule decides"
    assert run(command, ALLOW_GIT, DENY_RM) == "ask"
    # with no deny rule it is no rule's — but a script or a command name only known when it runs
    # that may change files (`sh`, `rm` in it) may change what governs the agents: the guard asks
    alone = RuleSet([ALLOW_GIT]).decide(Request(kind="execute", command=command))
    if command in ('sh -c "$SCRIPT"', "{rm,-rf,x}"):
        assert alone.action == "ask" and "what governs agents" in alone.why, alone.why
    else:
        assert alone.action is None, alone.why


def test_quoting_and_escapes_are_undone_before_matching() -> None:
    assert run("'git' \"status\"", ALLOW_GIT) == "allow"
    assert run("g\\it status", ALLOW_GIT) == "allow"
    assert run("echo '$(rm x)'", ALLOW_GIT, DENY_RM) == "allow"  # single quotes: just text
    assert run("'r''m' x", ALLOW_GIT, DENY_RM) == "deny"


def test_a_dollar_quote_inside_quotes_is_text_not_a_string_bash_decodes() -> None:
    # `'$'` and `"$'"` are a dollar and a quote: the word is read, not asked as unreadable
    assert run("sh -c 'rm '\"'\"'$'\"'\"' x'", ALLOW_GIT, DENY_RM) == "deny"
    assert run("git status '$'\"x\"", ALLOW_GIT, DENY_RM) == "allow"
    assert run('git status "$\'"', ALLOW_GIT, DENY_RM) == "allow"
    # …while one outside quotes next to a double-quoted part is still asked
    assert run("$'\\x72m'\"\" x", ALLOW_GIT, DENY_RM) == "ask"


def test_a_command_list_argv_and_a_shell_wrapper_in_it() -> None:
    rules = RuleSet([ALLOW_GIT, DENY_RM])
    assert rules.decide(Request(kind="execute", command=("git", "status"))).action == "allow"
    assert rules.decide(Request(kind="execute", command=("bash", "-lc", "rm x"))).action == "deny"


def test_prefixes_compare_whole_words_and_globs() -> None:
    assert run("git statusx", ALLOW_GIT) is None
    assert run("npm run build", Rule("allow", command="npm run *")) == "allow"
    assert run("npm run", Rule("allow", command="npm run *")) is None


def test_deny_and_ask_beat_allow_whatever_the_file_order() -> None:
    rules = [
        Rule("allow", kind="execute"),
        Rule("ask", command="git push"),
        Rule("deny", command="git push --force"),
    ]
    assert run("git status", *rules) == "allow"
    assert run("git push origin", *rules) == "ask"
    assert run("git push --force", *rules) == "deny"
    decision = RuleSet(rules).decide(Request(kind="execute", command="git push --force"))
    assert decision.label == "rule 3: deny command=git push --force"


def test_within_one_action_the_first_matching_rule_in_the_list_decides() -> None:
    by_command = Rule("deny", command="rm", reason="use trash instead")
    by_kind = Rule("deny", kind="execute", reason="nothing runs here")
    req = Request(agent="claude", kind="execute", title="rm -rf build", command="rm -rf build")
    for rules, reason in (
        ([by_command, by_kind], "use trash instead"),
        ([by_kind, by_command], "nothing runs here"),
    ):
        decision = RuleSet(rules).decide(req)
        assert decision.rule is not None and decision.rule.reason == reason
        assert decision.label is not None and decision.label.startswith("rule 1:")


def test_agent_title_kind_and_regex() -> None:
    rules = RuleSet(
        [
            Rule("allow", agent="claude-*", kind="read"),
            Rule("deny", title_regex=r"(?i)\bprod\b"),
            Rule("allow", title="push *"),
        ]
    )
    assert rules.decide(Request(agent="claude-code", kind="read", title="x")).action == "allow"
    assert rules.decide(Request(agent="gemini", kind="read", title="x")).action is None
    assert rules.decide(Request(agent="a", kind="other", title="Push to PROD")).action == "deny"
    assert rules.decide(Request(agent="a", kind="other", title="PUSH to stage")).action == "allow"


# --- options between a deny rule's words -----------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("git push", "git -C dir push --force", "deny"),
        ("git push", "git -c core.sshCommand=x push", "deny"),
        ("git push", "git --git-dir=x --work-tree y push origin", "deny"),
        ("git push", "git --no-pager push", "deny"),
        ("git push", "git -C a -C b push", "deny"),
        ("git push", 'git -C "$DIR" push', "deny"),  # an option's argument, whatever it is
        ("git push", "sudo git -C d push", "deny"),
        ("git push", "cd x && git --no-pager -C .. push", "deny"),
        ("docker rm", "docker --context prod rm web", "deny"),
        ("docker rm", "docker -H ssh://x rm -f web", "deny"),
        ("kubectl delete", "kubectl -n prod delete pod x", "deny"),
        ("kubectl delete", "kubectl --namespace=prod --context x delete pod x", "deny"),
        # a word of the rule that is an option matches wherever it sits after the word before it
        ("git push --force", "git push origin main --force", "deny"),
        ("git push --force", "git -C d push -v origin --force", "deny"),
        ("rm -rf", "rm -v x -rf", "deny"),
        # a skipped word that is neither an option nor right after one ends the match
        ("git push", "git log --grep push", None),
        ("git push", "git log push", None),
        ("git push", "git -C dir status push", None),
        ("git push", "git stash push", None),
        ("kubectl delete", "kubectl get pods -o name delete", None),
        ("git push --force", "git push origin -- --force", None),  # after `--`: a file name
        ("git push --force", "git push --force-with-lease", None),
        # a word only known when it runs may be the subcommand: a person decides
        ("git push", "git $SUB", "ask"),
        ("git push", "git --no-pager $SUB", "ask"),
        ("git push", "git $OPTS push", "ask"),
    ],
)
def test_a_deny_rule_matches_across_options_between_its_words(
    rule: str, command: str, expected: str | None
) -> None:
    assert run(command, Rule("deny", command=rule)) == expected
    ask = run(command, Rule("ask", command=rule))
    assert ask == ("ask" if expected else None)


@pytest.mark.parametrize(
    ("command", "as_written"),
    [
        ("git -C dir push", "git push"),
        ("git --no-pager push", "git push"),
        ("git -c x=y status", "git status"),
        ("git -C . status -s", "git status -s"),
    ],
)
def test_allow_rules_stay_exact_prefixes_on_the_words_as_written(
    command: str, as_written: str
) -> None:
    rules = [Rule("allow", command=("git push", "git status"))]
    assert run(as_written, *rules) == "allow"
    assert run(command, *rules) is None  # options between the words: a person decides


# --- wrappers: the command a wrapper runs is checked too -------------------------------------------

DENY_PUSH = Rule("deny", command="git push", reason="open a PR instead")
WRAPPED_PUSHES = [
    "sudo git push",
    "sudo -u deploy -H git push origin",
    "sudo --user=deploy -- git push",
    "sudo A=1 git push",
    "doas -u deploy git push",
    "su -c 'git push' deploy",
    "su - deploy -c 'git push'",
    "runuser -u deploy -- git push",
    "pkexec --user deploy git push",
    "chroot /srv/jail git push",
    "chroot --userspec=1000:1000 /srv/jail /usr/bin/git push",
    "timeout 5 git push",
    "timeout -s KILL -k 1 5m git push",
    "timeout --signal=KILL 5 git push",
    "nohup git push &",
    "nice git push",
    "nice -n 5 git push",
    "nice -5 git push",
    "nice --adjustment=5 git push",
    "time git push",
    "time -p git push",
    "ls && time git push | cat",  # bash's `time` keyword, which bashlex cannot parse by itself
    "/usr/bin/time -o /dev/null git push",
    "xargs git push",
    "xargs -0 -n 1 git push",
    "xargs -I {} git push {}",
    "command git push",
    "command -p git push",
    "builtin eval 'git push'",
    "exec git push",
    "exec -a x git push",
    "stdbuf -o0 git push",
    "stdbuf --output=L -e 0 git push",
    "env -i git push",
    "env -i -u HOME -C /tmp A=1 git push",
    "env --ignore-environment --chdir=/tmp git push",
    "env -S 'git push' origin",
    "setsid -f git push",
    "ionice -c 3 git push",
    "taskset -c 0 git push",
    "eval 'git push'",
    'eval git "push"',
    "watch -n 1 git push",
    "watch -x git push",
    "flock /tmp/lock git push",
    "flock -w 5 /tmp/lock -c 'git push'",
    "busybox sh -c 'git push'",
    "sudo timeout 5 nice -n 1 env -i git push",
    "sudo sh -c 'cd x && git push'",
]


@pytest.mark.parametrize("command", WRAPPED_PUSHES)
def test_a_deny_rule_sees_the_command_a_wrapper_runs(command: str) -> None:
    assert run(command, ALLOW_GIT, DENY_PUSH) == "deny"


@pytest.mark.parametrize("command", ["sudo git push", "timeout 5 git push", "xargs git push"])
def test_an_agent_on_bypass_does_not_get_a_wrapped_denied_command_through(command: str) -> None:
    from bridge.approvals import ApprovalContext, Policy

    options = [
        {"optionId": "a", "name": "Allow", "kind": "allow_once"},
        {"optionId": "r", "name": "Reject", "kind": "reject_once"},
    ]
    policy = Policy(bypass_agents={"claude"}, rules=[DENY_PUSH])
    call = {
        "toolCallId": "t",
        "title": command,
        "kind": "execute",
        "rawInput": {"command": command},
    }
    resolution = policy.decide(ApprovalContext("c", "s", "claude", call, options))
    assert resolution is not None and resolution.outcome == "reject_once"
    assert resolution.reason == "open a PR instead"
    # a wrapper option that is not known: a person decides, the bypass does not
    for unknown in ("sudo -Z git push", "timeout --bogus 5 git push", "xargs git"):
        call = {
            "toolCallId": "t",
            "title": unknown,
            "kind": "execute",
            "rawInput": {"command": unknown},
        }
        ctx = ApprovalContext("c", "s", "claude", call, options)
        assert policy.decide(ctx) is None and ctx.asked_by == "rule 1: deny command=git push"


@pytest.mark.parametrize(
    "command",
    [
        "timeout 5 git status",
        "nice -n 5 git status",
        "time git status -s",
        "nohup git status",
        "stdbuf -oL git status",
        "command git status",
        "env -i git status",
        "exec git status",
        "ls | xargs grep -l x",
        "ls | xargs -0 -I {} grep x {}",
        "ls | xargs",  # runs echo
        "timeout 5 sh -c 'git status && ls'",
    ],
)
def test_a_harmless_wrapper_is_transparent_for_allow_rules(command: str) -> None:
    assert run(command, ALLOW_GIT) == "allow"


@pytest.mark.parametrize(
    ("command", "rules", "expected"),
    [
        # a privileged wrapper needs an allow rule of its own and one for what it runs
        ("sudo git status", [ALLOW_GIT], None),
        ("sudo git status", [ALLOW_GIT, Rule("allow", command="sudo")], "allow"),
        ("sudo -u x git status", [ALLOW_GIT, Rule("allow", command="sudo")], "allow"),
        ("sudo rm x", [ALLOW_GIT, Rule("allow", command="sudo")], None),
        ("doas git status", [ALLOW_GIT, Rule("allow", command="sudo")], None),
        ("sudo sh -c 'git status; rm x'", [ALLOW_GIT, Rule("allow", command="sudo")], None),
        ("sudo sh -c 'git status; ls'", [ALLOW_GIT, Rule("allow", command="sudo")], "allow"),
        # …or one prefix naming both
        ("sudo apt update -y", [Rule("allow", command="sudo apt update")], "allow"),
        ("sudo apt install x", [Rule("allow", command="sudo apt update")], None),
        ("sudo timeout 5 apt update", [Rule("allow", command="sudo apt update")], None),
        ("sudo -u bob git status", [Rule("allow", command="sudo -u bob git status")], "allow"),
        ("su -c 'git status' root", [ALLOW_GIT], None),
        ("su -c 'git status' root", [ALLOW_GIT, Rule("allow", command="su")], "allow"),
        ("chroot /jail ls", [ALLOW_GIT], None),
        ("pkexec ls", [ALLOW_GIT, Rule("allow", command="pkexec")], "allow"),
        # a harmless wrapper written in a rule covers what it runs
        ("timeout 5 make", [Rule("allow", command="timeout 5 make")], "allow"),
        ("timeout 5 make; rm x", [Rule("allow", command="timeout 5 make")], None),
        # an allow rule for a wrapper alone no longer allows whatever it runs
        ("timeout 5 rm x", [Rule("allow", command="timeout")], None),
        ("xargs cat", [Rule("allow", command="xargs")], None),
        # xargs appends arguments: only a prefix the written words already cover allows it
        ("xargs git", [ALLOW_GIT], None),
        # … and not when words it appends could be an option that writes a file or runs a
        # program (`git status --output=x` is not `git status`)
        ("xargs git status", [ALLOW_GIT], None),
        ("xargs ls", [Rule("allow", command="ls")], "allow"),
        ("xargs -I{} git {} status", [ALLOW_GIT], None),
        ("xargs npm run", [Rule("allow", command="npm run *")], None),
        # an unknown wrapper option, a wrapper word only known when it runs: never allowed
        ("sudo -Z git status", [ALLOW_GIT, Rule("allow", command="sudo")], None),
        ("timeout --bogus 5 git status", [ALLOW_GIT], None),
        ("sudo $OPT git status", [ALLOW_GIT, Rule("allow", command="sudo")], None),
        ("timeout $T git status", [ALLOW_GIT], None),
        ("nice", [Rule("allow", command="nice")], "allow"),  # no command: nice itself
        ("command -v git", [Rule("allow", command="command -v")], "allow"),
        ("time -o out.txt git status", [ALLOW_GIT], None),  # time writes out.txt
    ],
)
def test_allow_rules_and_wrappers(command: str, rules: list[Rule], expected: str | None) -> None:
    assert run(command, *rules) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git $SUB", "ask"),  # $SUB may be `push`
        ("git $(echo push)", "ask"),
        ("xargs git", "ask"),  # its input may add `push`
        ("echo push | xargs -n1 git", "ask"),
        ("git log $X", None),  # `log` is not `push`, whatever $X is
        ("xargs git log", None),
        ("xargs ls", None),
    ],
)
def test_words_only_known_when_it_runs_are_asked_when_a_deny_rule_might_match(
    command: str, expected: str | None
) -> None:
    assert run(command, DENY_PUSH) == expected


def test_the_commands_find_exec_runs_are_parts_too() -> None:
    deny_rm = Rule("deny", command="rm -rf")
    allow_find = Rule("allow", command="find")
    assert run("find . -name '*.o' -exec rm -rf {} +", allow_find, deny_rm) == "deny"
    assert run("find . -execdir sh -c 'rm -rf x' \\;", allow_find, deny_rm) == "deny"
    assert run("find . -exec git {} push \\;", DENY_PUSH) == "ask"  # `{}` is a file name
    assert run("find . -exec rm {} +", allow_find) is None  # `allow find` does not allow rm
    # `allow find` does not cover -exec (a program it runs): a rule must name it
    assert run("find . -exec grep -l x {} +", allow_find, ALLOW_GIT) is None
    allow_find_exec = Rule("allow", command="find . -exec")
    assert run("find . -exec grep -l x {} +", allow_find_exec, ALLOW_GIT) == "allow"
    assert run("sudo find . -exec rm {} +", allow_find, Rule("allow", command="sudo find")) is None


def test_a_deny_rule_for_a_wrapper_itself_still_matches() -> None:
    assert run("sudo -u x ls", ALLOW_GIT, Rule("deny", command="sudo")) == "deny"
    assert run("timeout 5 ls", ALLOW_GIT, Rule("deny", command="timeout")) == "deny"
    assert run("env -i ls", ALLOW_GIT, Rule("deny", command="env")) == "deny"


def test_explain_shows_the_wrapper_and_the_command_it_runs() -> None:
    rules = RuleSet([ALLOW_GIT, Rule("allow", command="sudo")])
    decision = rules.explain(Request(kind="execute", command="timeout 5 sudo git status"))
    assert decision.action == "allow"
    assert [(p.part, p.action, p.role) for p in decision.parts] == [
        ("timeout 5 sudo git status", None, "wrapper"),
        ("sudo git status", "allow", "privileged"),
        ("git status", "allow", "command"),
    ]


# --- property tests ----------------------------------------------------------------------------

ALLOWED = {("git", "status"), ("git", "diff"), ("ls",), ("grep",)}
DENIED = {("rm",), ("git", "push")}
PROGRAMS = [("git", "status"), ("git", "diff"), ("git", "push"), ("ls",), ("grep",), ("rm",),
            ("make",), ("curl",)]  # fmt: skip
WORD = st.text(alphabet="abcxyz-._/ $`'\"\\*;|&()", min_size=1, max_size=8)
HARMLESS = ["timeout 5", "timeout -s KILL 1m", "nice -n 5", "nohup", "/usr/bin/time -p",
            "command", "stdbuf -o0", "env -i", "xargs", "xargs -0 -n 1", "exec"]  # fmt: skip
PRIVILEGED = ["sudo", "sudo -u bob --", "doas", "pkexec --user bob", "chroot /jail"]
ELEVATED = ("<a privileged wrapper: never allowed by these rules>",)
ASSIGNED = ("<an environment assignment no allow rule names>",)
# `xargs git …`: words appended when it runs could be an option that writes a file or runs a
# program (`--output=`), which no allow rule of these names
APPENDED = ("<words xargs appends to a program with such options>",)


def quote_word(word: str, style: int) -> str:
    if style == 0:
        return shlex.quote(word)
    if style == 1:  # double quotes, with what is special in them escaped
        return '"' + "".join("\\" + c if c in '"\\$`' else c for c in word) + '"'
    return "".join("\\" + c if not c.isalnum() else c for c in word)  # backslash escapes


GIT_OPTIONS = [("-C", "dir"), ("-C", "push"), ("--no-pager",), ("-c", "core.x=y"),
               ("--git-dir=x",), ("-P",), ("--", )]  # fmt: skip


@st.composite
def simple_commands(draw: st.DrawFn) -> tuple[list[tuple[str, ...]], str]:
    program = draw(st.sampled_from(PROGRAMS))
    args = draw(st.lists(WORD, max_size=3))
    options = draw(st.lists(st.sampled_from(GIT_OPTIONS), max_size=2)) if len(program) > 1 else []
    words = (program[0], *(w for o in options for w in o), *program[1:], *args)
    styles = draw(st.lists(st.integers(0, 2), min_size=len(words), max_size=len(words)))
    text = " ".join(quote_word(w, s) for w, s in zip(words, styles, strict=True))
    commands = [words]
    if draw(st.booleans()):
        if draw(st.booleans()):
            text = "env A=1 " + text
        else:
            text = "A=$(echo x) " + text
            commands.append(("echo",))
        commands.append(ASSIGNED)  # no allow rule names `A`: never allowed
    for _ in range(draw(st.integers(0, 2))):  # wrappers: the command they run is the oracle's
        wrapper = draw(st.sampled_from(HARMLESS + PRIVILEGED))
        text = f"{wrapper} {text}"
        if wrapper in PRIVILEGED:
            commands.append(ELEVATED)
        if wrapper.startswith("xargs") and words[0] == "git":
            commands.append(APPENDED)
    if draw(st.integers(0, 4)) == 0:
        text += " 2>/dev/null"
    return commands, text


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[list[tuple[str, ...]], str]:
    """A generated script and every simple command it runs (the oracle)."""
    items = draw(st.lists(simple_commands(), min_size=1, max_size=4))
    commands = [words for part, _ in items for words in part]
    pieces = []
    for _words, text in items:
        shape = draw(st.integers(0, 6))
        if shape == 1:
            text = f"( {text} )"
        elif shape == 2:
            text = f"echo $( {text} )"
            commands.append(("echo",))
        elif shape == 3:
            text = f"sh -c {shlex.quote(text)}"
        elif shape == 4:
            text = "{ " + text + "; }"
        pieces.append(text)
    ops = draw(st.lists(st.sampled_from([" && ", " || ", " ; ", " | "]),
                        min_size=len(pieces) - 1, max_size=len(pieces) - 1))  # fmt: skip
    line = pieces[0]
    for op, piece in zip(ops, pieces[1:], strict=True):
        line += op + piece
    return commands, line


def _allowed(words: tuple[str, ...]) -> bool:
    return any(words[: len(p)] == p for p in ALLOWED | {("echo",)})


def _denied_as_written(words: tuple[str, ...]) -> bool:
    return any(words[: len(p)] == p for p in DENIED)


def _denied(words: tuple[str, ...]) -> bool:
    """The rule's words in order, every word skipped between them an option or right after one
    (not after `--`) — checked by brute force over every choice of places."""
    for prefix in DENIED:
        if not words or words[0] != prefix[0]:
            continue
        for places in itertools.combinations(range(1, len(words)), len(prefix) - 1):
            if any(words[k] != w for k, w in zip(places, prefix[1:], strict=True)):
                continue
            bounds = (0, *places)
            end = words.index("--") if "--" in words else len(words)

            def option(k: int, end: int = end) -> bool:
                return k < end and len(words[k]) > 1 and words[k].startswith("-")

            if all(
                option(k) or (words[k] == "--" and k == end) or option(k - 1)
                for a, b in itertools.pairwise(bounds)
                for k in range(a + 1, b)
            ):
                return True
    return False


PROPERTY_RULES = RuleSet(
    [
        Rule("allow", command=tuple(" ".join(p) for p in ALLOWED | {("echo",)})),
        Rule("deny", command=tuple(" ".join(p) for p in DENIED)),
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_allow_implies_every_simple_command_allowed_and_any_deny_denies(
    case: tuple[list[tuple[str, ...]], str],
) -> None:
    commands, line = case
    decision = PROPERTY_RULES.decide(Request(kind="execute", command=line))
    if decision.action == "allow":
        assert all(_allowed(c) for c in commands), (line, commands)
    if any(_denied_as_written(c) for c in commands):  # never weaker than exact prefixes
        assert decision.action == "deny", (line, commands, decision)
    if any(_denied(c) for c in commands):
        assert decision.action == "deny", (line, commands, decision)
    if decision.action == "deny":
        assert any(_denied(c) for c in commands)
    if all(_allowed(c) for c in commands):
        assert decision.action == "allow", (line, commands, decision)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
@example("xargs")  # a wrapper with no command of its own: it runs `echo`
def test_any_text_gets_a_verdict_and_allow_only_with_every_part_known(text: str) -> None:
    parsed = parse_command(text)
    decision = PROPERTY_RULES.decide(Request(kind="execute", command=text))
    if decision.action == "allow":
        assert not parsed.opaque and parsed.parts
        # (a wrapper is decided by the command it runs, itself a part: bare `xargs` runs `echo`)
        assert all(
            (_allowed(p.words) or p.role == "wrapper") and not p.writes for p in parsed.parts
        )
        assert any(p.role != "wrapper" for p in parsed.parts)


PLAIN = st.text(alphabet="abz019_./=:@%+,- '\"", max_size=30)


@settings(max_examples=300, deadline=None)
@given(PLAIN)
def test_the_quick_split_of_plain_commands_agrees_with_bashlex(text: str) -> None:
    import bashlex

    from bridge import shell

    fast = parse_command(text)
    parser = shell._Parser()
    try:
        trees = bashlex.parse(text)
    except Exception:
        return  # an unbalanced quote: both sides ask
    for tree in trees:
        parser.walk(tree, 0, text)
    assert [p.words for p in fast.parts] == [p.words for p in parser.parts] or fast.opaque


# Denied commands and every way to spell each option they name: (program names, words before the
# options, {option: its spellings}, words after). A short spelling (one letter) may be grouped.
RESPELLED = [
    (("rm", "/bin/rm", "\\rm", "'r'm"), (), {"r": ["r", "R", "--recursive", "--recur"],
                                             "f": ["f", "--force", "--forc"]}, ("build",)),
    (("git",), ("push",), {"f": ["f", "--force", "--forc"]}, ("origin", "main")),
    (("git",), ("clean",), {"f": ["f", "--force"]}, ()),
    (("git",), ("branch",), {"d": ["d", "--delete"], "f": ["f", "--force"]}, ("old",)),
    (("chmod",), (), {"R": ["R", "--recursive"]}, ("777", "/srv")),
    (("cp",), (), {"r": ["r", "R", "--recursive", "a", "--archive"]}, ("a", "b")),
    (("curl",), (), {"X": ["XDELETE", "X DELETE", "--request DELETE"]}, ("https://x.example",)),
]  # fmt: skip
RESPELL_RULES = RuleSet(
    [
        Rule(
            "deny",
            command=[
                "rm -rf",
                "git push --force",
                "git clean -f",
                "git branch -D",
                "chmod -R",
                "cp -r",
                "curl -X DELETE",
            ],
        ),
        Rule("allow", command=["rm", "git", "chmod", "cp", "curl", "ls"]),
    ]
)
EXTRA = {"rm": ["-v", "-i", "--verbose"], "git": ["-q", "-v"], "chmod": ["-v", "-c"],
         "cp": ["-v", "-n"], "curl": ["-s", "-L", "-v"]}  # fmt: skip


@st.composite
def respelled(draw: st.DrawFn) -> str:
    names, before, options, after = draw(st.sampled_from(RESPELLED))
    name = draw(st.sampled_from(names))
    words: list[str] = []
    group: list[str] = []
    for spellings in options.values():
        spelling = draw(st.sampled_from(spellings))
        if len(spelling) == 1 and draw(st.booleans()):
            group.append(spelling)  # written together with other short options: `-rf`
        elif spelling.startswith("--"):
            words.extend(spelling.split())
        else:
            first, *rest = spelling.split()
            words.extend(["-" + first, *rest])
    if group:
        words.append("-" + "".join(draw(st.permutations(group))))
    base = posixpath.basename(name.strip("'\\"))
    words += draw(st.lists(st.sampled_from(EXTRA.get(base, EXTRA["rm"])), max_size=2))
    order = draw(st.permutations(range(len(words))))
    shuffled = [words[k] for k in order]
    # an option and its separate value stay together
    for k, word in enumerate(shuffled):
        if word in ("-X", "--request") and (k + 1 >= len(shuffled) or shuffled[k + 1] != "DELETE"):
            shuffled = [w for w in shuffled if w != "DELETE"]
            at = shuffled.index(word)
            shuffled.insert(at + 1, "DELETE")
    tail = list(after)
    if draw(st.booleans()) and base != "curl":
        shuffled, tail = shuffled[: len(shuffled) // 2], [*tail, *shuffled[len(shuffled) // 2 :]]
    text = " ".join([name, *before, *shuffled, *tail])
    wrapper = draw(st.sampled_from(["", "sudo ", "timeout 5 ", "env -i ", "nice -n 5 "]))
    shape = draw(st.integers(0, 2))
    text = wrapper + text
    if shape == 1:
        text = f"bash -c {shlex.quote(text)}"
    elif shape == 2:
        text = f"ls && {text}"
    return text


@settings(max_examples=300, deadline=None)
@given(respelled())
def test_respelling_the_options_of_a_denied_command_never_turns_deny_into_allow(text) -> None:
    decision = RESPELL_RULES.decide(Request(kind="execute", command=text))
    assert decision.action == "deny", (text, decision)


# --- paths --------------------------------------------------------------------------------------


def test_paths_inside_a_directory_after_dot_dot_and_symlinks(tmp_path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    secret = tmp_path / "secret"
    secret.mkdir()
    (project / "escape").symlink_to(secret)  # inside by name, outside after resolution
    (tmp_path / "alias").symlink_to(project)  # outside by name, inside after resolution
    rules = RuleSet([Rule("allow", kind="edit", path=str(project))])

    def edit(*paths: str, cwd: str | None = None) -> str | None:
        req = Request(agent="a", kind="edit", title="edit", paths=paths, cwd=cwd)
        return rules.decide(req).action

    assert edit(str(project / "src" / "a.py")) == "allow"
    assert edit(str(project / "new-file.py")) == "allow"  # need not exist yet
    assert edit(str(project / ".." / "secret" / "x")) is None
    assert edit(str(project / "escape" / "x")) is None
    assert edit(str(tmp_path / "alias" / "src" / "a.py")) == "allow"
    assert edit(str(project) + "-other/x") is None  # a sibling sharing the prefix
    assert edit("src/a.py", cwd=str(project)) == "allow"
    assert edit("../secret/a", cwd=str(project)) is None
    assert edit(str(project / "a"), str(secret / "b")) is None  # allow needs every path inside
    assert edit() is None  # a path rule needs a path


def test_a_deny_path_rule_matches_any_path_and_a_symlinked_root(tmp_path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (tmp_path / "link").symlink_to(secret)
    rules = RuleSet([Rule("deny", path=str(tmp_path / "link")), Rule("allow", kind="edit")])
    req = Request(kind="edit", title="e", paths=(str(tmp_path / "ok"), str(secret / "k")))
    assert rules.decide(req).action == "deny"
    assert rules.decide(Request(kind="edit", title="e", paths=(str(tmp_path / "ok"),))).action == (
        "allow"
    )


# --- paths named inside shell commands ------------------------------------------------------------


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home with ~/.ssh/id_rsa, a project whose `keys` is a symlink to ~/.ssh."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("secret")
    (home / "project").mkdir()
    (home / "project" / "keys").symlink_to(home / ".ssh")
    monkeypatch.setenv("HOME", str(home))
    return home


ALLOW_READING = Rule("allow", command=("cat", "ls", "grep", "cp", "python", "echo", "tar", "git"))


def in_project(home, command: str, *rules: Rule) -> str | None:
    deny = Rule("deny", path="~/.ssh", reason="no keys")
    req = Request.from_tool_call(
        "a",
        {"title": command, "kind": "execute", "rawInput": {"command": command}},
        cwd=str(home / "project"),
    )
    return RuleSet([deny, ALLOW_READING, *rules]).decide(req).action


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/.ssh/id_rsa",
        "cat ../.ssh/id_rsa",  # relative to the session's cwd
        "cat keys/id_rsa",  # a symlink into ~/.ssh
        "cat ./x/../../.ssh/id_rsa",
        "cd ~ && cat .ssh/id_rsa",  # relative to a directory the command changes to
        "cd .. ; cd .ssh; cat id_rsa",
        "tar -C ~ -cf x.tar .ssh",
        "cat $HOME/.ssh/id_rsa",
        'cat "${HOME}/.ssh/id_rsa"',
        "cat ~/.ss?/id_rsa",  # a glob, expanded as bash would
        "cat ~/.{aws,ssh}/id_rsa",  # braces too
        "cp x ~/.ssh/authorized_keys",
        "echo key >> ~/.ssh/authorized_keys",  # a redirect target
        "cat < ~/.ssh/id_rsa",
        "git --git-dir=~/.ssh/x status",  # an option's value
        "X=~/.ssh/id_rsa; cat $X",  # an assignment's value
        "sudo -u bob cat ~/.ssh/id_rsa",
        "bash -c 'cat ~/.ssh/id_rsa'",
        "ls ~/.ssh",  # the directory itself
    ],
)
def test_a_shell_command_naming_a_path_inside_a_denied_directory_is_denied(
    home, command: str
) -> None:
    assert in_project(home, command) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "cat $D/.ssh/id_rsa",  # only known when it runs, with the directory's name in it
        "python -c \"print(open('../.ssh/id_rsa').read())\"",  # named inside a longer word
        "echo 'unterminated ~/.ssh/id_rsa",  # cannot be parsed
    ],
)
def test_a_word_that_might_name_a_path_in_a_denied_directory_is_asked(home, command) -> None:
    assert in_project(home, command) == "ask"


@pytest.mark.parametrize(
    "command",
    ["cat README", "grep ssh notes.txt", "cat ~/.sshx/a", "ls ~/project", "echo .ssh", "ls $D"],
)
def test_a_command_that_names_no_denied_path_is_not_stopped(home, command: str) -> None:
    assert in_project(home, command) == "allow"


def test_what_cannot_be_expanded_cheaply_is_asked(home) -> None:
    assert in_project(home, "cat " + "{a,b}" * 40) == "ask"  # too many braces
    assert in_project(home, "cat /*/*/*/*/id_rsa") == "ask"  # a glob many levels deep
    assert in_project(home, "cat ~/*/id_rsa") == "deny"  # one level: expanded, dot files too


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet="~/.{},*?[]$ab ;'\"-=", max_size=40))
def test_any_text_gets_a_verdict_from_a_deny_path_rule(home, text: str) -> None:
    assert in_project(home, text) in ("deny", "ask", "allow", None)


def test_a_command_run_inside_a_denied_directory_is_denied(home) -> None:
    deny = Rule("deny", path="~/.ssh")
    req = Request(agent="a", kind="execute", command="ls", paths=(), cwd=str(home / ".ssh"))
    assert RuleSet([deny, ALLOW_READING]).decide(req).action == "deny"


def test_a_deny_path_rule_with_a_command_needs_both(home) -> None:
    (home / "important").mkdir()
    rule = Rule("deny", command="rm", path="~/important")
    assert in_project(home, "rm -rf ~/important/x", rule) == "deny"
    assert in_project(home, "rm -rf /tmp/build", rule) is None
    assert in_project(home, "ls ~/important", rule) == "allow"


def test_an_agent_on_bypass_does_not_read_a_denied_directory_through_a_command(home) -> None:
    from bridge.approvals import ApprovalContext, Policy

    options = [
        {"optionId": "a", "name": "Allow", "kind": "allow_once"},
        {"optionId": "r", "name": "Reject", "kind": "reject_once"},
    ]
    policy = Policy(bypass_agents={"claude"}, rules=[Rule("deny", path="~/.ssh", reason="keys")])

    def decide(command: str) -> tuple[str | None, str | None]:
        call = {"toolCallId": "t", "title": command, "kind": "execute",
                "rawInput": {"command": command, "cwd": str(home / "project")}}  # fmt: skip
        ctx = ApprovalContext("c", "s", "claude", call, options)
        resolution = policy.decide(ctx)
        return (resolution.outcome if resolution else None), ctx.asked_by

    assert decide("cat keys/id_rsa") == ("reject_once", None)
    assert decide("cat $D/.ssh/id_rsa") == (None, "rule 1: deny path=~/.ssh")
    assert decide("cat README") == ("allow_once", None)


def test_an_allow_path_rule_never_allows_a_shell_command_by_itself(home) -> None:
    project = str(home / "project")
    for rule in (Rule("allow", path=project), Rule("allow", kind="execute", path=project)):
        req = Request(agent="a", kind="execute", command="rm -rf /", paths=(project,), cwd=project)
        assert RuleSet([rule]).decide(req).action is None
    edit = Request(agent="a", kind="edit", title="e", paths=(project + "/a.py",))
    assert RuleSet([Rule("allow", path=project)]).decide(edit).action == "allow"


def test_a_deny_path_rules_command_examples_are_checked(home) -> None:
    rule = Rule(
        "deny",
        path="~/.ssh",
        match=[{"command": "cat ~/.ssh/id_rsa"}],
        not_match=[{"command": "cat ~/notes"}],
    )
    assert rule.check_examples() == []


# --- URLs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://github.com/acme/repo", True),
        ("https://GITHUB.com/acme/", True),
        ("https://github.com/acme", True),
        ("https://github.com:443/acme/x", True),
        ("https://github.com/acme/../evil/x", False),
        ("https://github.com/acmex/repo", False),
        ("http://github.com/acme/repo", False),
        ("https://github.com.evil.net/acme/repo", False),
        ("https://github.com@evil.net/acme/repo", False),
        ("https://github.com:8443/acme/repo", False),
        ("not a url", False),
    ],
)
def test_url_rules_compare_scheme_host_and_path_prefix(url: str, allowed: bool) -> None:
    rules = RuleSet([Rule("allow", url="https://github.com/acme/")])
    req = Request(agent="a", kind="fetch", title=url, urls=(url,))
    assert (rules.decide(req).action == "allow") is allowed


def test_requests_from_acp_tool_calls() -> None:
    req = Request.from_tool_call(
        "claude",
        {"title": "git status", "kind": "execute", "rawInput": {"command": "git status -s"}},
    )
    assert req.command == "git status -s"
    req = Request.from_tool_call("x", {"title": "`ls -la`", "kind": "execute"})
    assert req.command is None and req.malformed  # never its title: a person decides
    req = Request.from_tool_call(
        "x",
        {
            "title": "Fetch",
            "kind": "fetch",
            "rawInput": {"url": "https://a.example/x"},
            "locations": [{"path": "/tmp/a"}],
        },
    )
    assert req.urls == ("https://a.example/x",) and req.paths == ("/tmp/a",)


# --- examples and the settings file ---------------------------------------------------------------


def test_examples_are_checked() -> None:
    good = Rule("allow", command="git status", match=["git status -s"], not_match=["git push"])
    assert good.check_examples() == []
    bad = Rule("allow", command="git status", match=["git stash"], not_match=["git status"])
    problems = bad.check_examples()
    assert problems == [
        "does not match its example 'git stash'",
        "matches 'git status', listed under not_match",
    ]
    table = Rule(
        "deny", agent="claude*", url="https://x.example/", match=[{"url": "https://x.example/a"}]
    )
    assert table.check_examples() == []


def test_a_failing_example_rejects_the_file_naming_the_rules_line(tmp_path) -> None:
    text = (
        '[[rules]]\naction = "deny"\ncommand = "rm"\n\n'
        '[[rules]]\naction = "allow"\ncommand = "git status"\n'
        'match = ["git status", "git stash"]\n'
    )
    with pytest.raises(SettingsError) as err:
        Settings.parse(text, tmp_path / "settings.toml")
    assert err.value.line == 5
    assert "rules[2]" in str(err.value) and "'git stash'" in str(err.value)
    ok = Settings.parse(text.replace(', "git stash"', ""))
    assert [r.line for r in ok.rules] == [1, 5]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('action = "allow"\ntitle_regex = "("', "title_regex: not a valid regular expression"),
        ('action = "allow"\nurl = "github.com"', "url: not a URL"),
        ('action = "allow"\ncommand = []', "command: expected a command prefix"),
        ('action = "maybe"', 'action: expected "allow", "ask" or "deny"'),
        ('action = "allow"\nmatch = [{cmd = "x"}]', "match: unknown example field"),
        ('action = "allow"\ntitel = "x"', "titel: unknown rule field"),
    ],
)
def test_a_rule_that_cannot_be_used_is_reported_with_its_field(entry: str, problem: str) -> None:
    with pytest.raises(SettingsError) as err:
        Settings.parse("[[rules]]\n" + entry + "\n")
    assert problem in str(err.value)


def test_rule_errors_name_the_field() -> None:
    with pytest.raises(RuleError) as err:
        Rule("allow", title_regex="[")
    assert err.value.field == "title_regex"


# --- "always for this pattern" ----------------------------------------------------------------------


def test_proposals_from_requests(tmp_path) -> None:
    rule = propose_rule(Request(agent="claude", kind="execute", command="git status -s"))
    assert rule is not None and rule.command == ("git status",) and rule.agent == "claude"
    assert rule.match == [{"agent": "claude", "kind": "execute", "command": "git status -s"}]
    assert rule.check_examples() == []
    rule = propose_rule(Request(agent="a", kind="execute", command="npm run build && ls -la"))
    assert rule is not None and rule.command == ("npm run build $", "ls")
    assert run("npm run build", rule, agent="a") == "allow"
    assert run("npm run build -- --evil", rule, agent="a") is None
    rule = propose_rule(Request(agent="a", kind="execute", command="timeout 5 git status -s"))
    assert rule is not None and rule.command == ("git status",)  # a harmless wrapper: no prefix
    rule = propose_rule(Request(agent="a", kind="execute", command="sudo -u x apt update -y"))
    assert rule is not None and rule.command == ("sudo -u x apt update -y $",)
    assert rule.check_examples() == []
    assert run("sudo -u x apt update -y", rule, agent="a") == "allow"
    assert run("sudo -u x apt install evil", rule, agent="a") is None
    assert run("sudo -u x apt update -y evil", rule, agent="a") is None
    target = tmp_path / "src" / "a.py"
    target.parent.mkdir()
    rule = propose_rule(Request(agent="a", kind="edit", title="Edit", paths=(str(target),)))
    assert rule is not None and rule.path == os.path.realpath(target.parent)
    assert rule.check_examples() == []
    rule = propose_rule(Request(agent="a", kind="fetch", urls=("https://docs.example/a/b.html",)))
    assert rule is not None and rule.url == "https://docs.example/a/"
    assert propose_rule(Request(agent="a", kind="execute", command="echo x > f")) is None


def test_proposals_name_the_assignments_and_leave_out_what_no_prefix_covers() -> None:
    def proposed(command: str) -> tuple[str, ...] | None:
        rule = propose_rule(Request(agent="a", kind="execute", command=command))
        if rule is None:
            return None
        assert rule.check_examples() == []
        return rule.command

    assert proposed("NODE_ENV=test npm test") == ("NODE_ENV=test npm test $",)  # exactly
    assert proposed("LANG=C ls -la") == ("ls",)  # only a language: nothing to name
    assert proposed("PATH=/tmp/x; ls") is None  # an assignment of its own
    # an option that deletes or runs a program: only that exact command is proposed
    assert proposed("find . -delete") == ("find . -delete $",)
    assert proposed("git -c core.pager=id log") == ("git -c core.pager=id log $",)
    assert proposed("ls\r") is None


# --- allow means exactly what it says ----------------------------------------------------------------

BROAD = Rule(
    "allow",
    command=["git", "find", "sort", "sed", "rg", "base64", "tar", "less", "man", "vim", "awk"],
)


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.pager=id log",
        "git -ccore.pager=id status",
        "git --config-env=core.pager=X log",
        "git --exec-path=/tmp status",
        "git -C /elsewhere status",
        "git -C ../other status",
        "git --git-dir=/tmp/x/.git log",
        "git -p log",
        "git log --output=x",
        "git log --outp=x",  # an abbreviation of --output
        "git diff --ext-diff",
        "git log --paginate",
        "git grep -O x",
        "git clone -u 'id' host:repo",
        "git fetch --upload-pack=id origin",
        "find . -exec id ;",
        "find . -delete",
        "find . -fprint x",
        "sort -o x y",
        "sort -uox y",
        "sort --compress-program=id y",
        "sed -i s/a/b/ f",
        "sed -ni 1p f",
        "sed --in-place s/a/b/ f",
        "sed 's/a/b/e' f",
        "sed '1w out' f",
        "sed -f script.sed f",  # a script it reads from a file: not known here
        "rg --pre id x",
        "rg -z x",
        "base64 -oout x",
        "tar --to-command=id -xf a.tar",
        "tar -I id -xf a.tar",
        "less +!id f",
        "man -P id ls",
        "vim -c '!id' f",
        "awk 'BEGIN { system(\"id\") }'",
        "awk '{ print > \"/tmp/x\" }' f",
        "GIT_PAGER=id git log",
        "env LD_PRELOAD=x git status",
        "PATH=/tmp git status",
    ],
)
def test_an_allow_rule_does_not_cover_what_runs_programs_or_writes_files(command: str) -> None:
    assert run(command, BROAD) is None


@pytest.mark.parametrize(
    "command",
    ["git log -p -1", "git diff -u", "git -C src status", "find . -name '*.py' -type f",
     "sort -u f", "sed -n 1,5p f", "sed 's/a/b/g' f", "rg -n TODO", "tar -tf a.tar",
     "less f", "man ls", "awk '{ print $1 }' f", "LC_ALL=C sort f"],
)  # fmt: skip
def test_an_allow_rule_still_covers_the_harmless_options(command: str) -> None:
    assert run(command, BROAD) == "allow"


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("find . -exec grep", "find . -exec grep -l x {} +"),
        ("sed -i", "sed -i s/a/b/ f"),
        ("git -c core.pager=less log", "git -c core.pager=less log -1"),
        ("NODE_ENV=test npm test", "NODE_ENV=test npm test"),
        ("NODE_ENV=test npm test", "env NODE_ENV=test npm test -- x"),
        ("GIT_PAGER=cat git log", "GIT_PAGER=cat git log -1"),
    ],
)
def test_an_allow_rule_that_names_it_covers_it(rule: str, command: str) -> None:
    assert run(command, Rule("allow", command=rule), Rule("allow", command="grep")) == "allow"


def test_an_allow_rule_that_names_an_assignment_covers_only_that_one() -> None:
    rule = Rule("allow", command="NODE_ENV=test npm test")
    assert run("npm test", rule) is None  # the rule names the assignment: it must be given
    assert run("NODE_ENV=prod npm test", rule) is None
    assert run("NODE_ENV=test LD_PRELOAD=x npm test", rule) is None


def test_a_write_is_a_path_request_judged_by_path_rules(tmp_path) -> None:
    rules = [Rule("allow", command=["ls", "tee"]), Rule("allow", kind="edit", path=str(tmp_path))]
    assert run(f"ls > {tmp_path}/list", *rules) == "allow"
    assert run(f"ls | tee {tmp_path}/a {tmp_path}/b", *rules) == "allow"
    assert run(f"ls | tee {tmp_path}/a /tmp/elsewhere", *rules) is None  # every file it writes
    assert run("ls > /tmp/elsewhere", *rules) is None
    denied = [Rule("deny", path=str(tmp_path / "secret")), *rules]
    assert run(f"ls > {tmp_path}/secret/x", *denied) == "deny"


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        # a program not in the option table: short options in any order and grouping
        ("foo -xy", "foo -y -x a", "deny"),
        ("foo -xy", "foo -yvx a", "deny"),
        ("foo -x -y", "foo --long -xy", "deny"),
        ("foo --bar -x", "foo -x --bar", "deny"),
        ("foo --bar=1", "foo --bar=1 x", "deny"),
        ("foo -xy", "foo -x a", None),
        ("foo --bar", "foo --barn", None),
        ("foo -x", "foo -- -x", None),  # after `--` a file name
        # the table: equivalents and values however attached
        ("rm -rf", "rm -R --force x", "deny"),
        ("git branch -D", "git branch --delete --force x", "deny"),
        ("git branch -D", "git branch -d x", None),
        ("cp -r", "cp -a x y", "deny"),
        ("curl -X DELETE", "curl --request=DELETE u", "deny"),
        ("curl -X DELETE", "curl -X GET u", None),
        ("dd of=/dev/sda", "dd bs=4M of=/dev/sda if=x", "deny"),
        ("dd of=/dev/sda", "dd of=/dev/sdb", None),
        ("mkfs -t ext4", "mkfs.ext4 /dev/x", "deny"),
        ("mkfs -t ext4", "mkfs.vfat /dev/x", None),
        ("kubectl delete namespace", "kubectl delete ns/prod", "deny"),
        ("docker rmi", "docker image remove x", "deny"),
        ("git push --delete", "git push origin :main", "deny"),
        ("chmod 777", "chmod 0777 x", "deny"),
        ("terraform destroy -auto-approve", "terraform apply --destroy --auto-approve", "deny"),
        ("git push --force", "git push --force-with-lease", None),
    ],
)
def test_a_deny_rule_matches_every_spelling_of_its_options(rule, command, expected) -> None:
    assert run(command, Rule("deny", command=rule)) == expected


def test_the_option_table_is_the_one_docs_rules_md_describes() -> None:
    import re
    from pathlib import Path

    from bridge.options import PROGRAMS, SAME_PROGRAM

    doc = (Path(__file__).parents[2] / "docs" / "rules.md").read_text()
    table = doc.split("### The option table", 1)[1].split("\n## ", 1)[0]
    documented = {
        name
        for row in table.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([a-z0-9-]+)`", row.split("|")[1])
    }
    assert set(PROGRAMS) <= documented
    assert documented <= set(PROGRAMS) | set(SAME_PROGRAM)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "rm -r -f build",
        "dd if=/dev/zero of=disk.img bs=1M count=1",
        "mkfs.ext4 /dev/loop0",
        "chmod -R 755 build",
        "git push --force origin main",
        "find . -name '*.pyc' -delete",
        "git -c core.pager=evil status",
        "kill -9 1234",
    ],
)
def test_a_destructive_command_is_proposed_exactly_never_by_its_program(command) -> None:
    """`p` on a destructive command proposes that command and nothing else: the rule allows it
    as written, not with one more argument, and not the program with other arguments."""
    from bridge.rules import breadth

    rule = propose_rule(Request(agent="claude", kind="execute", command=command))
    assert rule is not None and rule.command is not None
    (prefix,) = rule.command
    assert prefix.endswith(" $") and parse_command(prefix[:-2]).parts[0].words == (
        parse_command(command).parts[0].words
    )
    assert rule.check_examples() == []
    assert run(command, rule) == "allow"
    assert run(command + " src", rule) is None
    program = parse_command(command).parts[0].words[0]
    assert run(f"{program} --help", rule) is None
    assert breadth(rule) == []  # nothing broad to warn about


def test_a_title_like_command_becomes_the_exact_command_not_its_first_two_words() -> None:
    from bridge.rules import scope_text

    rule = propose_rule(Request(agent="eliza", kind="execute", command="run the tests"))
    assert rule is not None and rule.command == ("run the tests $",)
    assert scope_text(rule, "Eliza") == "always allow exactly `run the tests` by Eliza"
    assert run("run the tests", rule, agent="eliza") == "allow"
    assert run("run the tests && rm -rf build", rule, agent="eliza") is None
    assert run("run the", rule, agent="eliza") is None
    assert run("run the tests now", rule, agent="eliza") is None


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("git status -s", "git status"),
        ("git log --oneline -5", "git log"),
        ("git diff HEAD~1 -- src", "git diff"),
        ("ls -la", "ls"),
        ("cat README.md", "cat"),
        ("grep -rn TODO .", "grep"),
    ],
)
def test_a_read_only_program_is_proposed_with_its_subcommand_and_called_broad(
    command, prefix
) -> None:
    from bridge.rules import breadth, scope_text

    rule = propose_rule(Request(agent="a", kind="execute", command=command))
    assert rule is not None and rule.command == (prefix,)
    assert scope_text(rule) == f"always allow commands starting `{prefix}` by a"
    assert breadth(rule) == [f"Broad: `{prefix}` with any arguments, not only this request."]


def test_a_read_only_program_with_an_option_that_runs_or_writes_is_proposed_exactly() -> None:
    for command in ("git diff --output=x", "git log --ext-diff", "rg --pre ./x foo"):
        rule = propose_rule(Request(agent="a", kind="execute", command=command))
        assert rule is not None and rule.command is not None
        assert rule.command[0].endswith(" $"), command


def test_breadth_warns_loudest_for_a_destructive_program_allowed_by_its_name() -> None:
    from bridge.rules import breadth

    (note,) = breadth(Rule("allow", command=("rm",)))
    assert note.startswith("⚠ Broad: `rm` with any arguments")
    (note,) = breadth(Rule("allow", command=("git push",)))
    assert note.startswith("⚠ Broad: `git push` with any arguments")
    (note,) = breadth(Rule("allow", kind="execute", title="run the tests"))
    assert "whatever it runs" in note
    assert breadth(Rule("deny", command=("rm",))) == []


def test_an_exact_prefix_allows_only_that_command_and_a_deny_ignores_the_mark() -> None:
    allow = Rule("allow", command=("rm -rf build $",))
    assert run("rm -rf build", allow) == "allow"
    assert run("rm -rf build src", allow) is None
    assert run("rm -rf", allow) is None
    deny = Rule("deny", command=("rm -rf $",))  # the mark does not narrow a deny
    assert run("rm -rf build", deny) == "deny"


def test_a_glob_that_may_match_a_file_named_like_an_option_is_only_known_when_it_runs(tmp_path):
    # the oracle: with a file named `-i` in the folder, `sed -n 1p *` edits the others in place
    import subprocess

    (tmp_path / "-i").write_text("")
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    subprocess.run(["bash", "-c", "sed -n 1p *"], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "notes.txt").read_text() == "one\n"
    allow = Rule("allow", command=("sed -n", "sort", "cat", "grep"))
    for command in ("sed -n 1p *", "sed -n 1p [-x]*", "sort -*", 'sort "--o"*'):
        assert run(command, allow) is None, command
    for command in ("sed -n 1p ./*", "cat *", "grep x src/*.py", "sort x*"):
        assert run(command, allow) == "allow", command
