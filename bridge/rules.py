"""Approval rules: what a rule can match, and how a rule set decides one permission request.

A rule matches a request's **agent** (glob), **tool kind**, **title** (glob, case-insensitive, or a
regular expression), **shell command** (a command prefix checked against every simple command the
request runs), **paths** (inside a directory, after resolving `~`, `..` and symlinks) and **URLs**
(scheme + host + path prefix). Every field a rule gives must match; a rule without fields matches
everything. The paths and URLs are every one the tool call names (`tool_call_targets`); a deny rule
matches any of them in any reading, an allow rule needs every one plain and covered (see
docs/rules-urls-paths.md).

Precedence (never file order across actions): **deny > ask > allow**. An agent's bypass is an
allow: a matching deny or ask rule still beats it. Within one action the first rule in the file is
the one reported.

Shell commands are parsed by `bridge.shell` (with `bashlex`, a port of bash's own grammar), never
split with a regex: every simple command of a pipeline, a `&&`/`||`/`;` list, a subshell, a
`{ …; }` group, a loop or an `if`, a `$(…)`/backtick substitution and a `<(…)` process
substitution is checked on its own, and so is the command a wrapper runs (`sudo git push` is
`sudo git push` and `git push`).

* a command rule that **denies** (or asks) matches when *any* part matches; its first word also
  matches by basename (`deny rm` catches `/bin/rm -rf x`), and its further words match with
  options skipped between them (`deny git push` catches `git -C dir push`, not `git log --grep
  push`; see `_match_rest`);
* **allow** needs *every* part allowed (each by some allow rule); the first word must be written
  exactly as the rule writes it (`allow git status` does not allow `./git status`). A prefix
  ending in a lone `$` allows the command exactly as written, nothing appended (`allow rm -rf
  build $` does not allow `rm -rf build /`); a deny or ask rule ignores the `$`. A harmless
  wrapper (`timeout 5`, `nice`, `time`, `nohup`, `env`, …) needs nothing of its own; a
  privileged one (`sudo`, `doas`, `su`, `runuser`, `pkexec`, `chroot`) needs an allow rule of
  its own as well (`allow sudo`), unless one prefix names both (`allow sudo apt update`); `xargs
  cmd` appends arguments, so only a prefix its written words already cover allows it;
* a part that writes to a file by redirection (`> f`, `>> f`, `&> f`; not `/dev/null` or `>&2`)
  is never allowed by a command rule — the redirect is a file write the prefix does not describe;
* a deny or ask **path** rule also matches a shell command run inside its directory, or whose
  words name a path inside it (`named_paths`: `~`, `$HOME`, braces and globs expanded, relative
  to the cwd and every `cd`/`-C` directory, symlinks resolved); a word only known when it runs
  or a longer word with the directory's name in it is a MIGHT. An allow path rule never allows a
  shell command by itself;
* what cannot be known is **ask**: a script bashlex cannot parse, a command name that is itself an
  expansion (`$CMD`, `$(which rm)`), a substitution hidden in `${…}`, a dynamic `sh -c` script, a
  wrapper option that is not known. When a deny or ask rule *might* match it (`git $SUB` or
  `xargs git` against `deny git push`; anything unknowable against any deny command rule) the
  verdict is an ask that beats bypass, as a deny would.

Rules may carry their own tests, `match = [...]` and `not_match = [...]`: example requests (a string
is the rule's main field — its command, URL, path or title — a table gives any of `agent`, `kind`,
`title`, `command`, `path`, `url`). Fields an example does not give are not compared.
`check_examples` runs them; the settings layer refuses a file whose examples fail.
"""

from __future__ import annotations

import fnmatch
import glob
import itertools
import os
import posixpath
import re
import shlex
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from bridge.options import INERT_VARIABLES, Spelling, program_name, unsafe_options
from bridge.options import read as read_options
from bridge.shell import GLOB_CHARS as _GLOB_CHARS
from bridge.shell import ParsedCommand as ParsedCommand
from bridge.shell import Part as Part
from bridge.shell import is_assignment, parse_cached
from bridge.shell import parse_command as parse_command

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[str, ...] = ("allow", "ask", "deny")
RULE_KEYS = (
    "action",
    "agent",
    "kind",
    "title",
    "title_regex",
    "command",
    "path",
    "url",
    "reason",
    "match",
    "not_match",
)
EXAMPLE_KEYS = ("agent", "kind", "title", "command", "path", "url")
# rawInput keys (at any depth, in lists too; compared lowercased without `_` and `-`) whose values
# are paths, URLs, or text that is neither (file contents, search patterns, prompts). A path- or
# URL-looking value under any other key is a path or URL too, for deny rules; allow rules do not
# vouch for a request that has one (they do not know what the tool does with it).
PATH_KEYS = frozenset(
    [
        "path",
        "paths",
        "filepath",
        "filepaths",
        "file",
        "files",
        "filename",
        "notebookpath",
        "abspath",
        "directory",
        "dir",
        "cwd",
        "newpath",
        "oldpath",
        "destination",
        "dest",
        "target",
        "targetfile",
        "targetdirectory",
        "source",
        "src",
        "sourcepath",
        "targetpath",
        "destinationpath",
        "outputpath",
        "outputfile",
        "outfile",
        "workdir",
        "workingdirectory",
        "root",
    ]
)
URL_KEYS = frozenset(["url", "urls", "uri", "uris", "href", "hrefs", "link", "links"])
TEXT_KEYS = frozenset(
    [
        "content",
        "contents",
        "newstring",
        "oldstring",
        "newstr",
        "oldstr",
        "newsource",
        "text",
        "prompt",
        "description",
        "pattern",
        "query",
        "regex",
        "glob",
        "include",
        "exclude",
        "title",
        "message",
        "body",
        "explanation",
        "reason",
        "replacement",
        "code",
        "insertedtext",
        "patch",
        "diff",
        "newtext",
        "oldtext",
    ]
)
COMMAND_KEYS = frozenset({"command", "cmd"})  # the shell command: bridge.shell reads it
MAX_COMMAND = 64 * 1024  # a longer command (or path, URL) is asked: "too long to check"
MAX_INPUT_NODES = 10_000  # values in one rawInput looked at; beyond: too large to check
MAX_INPUT_DEPTH = 32
MAX_LOOSE_PATHS = 32  # other keys' one-line values looked at as possible paths (deny rules)
# A command prefix ending in this word (`command = ["rm -rf build $"]`) allows that command exactly,
# with no further arguments; a deny or ask rule ignores it (deny matches generously).
EXACT_MARK = "$"


class RuleError(ValueError):
    """A rule that cannot be used. `field` names the offending key when there is one."""

    def __init__(self, reason: str, field: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field


# --- shell commands -------------------------------------------------------------------------------

# What a command runs (every simple command, wrappers unwrapped) is bridge.shell's business.
NO, MIGHT, YES = 0, 1, 2  # whether a deny or ask rule matches: MIGHT when it cannot be known


@lru_cache(maxsize=8192)
def spell(words: tuple[str, ...], unknown: frozenset[int] = frozenset()) -> Spelling:
    """A command's words in the one spelling deny rules compare (bridge.options)."""
    return read_options(words, unknown)


def inert_assignment(word: str) -> bool:
    name = word.partition("=")[0].removesuffix("+")
    return name in INERT_VARIABLES or name.startswith("LC_")


def _assigns_covered(prefix_assigns: tuple[str, ...], part: Part) -> bool:
    """An allow rule covers the assignments given to a command when it names every one of them
    (but those that only choose a language, a time zone or colours) and each it names is given."""
    return _assigns_named(prefix_assigns, part) and all(
        inert_assignment(a) or any(_token_matches(p, a) for p in prefix_assigns)
        for a in part.assigns
    )


def _assigns_named(prefix_assigns: tuple[str, ...], part: Part) -> bool:
    """Every assignment a rule's prefix starts with is given to the command."""
    return all(any(_token_matches(a, b) for b in part.assigns) for a in prefix_assigns)


# --- requests -------------------------------------------------------------------------------------


@dataclass
class Request:
    """What a rule looks at. In an example, a field left None is "not compared"."""

    agent: str | None = None
    kind: str | None = None
    title: str | None = None
    command: str | tuple[str, ...] | None = None
    paths: tuple[str, ...] | None = None
    urls: tuple[str, ...] | None = None
    cwd: str | None = None
    odd_paths: tuple[str, ...] = ()  # keys outside PATH_KEYS that hold a path
    odd_urls: tuple[str, ...] = ()  # keys outside URL_KEYS that hold a URL
    text_urls: tuple[str, ...] = ()  # text values (a prompt) that are URLs: for deny rules
    loose_paths: tuple[str, ...] = ()  # other keys' one-line values (`keys/id`): for deny rules
    unchecked: str | None = None  # why it is too large to check (then it is asked)
    malformed: str | None = None  # why an execute call's command cannot be judged (→ ask)
    _parsed: ParsedCommand | None = field(default=None, repr=False)
    _real: tuple[str, ...] | None = field(default=None, repr=False)
    _readings: tuple[tuple[tuple[str, ...], str | None], ...] | None = field(
        default=None, repr=False
    )
    _urls: tuple[UrlView, ...] | None = field(default=None, repr=False)
    _loose: tuple[str, ...] | None = field(default=None, repr=False)
    _cmd_urls: tuple[UrlView, ...] | None = field(default=None, repr=False)
    _named: NamedPaths | None = field(default=None, repr=False)
    _named_in: dict[str, int] = field(default_factory=dict, repr=False)  # root → verdict
    _doubts: dict[str, list[str]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_tool_call(
        cls, agent: str, tool_call: dict[str, Any], *, cwd: str | None = None
    ) -> Request:
        """The request an ACP `ToolCallUpdate` (camelCase JSON) describes."""
        kind = tool_call.get("kind") or ""
        title = tool_call.get("title") or ""
        raw = tool_call.get("rawInput")
        command: str | tuple[str, ...] | None = None
        targets = tool_call_targets(tool_call)
        paths, urls = list(targets.paths), list(targets.urls)
        malformed: str | None = None
        if kind == "execute":
            command, malformed = command_of(raw)
        elif isinstance(raw, dict):
            for key in ("command", "cmd"):
                value = raw.get(key)
                if isinstance(value, str) and value.strip():
                    command = value
                    break
                if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                    command = tuple(value)
                    break
        if isinstance(raw, dict):
            if isinstance(raw.get("cwd"), str) and raw["cwd"] and cwd is None:
                cwd = raw["cwd"]
        if not urls and kind == "fetch" and re.match(r"https?://\S+$", title.strip()):
            urls.append(title.strip())
        return cls(
            agent=agent,
            kind=kind,
            title=title,
            command=command,
            paths=tuple(paths),
            urls=tuple(urls),
            cwd=cwd,
            odd_paths=targets.odd_paths,
            odd_urls=targets.odd_urls,
            text_urls=targets.text_urls,
            loose_paths=targets.loose_paths,
            unchecked=targets.unchecked,
            malformed=malformed,
        )

    @property
    def parsed(self) -> ParsedCommand | None:
        if self.command is None:
            return None
        if self._parsed is None:
            too_long = self.too_long()
            if too_long is not None:
                self._parsed = ParsedCommand((), (too_long,))
            elif isinstance(self.command, str):
                self._parsed = parse_cached(self.command)
            else:
                self._parsed = parse_command(self.command)
        return self._parsed

    def too_long(self) -> str | None:
        """Why this request is not checked at all (then it is asked), or None."""
        if self.unchecked is not None:
            return self.unchecked
        command = self.command
        if command is None:
            return None
        size = len(command) if isinstance(command, str) else sum(len(w) + 1 for w in command)
        if size > MAX_COMMAND // 4:  # up to 4 bytes a character
            text = command if isinstance(command, str) else " ".join(command)
            size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_COMMAND:
            return f"the command is {size:,} bytes, too long to check (the limit is 64 KiB)"
        return None

    def path_readings(self) -> tuple[tuple[tuple[str, ...], str | None], ...]:
        """Per path: the real paths it may name (resolved, and as written) and why it cannot be
        resolved (a NUL, a symlink loop, a name too long), or None."""
        if self._readings is None:
            self._readings = tuple(resolve_checked(p, self.cwd) for p in self.paths or ())
        return self._readings

    def loose_readings(self) -> tuple[str, ...]:
        """The real paths the loose paths (other keys' one-line values) may name: for deny
        rules."""
        if self._loose is None:
            self._loose = tuple(
                name for p in self.loose_paths for name in resolve_checked(p, self.cwd)[0]
            )
        return self._loose

    def real_paths(self) -> tuple[str, ...]:
        if self._real is None:
            self._real = tuple(r[0][0] for r in self.path_readings())
        return self._real

    def path_doubts(self) -> list[str]:
        """Why an allow path rule cannot vouch for this request's paths."""
        out = self._doubts.get("path")
        if out is None:
            out = [f"a path in `{key}`, which is not a known path field" for key in self.odd_paths]
            out.extend(self.unresolved())
            self._doubts["path"] = out
        return out

    def unresolved(self) -> list[str]:
        """The paths that cannot be resolved, each with why."""
        out = self._doubts.get("unresolved")
        if out is None:
            out = [
                f"the path {p[:200]!r} cannot be resolved: {why}"
                for p, (_, why) in zip(self.paths or (), self.path_readings(), strict=True)
                if why is not None
            ]
            self._doubts["unresolved"] = out
        return out

    def url_doubts(self) -> list[str]:
        """Why an allow URL rule cannot vouch for this request's URLs."""
        out = self._doubts.get("url")
        if out is None:
            out = [f"a URL in `{key}`, which is not a known URL field" for key in self.odd_urls]
            out.extend(f"{v.text[:200]!r}: {v.doubt}" for v in self.url_views() if v.doubt)
            self._doubts["url"] = out
        return out

    def named_paths(self) -> NamedPaths:
        """The paths the command's words name (for deny path rules)."""
        if self._named is None:
            parsed = self.parsed
            assert parsed is not None
            raw = self.command if isinstance(self.command, str) else None
            self._named = named_paths(parsed, raw, self.cwd)
        return self._named

    def url_views(self) -> tuple[UrlView, ...]:
        if self._urls is None:
            self._urls = tuple(read_url(u, scheme_optional=True) for u in self.urls or ())
        return self._urls

    def command_url_views(self) -> tuple[UrlView, ...]:
        """The URLs a shell command names — in its text (`curl https://…`), and its words that
        read as a host (`curl evil.example/x`, `ssh user@evil.example`, `scp f host:dir`) — and
        the text values that are URLs: for deny and ask rules."""
        if self._cmd_urls is None:
            views = [read_url(u) for u in self.text_urls]
            parsed = self.parsed
            if self.command is not None and parsed is not None and self.too_long() is None:
                text = self.command if isinstance(self.command, str) else " ".join(self.command)
                for m in itertools.islice(_URL_START.finditer(text), MAX_URL_CANDIDATES):
                    end = _URL_END.search(text, m.end())
                    views.append(read_url(text[m.start() : end.start() if end else len(text)]))
                words = [w for p in parsed.parts for w in p.words[1:]]
                words.extend(w for w, _ in parsed.words)
                hosts = (w for w in dict.fromkeys(words) if _HOSTISH.match(w))
                for word in itertools.islice(hosts, MAX_URL_CANDIDATES):
                    host, _, path = word.rpartition("@")[2].replace(":", "/", 1).partition("/")
                    reading = ("https", _normal_host(host), "", "/" + path)
                    views.append(UrlView(word, frozenset({reading}), "a host in a command"))
            self._cmd_urls = tuple(views)
        return self._cmd_urls

    def to_example(self) -> dict[str, Any]:
        """This request as a rule example (a table)."""
        out: dict[str, Any] = {}
        if self.agent:
            out["agent"] = self.agent
        if self.kind:
            out["kind"] = self.kind
        if self.command is not None:
            out["command"] = (
                self.command if isinstance(self.command, str) else shlex.join(self.command)
            )
        elif self.urls:
            out["url"] = self.urls[0]
        elif self.paths:
            out["path"] = self.paths[0]
        elif self.title:
            out["title"] = self.title
        return out


# Keys an agent might put a command under. An execute call is judged by its command, never its
# title: its input must hold exactly one of these, `command`, a string or a list of strings.
EXECUTE_KEYS = ("command", "cmd", "script", "args", "argv", "commands", "code", "shell",
                "bash", "shell_command", "command_line", "commandLine", "cmdline")  # fmt: skip


def command_of(raw: Any) -> tuple[str | tuple[str, ...] | None, str | None]:
    """An execute call's command from its `rawInput`, or why it has none that can be judged."""
    if not isinstance(raw, dict):
        what = "no input" if raw is None else f"an input that is {_describe(raw)}, not a table"
        return None, f"an execute call with {what}: its command is not known"
    keys = [k for k in EXECUTE_KEYS if k in raw]
    if len(keys) > 1:
        return None, f"an execute call with more than one command ({', '.join(keys)})"
    if keys != ["command"]:
        where = f"under {keys[0]!r}, not 'command'" if keys else "missing"
        return None, f"an execute call whose command is {where}"
    value = raw["command"]
    if isinstance(value, str):
        if not value.strip():
            return None, "an execute call with a blank command"
        return value, None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if not "".join(value).strip():
            return None, "an execute call with a blank command"
        return tuple(value), None
    return None, "an execute call whose command is neither a string nor a list of strings"


def resolve_path(path: str, cwd: str | None = None) -> str:
    """Absolute, `~` expanded, `..` and symlinks resolved (as far as the path exists)."""
    return resolve_checked(path, cwd)[0][0]


def resolve_checked(path: str, cwd: str | None = None) -> tuple[tuple[str, ...], str | None]:
    """The real paths `path` may name — resolved (`~` expanded, against `cwd`, `..` and symlinks
    resolved as far as the path exists) and as written (`..` removed) — and why it cannot be
    resolved, or None. Never raises: a NUL (a program reads the path up to it), a symlink loop or
    a name too long is the reason."""
    why = None
    if "\0" in path:
        why = "a NUL character in the path"
        path = path.partition("\0")[0]
    try:
        p = os.path.expanduser(path)
    except (RuntimeError, KeyError, ValueError):
        p = path
    if not os.path.isabs(p):
        p = os.path.join(cwd or os.getcwd(), p)
    written = real = os.path.normpath(p)
    try:
        real = os.path.realpath(p)  # as far as it exists: it need not exist (yet)
        os.stat(real)  # a symlink loop or a name too long is left unresolved: stat says so
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:
        why = why or (exc.strerror or str(exc)).lower()
    except ValueError as exc:
        why = why or str(exc)
    return (real,) if real == written else (real, written), why


@dataclass(frozen=True)
class Targets:
    """The paths and URLs a tool call names (see `tool_call_targets`)."""

    paths: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    odd_paths: tuple[str, ...] = ()
    odd_urls: tuple[str, ...] = ()
    unchecked: str | None = None
    text_urls: tuple[str, ...] = ()  # one-line text values that are URLs (for deny rules)
    loose_paths: tuple[str, ...] = ()  # relative paths under other keys (for deny rules)


def _file_url_path(value: str) -> str:
    """The path of a `file:` URL (percent-decoded)."""
    try:
        return unquote(urlsplit(value.strip()).path) or value
    except ValueError:
        return value


def _looks_like_path(value: str) -> bool:
    return (value.startswith(("/", "~", "./", "../")) or value in (".", "..")) and "\n" not in value


def tool_call_targets(tool_call: dict[str, Any]) -> Targets:
    """Every path and URL a tool call names: its `locations`, and every value of its `rawInput`
    at any depth (`edits[].file_path`, lists of URLs): under a path key (PATH_KEYS) or a URL key
    (URL_KEYS); a `file:` URL anywhere is a path; under any other key (not TEXT_KEYS or the
    command), a value that looks like a path (absolute, `~`, `./`, `../`) or a URL (`scheme://`,
    `https:`) is one too, and its key is "odd"."""
    paths: list[str] = []
    urls: list[str] = []
    odd_paths: list[str] = []
    odd_urls: list[str] = []
    text_urls: list[str] = []
    loose_paths: list[str] = []
    unchecked: str | None = None
    for loc in tool_call.get("locations") or ():
        if isinstance(loc, dict) and isinstance(loc.get("path"), str) and loc["path"]:
            path = loc["path"]
            paths.append(_file_url_path(path) if path[:5].lower() == "file:" else path)
    raw = tool_call.get("rawInput")
    stack: list[tuple[str, Any, int]] = [("rawInput", raw, 0)] if raw is not None else []
    nodes = 0
    while stack:
        key, value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_INPUT_NODES or depth > MAX_INPUT_DEPTH:
            unchecked = "the tool call's input is too large or too deep to check"
            break
        if isinstance(value, dict):
            stack.extend((str(k), v, depth + 1) for k, v in reversed(value.items()))
            continue
        if isinstance(value, list):
            stack.extend((key, v, depth + 1) for v in reversed(value))
            continue
        if not isinstance(value, str) or not value.strip():
            continue
        name = key.lower().replace("_", "").replace("-", "")
        if name in COMMAND_KEYS and depth <= 2:
            continue  # the shell command: bridge.shell reads it (and its paths and URLs)
        if len(value) > MAX_COMMAND and (
            name in PATH_KEYS
            or name in URL_KEYS
            or (
                name not in TEXT_KEYS
                and (_URL_PREFIX.match(value[:256]) or _looks_like_path(value[:256]))
            )
        ):
            unchecked = f"`{key}` is {len(value):,} characters, too long to check"
            break
        if value[:5].lower() == "file:":
            paths.append(_file_url_path(value))
            if name in URL_KEYS:
                urls.append(value)  # `file://host/…` names a host too
            elif name not in PATH_KEYS:
                odd_paths.append(key)
        elif name in URL_KEYS:
            urls.append(value)
        elif name in PATH_KEYS:
            paths.append(value)
            if _URL_PREFIX.match(value):
                urls.append(value)
        elif name in TEXT_KEYS:
            if "\n" not in value and _URL_PREFIX.match(value[:256]):
                text_urls.append(value)  # a one-line text that is a URL: deny rules look at it
        elif _URL_PREFIX.match(value[:256]):
            urls.append(value if len(value) < 4096 else value[:4096])
            odd_urls.append(key)
        elif _looks_like_path(value):
            paths.append(value)
            odd_paths.append(key)
        elif "\n" not in value and len(value) < 4096 and len(loose_paths) < MAX_LOOSE_PATHS:
            loose_paths.append(value)  # `keys/id_rsa`, `keys`: may be a path (for deny rules)
    return Targets(
        tuple(paths),
        tuple(urls),
        tuple(dict.fromkeys(odd_paths)),
        tuple(dict.fromkeys(odd_urls)),
        unchecked,
        tuple(text_urls),
        tuple(loose_paths),
    )


def inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep) or root == os.sep


@dataclass(frozen=True)
class NamedPaths:
    """What a shell command's words name, for deny path rules: `real`, the real paths its words
    name (`~`, `$HOME`, `{a,b}` braces and globs expanded; relative ones against the session's
    cwd and every directory it changes to); `maybe`, real paths named inside longer words (a
    script's text: `python -c "open('/x/y')"`) or in a command that cannot be parsed; `parts`,
    the path components of words only known when it runs (`$DIR/.ssh/id`) and of such longer
    words; `cwd`, the session's directory when known; `too_many`, a glob matched more files than
    are looked at."""

    real: frozenset[str] = frozenset()
    maybe: frozenset[str] = frozenset()
    parts: frozenset[str] = frozenset()
    cwd: str | None = None
    too_many: bool = False


MAX_EXPANSIONS = 256  # brace alternatives, glob matches, directories: beyond it, "might"
MAX_BRACES = 16  # `{` in one word
MAX_GLOB_LEVELS = 2  # path components with a glob in one pattern (each level lists directories)
_TOKEN_SPLIT = re.compile(r"""[\s'"()=:,;<>|&`]+""")
_HOME_VAR = re.compile(r"\$\{HOME\}|\$HOME(?![A-Za-z0-9_])")


def named_paths(parsed: ParsedCommand, raw: str | None, cwd: str | None) -> NamedPaths:
    home = os.path.expanduser("~")
    start = resolve_path(cwd) if cwd else os.getcwd()
    bases = [start]
    for directory in parsed.dirs:
        for text in _expand_words(directory, home) or ():
            for base in list(bases):
                if len(bases) < MAX_EXPANSIONS // 16:
                    bases.append(
                        os.path.realpath(text) if os.path.isabs(text) else _real_under(base, text)
                    )
    bases = list(dict.fromkeys(bases))
    real: set[str] = set()
    maybe: set[str] = set()
    parts: set[str] = set()
    too_many = False

    def resolve(text: str, into: set[str]) -> None:
        if os.path.isabs(text):
            into.add(os.path.realpath(text))
        else:
            into.update(_real_under(base, text) for base in bases)

    def fuzzy(text: str) -> None:
        for token in _TOKEN_SPLIT.split(text):
            if "/" in token or token.startswith("~"):
                plain = _HOME_VAR.sub(home, token)
                plain = os.path.expanduser(plain) if plain.startswith("~") else plain
                parts.update(c for c in plain.split("/") if c)
                if "$" not in plain and "`" not in plain:
                    resolve(plain, maybe)

    for text, dynamic in parsed.words:
        if not text:
            continue
        if text.startswith("-"):  # an option: its attached value (`--file=X`, `-oX`)
            if "=" in text:
                names = [text.partition("=")[2]]
            elif not text.startswith("--") and len(text) > 2:
                names = [text[2:]]
            else:
                names = []
        else:
            names = [text]
            if "=" in text:  # `NAME=value`, `if=value`
                names.append(text.partition("=")[2])
        for name in names:
            expanded = _expand_words(name, home)
            if expanded is None:  # only known when it runs (or too many braces to expand)
                too_many = too_many or name.count("{") > MAX_BRACES
                fuzzy(name)
                continue
            too_many = too_many or len(expanded) >= MAX_EXPANSIONS
            for word in expanded:
                if _GLOB_CHARS & set(word):
                    matches, over = _glob(word, bases)
                    real.update(matches)
                    too_many = too_many or over
                resolve(word, real)
        if dynamic or len(_TOKEN_SPLIT.split(text)) > 1:
            fuzzy(text)
    if parsed.opaque and raw:
        fuzzy(raw)
        for token in _TOKEN_SPLIT.split(raw):
            for word in _expand_words(token, home) or ():
                resolve(word, maybe)
    return NamedPaths(
        frozenset(real), frozenset(maybe), frozenset(parts), start if cwd else None, too_many
    )


def _real_under(base: str, name: str) -> str:
    """os.path.realpath(os.path.join(base, name)) for a real `base`; one lstat for a plain name."""
    if "/" in name or name in (".", ".."):
        return os.path.realpath(os.path.join(base, name))
    path = os.path.join(base, name)
    try:
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            return path
    except (OSError, ValueError):
        return path  # not there (yet): nothing to resolve
    return os.path.realpath(path)


def _expand_words(text: str, home: str) -> list[str] | None:
    """What a word becomes: `$HOME`, `{a,b}` braces and a leading `~` expanded; None when it holds
    another expansion, only known when it runs."""
    if "$" in text or "`" in text:
        text = _HOME_VAR.sub(home, text)
        if "$" in text or "`" in text:
            return None
    if "<(" in text or ">(" in text:
        return None
    if text.count("{") > MAX_BRACES:
        return None  # too many to expand: only its name is looked at
    words = _expand_braces(text)
    return [os.path.expanduser(w) if w.startswith("~") else w for w in words]


def _expand_braces(text: str) -> list[str]:
    """`a{b,c}d` → `abd`, `acd` (no ranges), at most MAX_EXPANSIONS words."""
    start = text.find("{")
    while start != -1:
        depth, commas, k = 0, [], start
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            elif text[k] == "," and depth == 1:
                commas.append(k)
            k += 1
        if k < len(text) and commas:
            bounds = [start, *commas, k]
            head, tail = text[:start], text[k + 1 :]
            out: list[str] = []
            for a, b in itertools.pairwise(bounds):
                for rest in _expand_braces(head + text[a + 1 : b] + tail):
                    if len(out) >= MAX_EXPANSIONS:
                        return out
                    out.append(rest)
            return out
        start = text.find("{", start + 1)
    return [text]


def _glob(pattern: str, bases: list[str]) -> tuple[list[str], bool]:
    """The real paths a glob matches (as bash would, dot files included), and whether there were
    more than are looked at."""
    out: list[str] = []
    if sum(1 for c in pattern.split("/") if _GLOB_CHARS & set(c)) > MAX_GLOB_LEVELS:
        return out, True
    roots: list[str | None] = [None] if os.path.isabs(pattern) else list(bases)
    for root in roots:
        try:
            found = list(
                itertools.islice(
                    glob.iglob(pattern, root_dir=root, include_hidden=True), MAX_EXPANSIONS + 1
                )
            )
        except (OSError, ValueError):
            continue
        if len(found) > MAX_EXPANSIONS:
            return out, True
        out.extend(os.path.realpath(os.path.join(root or "", f)) for f in found)
    return out, False


# --- URLs ---------------------------------------------------------------------------------------------

# A URL is read two ways, as a browser or Node reads it (WHATWG, with `ada_url`: a backslash is a
# slash in http(s), tabs and newlines are dropped, `%61` in a host is `a`, `0x7f.1` is 127.0.0.1)
# and as Python's `urllib.parse` does. Each reading is normalized (scheme and host lowercased,
# the host's trailing dot, a default port and any userinfo dropped) to (scheme, host, port, path).
# A deny rule matches when any reading of any URL names its host or a subdomain of it, whatever the
# scheme or port, with its path prefix (compared percent-decoded and case-folded); an allow rule
# only when the URL has exactly one reading and nothing odd (see `UrlView.doubt`).

UrlReading = tuple[str, str, str, str]  # scheme, host, port ("" when default), path
DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}
MAX_URL_CANDIDATES = 32  # the pieces of one text value that are read as URLs
_URL_START = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:[/\\]{2}")
_URL_PREFIX = re.compile(r"\s*(?:(?i:https?|wss?|ftp):|[A-Za-z][A-Za-z0-9+.-]*:[/\\]{2})")
# a command word that names a host: `evil.example`, `evil.example/x`, `user@evil.example:dir`
_HOSTISH = re.compile(r"(?:[^@/:\s]+@)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\.?(?:[:/].*)?$")
_URL_END = re.compile(r"[\s'\"<>`|;&()]")  # where a URL in a shell command's text ends
_URL_ODD = re.compile(r"[\x00-\x20\x7f\\]")
_ENCODED_SEP = re.compile(r"%(?:2f|5c|2e)", re.IGNORECASE)
_WHITESPACE_TABS = str.maketrans("", "", "\t\n\r")


@dataclass(frozen=True)
class UrlView:
    """One URL value of a request: its `readings` (empty when nothing in it reads as a URL with a
    host), and `doubt`, why an allow rule cannot vouch for it (None when its one reading is
    plain)."""

    text: str
    readings: frozenset[UrlReading]
    doubt: str | None


def _normal_host(host: str) -> str:
    host = host.lower().strip("[]").rstrip(".")
    if host and not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass
    return host


def _whatwg_reading(text: str) -> tuple[UrlReading, bool] | None:
    """The WHATWG reading of `text` and whether it has userinfo; None when it is no URL with a
    host."""
    from ada_url import parse_url  # ~10 ms to import: only when a URL is read

    try:
        url = parse_url(text, ("username", "password", "protocol", "port", "hostname", "pathname"))
    except ValueError:
        return None
    scheme = str(url["protocol"]).rstrip(":").lower()
    host = _normal_host(str(url["hostname"]))
    if not host:
        return None
    port = str(url["port"])
    if DEFAULT_PORTS.get(scheme) == port:
        port = ""
    return (scheme, host, port, str(url["pathname"]) or "/"), bool(
        url["username"] or url["password"]
    )


def _python_reading(text: str) -> tuple[UrlReading, bool] | None:
    """What `urllib.parse.urlsplit` makes of `text` (normalized the same way), and whether it has
    userinfo."""
    try:
        parts = urlsplit(text.strip())
        host = _normal_host(parts.hostname or "")
        port = str(parts.port) if parts.port is not None else ""
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme or not host:
        return None
    if DEFAULT_PORTS.get(scheme) == port:
        port = ""
    path = posixpath.normpath("/" + parts.path.lstrip("/")) if parts.path else "/"
    if parts.path.endswith("/") and not path.endswith("/"):
        path += "/"
    return (scheme, host, port, path.replace("//", "/")), "@" in parts.netloc


def read_url(text: str, *, scheme_optional: bool = False) -> UrlView:
    """Every way `text` may be read as a URL: as a whole, with tabs and newlines dropped, each
    whitespace-separated piece, and from every `scheme://` in it (a second URL inside, say in a
    query). With `scheme_optional` (the value of a URL field) `host/path` and `//host/path` are
    read as https too, as a fetch tool would."""
    candidates = [text, text.translate(_WHITESPACE_TABS), *text.split()]
    stripped = candidates[1]
    candidates.extend(text[m.start() :] for m in _URL_START.finditer(text))
    candidates.extend(stripped[m.start() :] for m in _URL_START.finditer(stripped))
    if scheme_optional:
        for piece in text.split():
            if piece.startswith(("//", "\\\\")):
                candidates.append("https:" + piece)
            elif not _URL_START.match(piece):
                candidates.append("https://" + piece)
    readings: set[UrlReading] = set()
    whatwg: set[UrlReading] = set()
    python: set[UrlReading] = set()
    userinfo = False
    for candidate in dict.fromkeys(c.strip() for c in candidates[:MAX_URL_CANDIDATES] if c.strip()):
        for reader, into in ((_whatwg_reading, whatwg), (_python_reading, python)):
            got = reader(candidate)
            if got is not None:
                into.add(got[0])
                userinfo = userinfo or got[1]
    readings = whatwg | python
    doubt: str | None = None
    if not readings:
        doubt = "not a URL with a host"
    elif not _URL_START.match(text):
        doubt = "not an absolute URL (scheme://host/…)"
    elif _URL_ODD.search(text):
        doubt = "whitespace, a control character or a backslash in the URL"
    elif len(_URL_START.findall(text)) > 1:
        doubt = "a second URL inside the URL"
    elif userinfo:
        doubt = "a user name or password in the URL"
    elif len(readings) > 1 or whatwg != python:
        doubt = "browsers and Python read the URL differently"
    elif _ENCODED_SEP.search(next(iter(readings))[3]):
        doubt = "an encoded `/`, `\\` or `.` in the URL's path"
    return UrlView(text, frozenset(readings), doubt)


def split_url(url: str) -> tuple[str, str, str] | None:
    """(scheme, host[:port], normalized path) of a plain URL — None for what is not a URL with a
    host, or one browsers and Python read differently."""
    view = read_url(url.strip())
    if view.doubt is not None and view.doubt != "a user name or password in the URL":
        return None
    scheme, host, port, path = next(iter(view.readings))
    return scheme, f"{host}:{port}" if port else host, path


def _host_glob(host: str) -> tuple[str, bool]:
    """A rule's host and whether it stands for its subdomains too (`*.example.com`)."""
    if host.startswith("*."):
        return host[2:], True
    return host, False


def url_allows(rule: UrlReading, view: UrlView) -> bool:
    """An allow rule's URL against one URL of a request: the URL's one plain reading has the rule's
    scheme, host (a `*.` host: any subdomain), port and path prefix."""
    if view.doubt is not None or len(view.readings) != 1:
        return False
    scheme, host, port, path = next(iter(view.readings))
    r_scheme, r_host, r_port, r_path = rule
    base, subdomains = _host_glob(r_host)
    if scheme != r_scheme or port != r_port:
        return False
    if not (host == r_host or (subdomains and host.endswith("." + base))):
        return False
    return _path_under(path, r_path)


def url_denies(rule: UrlReading, view: UrlView) -> bool:
    """A deny (or ask) rule's URL against one URL of a request: any reading names the rule's host
    or a subdomain of it — whatever the scheme and port — with a path under the rule's (compared
    percent-decoded and case-folded as well)."""
    base = _host_glob(rule[1])[0]
    for _scheme, host, _port, path in view.readings:
        if host != base and not host.endswith("." + base):
            continue
        if _path_under(path, rule[3]) or _path_under(_fold_path(path), _fold_path(rule[3])):
            return True
    return False


def _fold_path(path: str) -> str:
    return posixpath.normpath("/" + unquote(path).replace("\\", "/").lower()) + (
        "/" if path.endswith("/") else ""
    )


def _path_under(path: str, prefix: str) -> bool:
    if prefix in ("", "/"):
        return True
    if prefix.endswith("/"):
        return path.startswith(prefix) or path == prefix.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def url_prefix_matches(rule: tuple[str, str, str], url: tuple[str, str, str]) -> bool:
    """An allow rule's (scheme, host[:port], path) against a URL's (for proposals and tests)."""
    r_host, _, r_port = rule[1].partition(":")
    host, _, port = url[1].partition(":")
    return url_allows(
        (rule[0], r_host, r_port, rule[2]),
        UrlView("", frozenset({(url[0], host, port, url[2])}), None),
    )


# --- rules ----------------------------------------------------------------------------------------


def _compile_glob(pattern: str, *, ignore_case: bool) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern), re.IGNORECASE if ignore_case else 0)


@dataclass
class Rule:
    """A standing decision. Every given field must match (see the module docstring)."""

    action: Action
    kind: str | None = None
    title: str | None = None  # glob, case-insensitive
    agent: str | None = None  # glob
    path: str | None = None  # a directory: inside it after resolution
    title_regex: str | None = None  # re.search
    command: tuple[str, ...] | None = None  # command prefixes, any of them
    url: str | None = None  # scheme://host/path prefix
    reason: str | None = None  # told to the agent (and the audit log) when it denies
    match: list[Any] = field(default_factory=list)  # examples it must match
    not_match: list[Any] = field(default_factory=list)  # examples it must not match
    line: int | None = field(default=None, compare=False)  # where it is in the settings file

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise RuleError(
                f"a rule's action must be allow, ask or deny, not {self.action!r}", "action"
            )
        if isinstance(self.command, str):
            self.command = (self.command,)
        self._compile()

    def _compile(self) -> None:
        self._title = _compile_glob(self.title, ignore_case=True) if self.title else None
        self._agent = (
            _compile_glob(self.agent, ignore_case=False)
            if self.agent and _GLOB_CHARS & set(self.agent)
            else None
        )
        try:
            self._title_re = re.compile(self.title_regex) if self.title_regex else None
        except re.error as exc:
            raise RuleError(f"not a valid regular expression: {exc}", "title_regex") from None
        self._prefixes: list[tuple[str, ...]] = []
        self._assigns: list[tuple[str, ...]] = []  # the `NAME=value` words a prefix starts with
        self._exact: list[bool] = []  # a prefix ending in ` $`: the command exactly, for allow
        for text in self.command or ():
            try:
                tokens = tuple(shlex.split(text))
            except ValueError as exc:
                raise RuleError(
                    f"cannot read the command prefix {text!r}: {exc}", "command"
                ) from None
            exact = len(tokens) > 1 and tokens[-1] == EXACT_MARK
            if exact:
                tokens = tokens[:-1]
            if not tokens:
                raise RuleError("a command prefix must not be empty", "command")
            start = 0
            while start < len(tokens) and is_assignment(tokens[start]):
                start += 1
            if start == len(tokens):
                raise RuleError("a command prefix must name a command", "command")
            self._assigns.append(tokens[:start])
            self._prefixes.append(tokens[start:])
            self._exact.append(exact)
        self._spelled = [spell(p) for p in self._prefixes]
        self._root = resolve_path(self.path) if self.path else None
        self._root_names = frozenset(
            n
            for n in (
                os.path.basename(self._root or ""),
                os.path.basename(os.path.normpath(os.path.expanduser(self.path or ""))),
            )
            if n not in ("", ".", "..")
        )
        self._url: UrlReading | None = None
        if self.url:
            view = read_url(self.url.strip())
            if not view.readings:
                raise RuleError(f"not a URL with a scheme and a host: {self.url!r}", "url")
            if view.doubt is not None:
                raise RuleError(f"not a plain URL ({view.doubt}): {self.url!r}", "url")
            self._url = next(iter(view.readings))

    # description ----------------------------------------------------------------------------------

    def fields(self) -> list[tuple[str, Any]]:
        return [
            (k, v)
            for k, v in (
                ("agent", self.agent),
                ("kind", self.kind),
                ("title", self.title),
                ("title_regex", self.title_regex),
                ("command", " or ".join(self.command) if self.command else None),
                ("path", self.path),
                ("url", self.url),
            )
            if v
        ]

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.fields()]
        return f"{self.action} " + (" ".join(parts) or "everything")

    def label(self, index: int | None = None) -> str:
        """`rule 3 (line 12): deny command=rm` — how decisions name the rule."""
        where = []
        if index is not None:
            where.append(f"rule {index}")
        head = " ".join(where) or "rule"
        if self.line is not None:
            head += f" (line {self.line})"
        return f"{head}: {self.describe()}"

    # matching -------------------------------------------------------------------------------------

    def facets_match(self, req: Request) -> bool:
        """Everything but the command. Request fields that are None are not compared."""
        return self.facets(req) == YES

    def facets(self, req: Request) -> int:
        """Everything but the command: YES, NO, or (a deny or ask path rule against a shell
        command) MIGHT when a word only known when it runs could name a path inside."""
        if self.kind and req.kind is not None and req.kind != self.kind:
            return NO
        if self.agent and req.agent is not None:
            if self._agent is not None:
                if not self._agent.match(req.agent):
                    return NO
            elif req.agent != self.agent:
                return NO
        if self._title is not None and req.title is not None and not self._title.match(req.title):
            return NO
        if (
            self._title_re is not None
            and req.title is not None
            and not self._title_re.search(req.title)
        ):
            return NO
        verdict = YES
        if self._root is not None:
            if self.action == "allow":
                if req.command is not None and not self._prefixes:
                    return NO  # an allow path rule never allows a shell command by itself
                if req.paths is not None:
                    real = req.real_paths()
                    if (
                        not real
                        or req.path_doubts()
                        or not all(inside(p, self._root) for p in real)
                    ):
                        return NO
                if self._url is None and req.urls:
                    return NO  # it says nothing about URLs: a call that names one is not covered
            else:
                verdict = NO
                readings = req.path_readings()
                if any(inside(p, self._root) for names, _ in readings for p in names) or any(
                    inside(p, self._root) for p in req.loose_readings()
                ):
                    verdict = YES
                elif req.command is not None:
                    verdict = self._command_path_verdict(req)
                elif req.paths is None:
                    verdict = YES  # an example that names no path: not compared
                if verdict == NO and req.unresolved():
                    verdict = MIGHT  # a path that cannot be resolved may name anything
                if verdict == NO:
                    return NO
        if self._url is not None:
            if self.action == "allow":
                if req.command is not None and not self._prefixes:
                    return NO  # an allow URL rule never allows a shell command by itself
                if req.urls is not None:
                    views = req.url_views()
                    if (
                        not views
                        or req.odd_urls
                        or not all(url_allows(self._url, v) for v in views)
                    ):
                        return NO
                if self._root is None and req.paths:
                    return NO  # it says nothing about paths: a call that names one is not covered
            elif req.urls is not None or req.command is not None or req.text_urls:
                views = req.url_views() + req.command_url_views()
                if not any(url_denies(self._url, v) for v in views):
                    return NO
        return verdict

    def _command_path_verdict(self, req: Request) -> int:
        """Whether a shell command names a path inside this (deny or ask) rule's directory: it
        runs there, or a word names a path inside (YES); a word only known when it runs, or a
        longer word, names a path with the directory's name in it, or a glob matched too many
        files to look at (MIGHT)."""
        root = self._root
        assert root is not None
        key = f"{root}\0{' '.join(sorted(self._root_names))}"
        verdict = req._named_in.get(key)
        if verdict is None:
            named = req.named_paths()
            under = root.rstrip(os.sep) + os.sep
            ran_inside = named.cwd is not None and inside(named.cwd, root)
            if ran_inside or root in named.real or any(p.startswith(under) for p in named.real):
                verdict = YES
            elif (
                named.too_many
                or any(inside(p, root) for p in named.maybe)
                or not self._root_names.isdisjoint(named.parts)
            ):
                verdict = MIGHT
            else:
                verdict = NO
            req._named_in[key] = verdict
        return verdict

    def part_matches(self, part: Part, reach: int | None = None) -> bool:
        """Whether this rule covers one command: an allow rule's prefix as the words are written
        (longer than `reach` words when given), a deny or ask rule's for certain."""
        if self.action != "allow":
            return self.part_verdict(part) == YES
        words = part.words
        for prefix, assigns, exact in zip(self._prefixes, self._assigns, self._exact, strict=True):
            if len(words) < len(prefix) or (reach is not None and len(prefix) <= reach):
                continue
            if exact and len(words) != len(prefix):
                continue
            if not all(_token_matches(p, w) for p, w in zip(prefix, words, strict=False)):
                continue
            if not _assigns_covered(assigns, part):
                continue
            start = reach if reach is not None else 0  # the command a privileged wrapper runs
            if any(k + start >= len(prefix) for k, _ in unsafe_options(words[start:]) if k):
                continue  # an option that runs a program or writes a file, not named
            return True
        return False

    def part_verdict(self, part: Part) -> int:
        """A deny or ask rule against one command: YES, NO, or MIGHT when words only known when it
        runs (`git $SUB`, `xargs git`) could make it match. Both are read in one spelling
        (bridge.options): `deny rm -rf` stops `rm -R --force` and `/bin/rm -fr`."""
        best = NO
        spelled = spell(part.words, part.unknown)
        for prefix, assigns, rule_spelled in zip(
            self._prefixes, self._assigns, self._spelled, strict=True
        ):
            first = rule_spelled.words[0]
            if not (
                _token_matches(first, spelled.words[0])
                or _token_matches(prefix[0], part.words[0])
                or _token_matches(prefix[0], posixpath.basename(part.words[0]))
            ):
                continue
            if not _assigns_named(assigns, part):
                continue
            verdict = min(
                _match_rest(rule_spelled, spelled, part.open_args),
                _match_options(rule_spelled, spelled, part.open_args),
            )
            if verdict == YES:
                return YES
            best = max(best, verdict)
        return best

    def named_in_code(self, parsed: ParsedCommand) -> bool:
        """Whether a program this rule names is named in code a shell or an interpreter runs that
        is not parsed (`python -c "os.system('rm -rf /')"`, `ssh host rm -rf /`)."""
        if not parsed.code:
            return False
        tokens = {t for text in parsed.code for t in _CODE_TOKEN.findall(text)}
        names = {program_name(t)[0] for t in tokens} | tokens
        for prefix, spelled in zip(self._prefixes, self._spelled, strict=True):
            for first in {prefix[0], spelled.words[0], posixpath.basename(prefix[0])}:
                if any(_token_matches(first, name) for name in names):
                    return True
        return False

    def command_verdict(self, parsed: ParsedCommand) -> int:
        """A deny or ask rule against a whole command: YES if any part matches; MIGHT if what cannot
        be known could match."""
        best = MIGHT if parsed.opaque or self.named_in_code(parsed) else NO
        for part in parsed.parts:
            verdict = self.part_verdict(part)
            if verdict == YES:
                return YES
            best = max(best, verdict)
        return best

    def verdict(self, req: Request) -> int:
        """A deny or ask rule against a request: YES, NO, or MIGHT (what cannot be known could
        match it)."""
        facets = self.facets(req)
        if facets == NO or not self._prefixes:
            return facets
        if req.command is None:
            return facets if _example_without_command(req) else NO
        parsed = req.parsed
        assert parsed is not None
        return min(facets, self.command_verdict(parsed))

    def matches(self, req: Request) -> bool:
        """Whether this rule, alone, applies to the request: an allow rule must cover every part of
        a command, a deny or ask rule any part."""
        if not self.facets_match(req):
            return False
        if not self._prefixes or req.command is None:
            return not self._prefixes or (req.command is None and _example_without_command(req))
        parsed = req.parsed
        assert parsed is not None
        if self.action == "allow":
            if parsed.opaque or not parsed.parts:
                return False

            def find(part: Part, reach: int | None) -> tuple[int, Rule] | None:
                return (0, self) if self.part_matches(part, reach) else None

            _, first, missing = allow_walk(parsed.parts, find)
            return first is not None and not missing
        return self.verdict(req) == YES

    # settings -------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        """A rule from its settings table; RuleError (naming the field) when it is not usable."""
        for key in data:
            # An unknown key would silently widen the rule (a misspelt `title` makes an allow rule
            # match everything), so it is an error, not a warning.
            if key not in RULE_KEYS:
                raise RuleError(f"unknown rule field (a rule has {', '.join(RULE_KEYS)})", key)
        if "action" not in data:
            raise RuleError('a rule needs an action: "allow", "ask" or "deny"')
        action = data["action"]
        if action not in ACTIONS:
            raise RuleError(f'expected "allow", "ask" or "deny", not {action!r}', "action")
        for key in ("kind", "title", "title_regex", "agent", "path", "url", "reason"):
            if key in data:
                if not isinstance(data[key], str):
                    raise RuleError(f"expected a string, not {_describe(data[key])}", key)
                if not data[key]:
                    raise RuleError(
                        "must not be empty (leave the field out to match anything)", key
                    )
        command = data.get("command")
        if command is not None:
            if isinstance(command, str):
                command = [command]
            if (
                not isinstance(command, list)
                or not command
                or not all(isinstance(c, str) and c.strip() for c in command)
            ):
                raise RuleError("expected a command prefix or a list of them", "command")
        examples: dict[str, list[Any]] = {}
        for key in ("match", "not_match"):
            value = data.get(key, [])
            if not isinstance(value, list):
                raise RuleError("expected a list of example requests", key)
            for example in value:
                if isinstance(example, dict):
                    for k, v in example.items():
                        if k not in EXAMPLE_KEYS:
                            raise RuleError(
                                f"unknown example field {k!r} (an example has "
                                f"{', '.join(EXAMPLE_KEYS)})",
                                key,
                            )
                        if not isinstance(v, str):
                            raise RuleError(f"example field {k!r} must be a string", key)
                elif not isinstance(example, str):
                    raise RuleError("an example is a string or a table", key)
            examples[key] = [dict(e) if isinstance(e, dict) else e for e in value]
        return cls(
            action=action,
            kind=data.get("kind"),
            title=data.get("title"),
            agent=data.get("agent"),
            path=data.get("path"),
            title_regex=data.get("title_regex"),
            command=tuple(command) if command else None,
            url=data.get("url"),
            reason=data.get("reason"),
            match=examples["match"],
            not_match=examples["not_match"],
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action}
        for key in ("agent", "kind", "title", "title_regex"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.command:
            out["command"] = self.command[0] if len(self.command) == 1 else list(self.command)
        for key in ("path", "url", "reason"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.match:
            out["match"] = list(self.match)
        if self.not_match:
            out["not_match"] = list(self.not_match)
        return out

    # examples -------------------------------------------------------------------------------------

    def example_request(self, example: Any) -> Request:
        if isinstance(example, str):
            if self.command:
                return Request(command=example)
            if self.url:
                return Request(urls=(example,))
            if self.path:
                return Request(paths=(example,))
            if self.title or self.title_regex:
                return Request(title=example)
            if self.agent:
                return Request(agent=example)
            return Request(kind=example)
        return Request(
            agent=example.get("agent"),
            kind=example.get("kind"),
            title=example.get("title"),
            command=example.get("command"),
            paths=(example["path"],) if "path" in example else None,
            urls=(example["url"],) if "url" in example else None,
        )

    def check_examples(self) -> list[str]:
        """What is wrong with this rule's own examples (empty: they all hold)."""
        problems = []
        for example in self.match:
            if not self.matches(self.example_request(example)):
                problems.append(f"does not match its example {_show(example)}")
        for example in self.not_match:
            if self.matches(self.example_request(example)):
                problems.append(f"matches {_show(example)}, listed under not_match")
        return problems


_CODE_TOKEN = re.compile(r"[A-Za-z0-9_.+-]+")


def _example_without_command(req: Request) -> bool:
    # A command rule and a request without a command: a real request (its kind is known) does not
    # match; an example that names no command is not compared on it.
    return req.kind is None and req.title is None


def _token_matches(pattern: str, word: str) -> bool:
    if _GLOB_CHARS & set(pattern):
        return fnmatch.fnmatchcase(word, pattern)
    return pattern == word


def _is_option(word: str) -> bool:
    return len(word) > 1 and word.startswith("-") and word != "--"


def _match_rest(rule: Spelling, spelled: Spelling, open_args: bool) -> int:
    """A deny or ask rule's words that are not options against a command whose first word it
    matches (both read by bridge.options): the rule's words in order, with options skipped between
    them — an option (`-C`, `--no-pager`), the word right after an option (its possible argument:
    `-C dir`), and `--`; after `--` nothing is an option. Any other word in between ends the
    match: `git -C dir push` is a `git push`, `git log --grep push` is not. A word only known when
    it runs may be anything, even several words or none: MIGHT (skipped in an option's argument
    place, it does not make a YES uncertain). Words the command runs out of: MIGHT when arguments
    are added when it runs (`xargs git`), else NO."""
    prefix = tuple(
        w
        for i, w in enumerate(rule.words)
        if i == 0 or not ((i < rule.ended and _is_option(w)) or i in rule.values)
    )
    words = spelled.words
    unknown = spelled.unknown
    size = len(prefix)
    if size == 1:
        return YES
    if not unknown and not any(w[:1] == "-" for w in words[1:]):
        # nothing can be skipped: the words at their places (the common case, and the fast one)
        if len(words) < size:
            return MIGHT if open_args else NO
        return YES if all(map(_token_matches, prefix[1:], words[1:size])) else NO
    best = NO
    # states: (next prefix word, the previous word is an option, after `--`) → YES or MIGHT
    states: dict[tuple[int, bool, bool], int] = {(1, False, False): YES}
    for i in range(1, len(words)):
        word = words[i]
        nxt: dict[tuple[int, bool, bool], int] = {}
        for (j, after_option, ended), sure in states.items():
            want = prefix[j]
            if i in unknown:
                best = max(best, MIGHT)  # it may be the rest of the prefix
                if after_option and not ended:
                    _add(nxt, (j, False, ended), sure)  # an option's argument, whatever it is
                _add(nxt, (j, True, ended), MIGHT)  # an option, or nothing
                continue
            option = not ended and _is_option(word)
            ends = ended or word == "--"
            if _token_matches(want, word) and not option:
                if j + 1 == size:
                    best = max(best, sure)
                    if best == YES:
                        return YES
                else:
                    _add(nxt, (j + 1, option, ends), sure)
            if option or ends != ended or after_option:
                _add(nxt, (j, option, ends), sure)  # skipped
        states = nxt
        if not states:
            break
    if states and (open_args or unknown):
        best = max(best, MIGHT)
    return best


def _match_options(rule: Spelling, spelled: Spelling, open_args: bool) -> int:
    """A deny or ask rule's options against a command's, in any order and spelling: each one the
    rule names is given (with the rule's value, when it names one). MIGHT when a word only known
    when it runs, or arguments added when it runs, could be the option."""
    required = rule.required()
    if not required:
        return YES
    for option, wanted in required.items():
        given = spelled.options.get(option)
        if given is None:
            return MIGHT if (spelled.unknown or open_args) else NO
        for value in wanted:
            if value is None:
                continue
            if not any(v is not None and _token_matches(value, v) for v in given):
                if any(v is None for v in given) and spelled.unknown:
                    return MIGHT
                return NO
    return YES


def _add(
    states: dict[tuple[int, bool, bool], int], state: tuple[int, bool, bool], sure: int
) -> None:
    if states.get(state, NO) < sure:
        states[state] = sure


Find = Callable[[Part, "int | None"], "tuple[int, Rule] | None"]


def allow_walk(
    parts: Iterable[Part], find: Find, writable: Callable[[str], str | None] | None = None
) -> tuple[list[PartVerdict], tuple[int, Rule] | None, bool]:
    """Allow rules against every part: (each part's verdict, the first rule used, whether some
    part is not allowed). A harmless wrapper needs nothing (the command it runs decides); a
    privileged one needs an allow rule of its own as well; a rule whose prefix also names the
    command a wrapper runs (`allow sudo apt update`) covers that command too. A part that writes
    to a file (by redirection, `tee`) is a path request too: allowed only when `writable` names
    an allow path rule for every file it writes. A part implied by another (`find -delete` is
    `rm -r -f`) is for deny rules only."""
    parts = list(parts)
    verdicts: list[PartVerdict] = []
    first: tuple[int, Rule] | None = None
    missing = False
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.role == "implied":
            verdicts.append(
                PartVerdict(part.text, None, "what the command before it does", "implied")
            )
            i += 1
            continue
        if part.writes and (writable is None or not all(writable(w) for w in part.writes)):
            missing = True
            verdicts.append(PartVerdict(part.text, None, "writes to a file by redirection"))
            i += 1
            continue
        if part.role != "command" and part.reach is not None:
            cand = find(part, part.reach)
            if cand is not None:
                covered = parts[i : i + 1 + part.chain]
                label = cand[1].label(cand[0])
                verdicts.extend(PartVerdict(p.text, "allow", label, p.role) for p in covered)
                first = first if first is not None and first[0] <= cand[0] else cand
                i += len(covered)
                continue
        if part.role == "wrapper":
            verdicts.append(
                PartVerdict(part.text, None, "a wrapper: the command it runs decides", "wrapper")
            )
            i += 1
            continue
        cand = find(part, None)
        if cand is None:
            missing = True
            why = (
                "a privileged wrapper: it needs an allow rule"
                if part.role == "privileged"
                else "no rule"
            )
            verdicts.append(PartVerdict(part.text, None, why, part.role))
        else:
            verdicts.append(PartVerdict(part.text, "allow", cand[1].label(cand[0]), part.role))
            first = first if first is not None and first[0] <= cand[0] else cand
        i += 1
    return verdicts, first, missing


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _show(example: Any) -> str:
    if isinstance(example, str):
        return repr(example)
    return "{" + ", ".join(f"{k} = {v!r}" for k, v in example.items()) + "}"


# --- deciding -------------------------------------------------------------------------------------


@dataclass
class PartVerdict:
    part: str
    action: Action | None
    rule: str | None
    role: str = "command"  # a wrapper part: "wrapper" or "privileged" (bridge.shell.Part.role)


@dataclass
class Decision:
    """What the rules say: `action` None means no rule has a say (a person is asked)."""

    action: Action | None
    rule: Rule | None = None
    label: str | None = None  # the deciding rule's label, with its number and line
    why: str = ""
    parts: list[PartVerdict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action or "ask",
            "decided_by": self.label,
            "why": self.why,
            "reason": self.rule.reason if self.rule is not None else None,
            "parts": [p.__dict__ for p in self.parts],
        }


class RuleSet:
    """Rules indexed for deciding: by action, by tool kind and, for command rules, by the first
    word of their prefixes — so a request looks at the few rules that could apply to it."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules = list(rules)
        self._by_action: dict[str, _Bucket] = {a: _Bucket() for a in ACTIONS}
        for index, rule in enumerate(self.rules, 1):
            self._by_action[rule.action].add(index, rule)

    def __len__(self) -> int:
        return len(self.rules)

    def decide(self, req: Request) -> Decision:
        too_long = req.too_long()
        if too_long is not None:  # nothing is parsed or matched: a person decides, bypass or not
            return Decision("ask", None, None, f"ask: {too_long}")
        parsed = req.parsed
        for action in ("deny", "ask"):
            bucket = self._by_action[action]
            hit = bucket.first_whole(req)
            if parsed is not None:  # a command rule earlier in the list comes first
                for part in parsed.parts:
                    cand = bucket.first_part(req, part)
                    if cand is not None and (hit is None or cand[0] < hit[0]):
                        hit = cand
            if hit is not None:
                index, rule = hit
                return Decision(action, rule, rule.label(index), f"{action} by {rule.label(index)}")
        # What cannot be judged goes to a person whoever asks, bypass included: an execute call
        # without exactly one command, a command with a control character in it.
        if req.malformed:
            return Decision("ask", why=f"ask: {req.malformed}")
        if parsed is not None and parsed.suspect:
            return Decision("ask", why="ask: " + "; ".join(parsed.suspect))
        unresolved = req.unresolved()
        if parsed is not None or unresolved:
            # What cannot be known goes to a person when a deny or ask rule could match it — even
            # for an agent on bypass: otherwise `$CMD push` would get past `deny git push`.
            for action in ("deny", "ask"):
                might = self._by_action[action].first_might(req, parsed)
                if might is not None:
                    index, rule = might
                    label = rule.label(index)
                    if unresolved and rule.facets(req) == MIGHT:
                        unknown = "; ".join(unresolved)
                    elif parsed is None:
                        unknown = "a path cannot be resolved"
                    elif rule.facets(req) == MIGHT:
                        unknown = f"a word of the command might name a path inside {rule.path}"
                    else:
                        unknown = "; ".join(parsed.opaque) or "; ".join(
                            f"`{p.text}` {'gets more arguments' if p.open_args else 'has words'} "
                            "only known when it runs"
                            for p in parsed.parts
                            if (p.open_args or p.unknown) and rule.part_verdict(p) == MIGHT
                        )
                    return Decision("ask", None, label, f"ask: {label} might match ({unknown})")
        allow = self._by_action["allow"]
        hit = allow.first_whole(req)
        if hit is not None:
            index, rule = hit
            return Decision("allow", rule, rule.label(index), f"allowed by {rule.label(index)}")
        if parsed is None:
            doubts = req.path_doubts() + req.url_doubts()
            return Decision(None, why="ask: " + "; ".join(doubts) if doubts else "no rule matches")

        def find(part: Part, reach: int | None) -> tuple[int, Rule] | None:
            return allow.first_part(req, part, reach)

        verdicts, first, missing = allow_walk(parsed.parts, find, self._writable(req))
        if parsed.opaque:
            return Decision(None, why="ask: " + "; ".join(parsed.opaque), parts=verdicts)
        if missing or first is None:
            return Decision(
                None,
                why="not every command is allowed" if first else "no rule matches",
                parts=verdicts,
            )
        index, rule = first
        labels = sorted({v.rule for v in verdicts if v.rule and v.action == "allow"})
        return Decision(
            "allow",
            rule,
            rule.label(index),
            "every command allowed: " + "; ".join(labels),
            parts=verdicts,
        )

    def _writable(self, req: Request) -> Callable[[str], str | None]:
        """Whether a command may write a file: the label of an allow path rule for an edit of it."""
        allow = self._by_action["allow"]

        def writable(target: str) -> str | None:
            write = Request(agent=req.agent, kind="edit", paths=(target,), cwd=req.cwd)
            for index, rule in sorted(
                allow.whole_any + allow.whole_kind.get("edit", []), key=lambda t: t[0]
            ):
                if rule._root is not None and rule.facets_match(write):
                    return rule.label(index)
            return None

        return writable

    def explain(self, req: Request) -> Decision:
        """Like `decide`, with every part's own verdict filled in (for `rules explain`), in
        agreement with the verdict: a part a deny or ask rule matches (or might match) says so,
        and when the verdict is a deny or an ask no part is shown as allowed unless one part says
        why it is not."""
        decision = self.decide(req)
        parsed = req.parsed
        if parsed is None or decision.parts:
            return decision
        allow = self._by_action["allow"]

        def find(part: Part, reach: int | None) -> tuple[int, Rule] | None:
            return allow.first_part(req, part, reach)

        verdicts, _, _ = allow_walk(parsed.parts, find, self._writable(req))
        for k, part in enumerate(parsed.parts):
            against: tuple[Action, ...] = ("deny", "ask")
            for action in against:
                bucket = self._by_action[action]
                cand = bucket.first_part(req, part)
                if cand is None and decision.action == "ask" and decision.rule is None:
                    cand = next(
                        (c for c in bucket._candidates(part) if c[1].part_verdict(part) == MIGHT),
                        None,
                    )
                if cand is not None:
                    verdicts[k] = PartVerdict(part.text, action, cand[1].label(cand[0]), part.role)
                    break
        final = decision.action
        if final in ("deny", "ask") and not any(v.action == final for v in verdicts):
            for v in verdicts:  # decided by the whole request, or what cannot be known
                if v.action == "allow":
                    v.action = final
                    v.rule = decision.label or decision.why
        decision.parts = verdicts
        return decision

    def check(self) -> list[tuple[int, Rule, str]]:
        """Every failing example: (rule number, rule, problem)."""
        return [
            (index, rule, problem)
            for index, rule in enumerate(self.rules, 1)
            for problem in rule.check_examples()
        ]


class _Bucket:
    """The rules of one action. Whole-request rules (no command) by kind; command rules by the
    first word of their prefixes (globbed first words go to `wild`)."""

    def __init__(self) -> None:
        self.whole_any: list[tuple[int, Rule]] = []
        self.whole_kind: dict[str, list[tuple[int, Rule]]] = {}
        self.cmd_first: dict[str, list[tuple[int, Rule]]] = {}
        self.cmd_wild: list[tuple[int, Rule]] = []
        self.cmd_all: list[tuple[int, Rule]] = []
        self.rooted_any: list[tuple[int, Rule]] = []  # path rules (no kind): they look at commands
        self.rooted_kind: dict[str, list[tuple[int, Rule]]] = {}
        self._merged: dict[str, list[tuple[int, Rule]]] = {}

    def add(self, index: int, rule: Rule) -> None:
        if rule._root is not None:
            if rule.kind:
                self.rooted_kind.setdefault(rule.kind, []).append((index, rule))
            else:
                self.rooted_any.append((index, rule))
        if not rule._prefixes:
            if rule.kind:
                self.whole_kind.setdefault(rule.kind, []).append((index, rule))
            else:
                self.whole_any.append((index, rule))
            self._merged.clear()
            return
        self.cmd_all.append((index, rule))
        # under the program's other names too: `deny podman rm` also looks at `docker rm`
        firsts = {p[0] for p in rule._prefixes} | {s.words[0] for s in rule._spelled}
        if any(_GLOB_CHARS & set(f) for f in firsts):
            self.cmd_wild.append((index, rule))
            return
        for first in firsts:
            self.cmd_first.setdefault(first, []).append((index, rule))

    def first_whole(self, req: Request) -> tuple[int, Rule] | None:
        kind = req.kind or ""
        merged = self._merged.get(kind)
        if merged is None:
            merged = sorted(self.whole_any + self.whole_kind.get(kind, []), key=lambda t: t[0])
            self._merged[kind] = merged
        for index, rule in merged:
            if rule.facets_match(req):
                return index, rule
        return None

    def _candidates(self, part: Part) -> list[tuple[int, Rule]]:
        first = part.words[0]
        cands = self.cmd_first.get(first, [])
        base = posixpath.basename(first)
        if base != first:
            cands = cands + [c for c in self.cmd_first.get(base, []) if c[1].action != "allow"]
        program = program_name(base)[0]  # `podman` for `deny docker`, `mkfs.ext4` for `mkfs`
        if program != base:
            cands = cands + [c for c in self.cmd_first.get(program, []) if c[1].action != "allow"]
        if self.cmd_wild:
            cands = cands + self.cmd_wild
        return cands

    def first_part(
        self, req: Request, part: Part, reach: int | None = None
    ) -> tuple[int, Rule] | None:
        best: tuple[int, Rule] | None = None
        for index, rule in self._candidates(part):
            if best is not None and index >= best[0]:
                continue
            if rule.part_matches(part, reach) and rule.facets_match(req):
                best = (index, rule)
        return best

    def first_might(self, req: Request, parsed: ParsedCommand | None) -> tuple[int, Rule] | None:
        """The first deny or ask rule that might match what cannot be known: a command rule against
        a command that cannot be known, a path rule against words that might name a path or a
        path that cannot be resolved."""
        by_index: dict[int, tuple[int, Rule]] = {}
        if parsed is None:
            pass
        elif parsed.opaque or parsed.code:
            by_index.update((c[0], c) for c in self.cmd_all)
        else:
            for part in parsed.parts:
                if part.open_args or part.unknown:
                    by_index.update((c[0], c) for c in self._candidates(part))
        if self.rooted_any or self.rooted_kind:
            by_index.update((c[0], c) for c in self.rooted_any)
            by_index.update((c[0], c) for c in self.rooted_kind.get(req.kind or "", ()))
        for index in sorted(by_index):
            rule = by_index[index][1]
            if rule.verdict(req) == MIGHT:
                return index, rule
        return None


# --- "always for this pattern" ---------------------------------------------------------------------

# Programs that only read, by themselves or with these subcommands: `p` proposes the program (and
# subcommand) with any arguments. Everything else is proposed as the exact command.
READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "pwd", "file", "stat",
        "du", "df", "which", "whoami", "id", "date", "tree", "diff", "cmp", "basename",
        "dirname", "realpath", "readlink", "uname", "echo", "true", "false",
    }
)  # fmt: skip
READ_ONLY_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset(
        {"status", "log", "diff", "show", "blame", "ls-files", "rev-parse", "describe", "shortlog"}
    ),
    "kubectl": frozenset({"get", "describe", "logs", "version"}),
    "docker": frozenset({"ps", "images", "logs", "inspect", "version"}),
    "cargo": frozenset({"tree", "metadata", "version"}),
    "npm": frozenset({"ls", "view", "outdated"}),
}
# Options with which a read-only program runs a program or writes a file: never proposed broadly.
_RISKY_OPTIONS = (
    "-c", "--config", "--config-env", "--output", "-o", "--ext-diff", "--exec", "-exec",
    "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls", "--pre", "-C", "--upload-pack",
    "--receive-pack", "--textconv", "--open-files-in-pager", "-O",
)  # fmt: skip
# Programs that destroy, change or run what they are given: only ever proposed exactly, and a
# rule that allows one with any arguments is called out as such.
DESTRUCTIVE_PROGRAMS = frozenset(
    {
        "rm", "rmdir", "dd", "mkfs", "shred", "wipefs", "fdisk", "sfdisk", "parted", "truncate",
        "chmod", "chown", "chgrp", "kill", "killall", "pkill", "reboot", "shutdown", "halt",
        "poweroff", "mv", "cp", "ln", "find", "xargs", "git", "sudo", "doas", "su", "curl",
        "wget", "docker", "kubectl", "terraform", "helm", "npm", "pip", "apt", "apt-get",
        "yum", "dnf", "brew", "systemctl", "crontab", "iptables", "sh", "bash", "zsh", "python",
        "python3", "node", "perl", "ruby", "eval", "exec", "env",
    }
)  # fmt: skip


def _is_destructive(program: str) -> bool:
    name = posixpath.basename(program)
    return name in DESTRUCTIVE_PROGRAMS or name.startswith("mkfs")


def _read_only(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """The program (and subcommand) a read-only command is proposed by, or None when it is not
    read-only (or is written with an option that runs a program or writes a file)."""
    if any(w.startswith(_RISKY_OPTIONS) for w in words[1:]):
        return None
    program = words[0]
    if program in READ_ONLY_PROGRAMS:
        return (program,)
    subcommands = READ_ONLY_SUBCOMMANDS.get(program)
    if subcommands is not None and len(words) > 1 and words[1] in subcommands:
        return words[:2]
    return None


def exact_command(words: tuple[str, ...] | list[str]) -> str:
    """The command prefix that allows exactly these words (`rm -rf build $`)."""
    return shlex.join(words) + " " + EXACT_MARK


def command_prefix(part: Part) -> str:
    """What `p` proposes for one command: `git status -s` → `git status`, `ls -la` → `ls` (a
    read-only program and its subcommand, with any arguments); anything else exactly as written
    (`rm -rf build` → `rm -rf build $`, `run the tests` → `run the tests $`)."""
    broad = _read_only(part.words)
    return shlex.join(broad) if broad is not None else exact_command(part.words)


def _proposed_prefixes(parts: tuple[Part, ...]) -> Iterable[str]:
    """A prefix per command; a harmless wrapper needs none, a privileged one is named exactly,
    with the command it runs (`sudo apt update $`)."""
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.role in ("wrapper", "implied"):
            i += 1
        elif part.role == "privileged":
            yield exact_command(part.words)
            i += 1 + (part.chain if part.reach is not None else 0)
        else:  # with the assignments it is given, which an allow rule must name
            named = [shlex.quote(a) for a in part.assigns if not inert_assignment(a)]
            yield " ".join([*named, command_prefix(part)])
            i += 1


def propose_rule(req: Request) -> Rule | None:
    """The rule "always allow this pattern" proposes for a request, with it as its first example:
    as narrow as the request allows (see `command_prefix`; `breadth` says what it covers beyond
    the request). None when nothing narrow can be said: a command that writes files, or holds
    what is only known when it runs."""
    example = req.to_example()
    parsed = req.parsed
    if parsed is not None:
        if (
            parsed.opaque
            or parsed.suspect
            or not parsed.parts
            or any(
                p.writes or p.unknown or p.open_args or is_assignment(p.words[0])
                for p in parsed.parts
            )
        ):
            return None  # nothing a command prefix could allow
        prefixes = tuple(dict.fromkeys(_proposed_prefixes(parsed.parts)))
        return Rule("allow", agent=req.agent or None, command=prefixes, match=[example])
    if req.urls:
        split = split_url(req.urls[0])
        if split is not None:
            scheme, host, path = split
            directory = path if path.endswith("/") else posixpath.dirname(path).rstrip("/") + "/"
            return Rule(
                "allow",
                agent=req.agent or None,
                kind=req.kind or None,
                url=f"{scheme}://{host}{directory}",
                match=[example],
            )
    if req.paths and (req.cwd or all(os.path.isabs(os.path.expanduser(p)) for p in req.paths)):
        real = req.real_paths()
        dirs = {p if os.path.isdir(p) else os.path.dirname(p) for p in real}
        root = os.path.commonpath(sorted(dirs)) if dirs else None
        if root and root != os.sep:
            return Rule(
                "allow", agent=req.agent or None, kind=req.kind or None, path=root, match=[example]
            )
    if req.title:
        return Rule(
            "allow",
            agent=req.agent or None,
            kind=req.kind or None,
            title=req.title,
            match=[example],
        )
    return None


def breadth(rule: Rule) -> list[str]:
    """What an allow rule covers beyond one request, one sentence each, for the screen that shows
    a proposed (or edited) rule: a command prefix with any arguments (loudest when it names a
    destructive program), every URL under a path, everything inside a directory, any call by its
    title (which the agent writes). Empty when it allows exact commands only."""
    if rule.action != "allow":
        return []
    out = []
    for prefix, exact in zip(rule._prefixes, rule._exact, strict=True):
        if exact:
            continue
        shown = shlex.join(prefix)
        if _is_destructive(prefix[0]) and _read_only(prefix) is None:
            out.append(
                f"⚠ Broad: `{shown}` with any arguments lets "
                f"{posixpath.basename(prefix[0])} do whatever they say. Allow the exact command "
                "instead (end it with ` $`)."
            )
        else:
            out.append(f"Broad: `{shown}` with any arguments, not only this request.")
    if rule.url:
        out.append(f"Broad: every URL under {rule.url}.")
    if rule.path:
        out.append(f"Broad: every {rule.kind or 'request'} inside {rule.path}.")
    if rule.title and not rule.command:
        out.append(
            f"Broad: any {rule.kind or 'call'} titled “{rule.title}”, whatever it runs (the "
            "agent writes the title)."
        )
    return out


def scope_text(rule: Rule, agent_name: str | None = None) -> str:
    """One line for the card: what "always" would allow (the agent by `agent_name` when given)."""
    bits = []
    if rule.command:
        pairs = list(zip(rule._prefixes, rule._exact, strict=True))
        exact = [shlex.join(p) for p, e in pairs if e]
        broad = [shlex.join(p) for p, e in pairs if not e]
        if exact:
            bits.append("exactly " + ", ".join(f"`{c}`" for c in exact))
        if broad:
            bits.append("commands starting " + ", ".join(f"`{c}`" for c in broad))
    if rule.url:
        bits.append(f"URLs under {rule.url}")
    if rule.path:
        bits.append(f"{rule.kind or 'anything'} inside {rule.path}")
    if rule.title and not rule.path and not rule.url:
        bits.append(f"{rule.kind or 'calls'} titled “{rule.title}”")
    who = f" by {agent_name or rule.agent}" if rule.agent else ""
    return "always allow " + "; ".join(bits) + who
