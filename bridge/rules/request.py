"""What a tool call asks, as the rules look at it: its kind, title, command, paths and URLs."""

from __future__ import annotations

import itertools
import os.path
import posixpath
import re

from bridge.record import Record
from bridge.rules.bounds import MAX_COMMAND, MAX_URL_CANDIDATES
from bridge.rules.table import _describe
from bridge.rules.targets import tool_call_targets, working_folder_in
from bridge.shell import ParsedCommand
from bridge.shell.words import join_words

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from bridge.rules.links import LinkWalks
    from bridge.rules.named import NamedPaths
    from bridge.rules.urls import UrlView
    from bridge.shell import Part


_OWN_COMMAND = ("command", "malformed", "more_commands")  # what `with_command` does not carry over


class Request(Record):
    """What a rule looks at. In an example, a field left None is "not compared". `odd_paths` and
    `odd_urls`: keys outside PATH_KEYS / URL_KEYS that hold a path / a URL; `text_urls`: text
    values (a prompt) that are URLs, and `loose_paths`: other keys' one-line values (`keys/id`),
    both for deny rules; `unchecked`: why it is too large to check (then it is asked);
    `malformed`: why an execute call's command cannot be judged (→ ask); `more_commands`: the
    call's other commands (an MCP tool's `arguments.command` beside its own), each judged as
    well: the call is allowed only when every one of them is."""

    _shown = (
        "agent",
        "kind",
        "title",
        "command",
        "paths",
        "urls",
        "cwd",
        "odd_paths",
        "odd_urls",
        "text_urls",
        "loose_paths",
        "unchecked",
        "malformed",
        "more_commands",
    )
    # (what it has worked out so far is compared too, as it was)
    _fields = (
        *_shown,
        "_parsed",
        "_real",
        "_readings",
        "_urls",
        "_loose",
        "_cmd_urls",
        "_named",
        "_named_in",
        "_doubts",
        "_walks",
        "_code_names",
        "_assigned",
    )
    __slots__ = _fields

    def __init__(
        self,
        agent: str | None = None,
        kind: str | None = None,
        title: str | None = None,
        command: str | tuple[str, ...] | None = None,
        paths: tuple[str, ...] | None = None,
        urls: tuple[str, ...] | None = None,
        cwd: str | None = None,
        odd_paths: tuple[str, ...] = (),
        odd_urls: tuple[str, ...] = (),
        text_urls: tuple[str, ...] = (),
        loose_paths: tuple[str, ...] = (),
        unchecked: str | None = None,
        malformed: str | None = None,
        more_commands: tuple[str | tuple[str, ...], ...] = (),
    ) -> None:
        self.agent = agent
        self.kind = kind
        self.title = title
        self.command = command
        self.paths = paths
        self.urls = urls
        self.cwd = cwd
        self.odd_paths = odd_paths
        self.odd_urls = odd_urls
        self.text_urls = text_urls
        self.loose_paths = loose_paths
        self.unchecked = unchecked
        self.malformed = malformed
        self.more_commands = more_commands
        self._parsed: ParsedCommand | None = None
        self._real: tuple[str, ...] | None = None
        self._readings: tuple[tuple[tuple[str, ...], str | None], ...] | None = None
        self._urls: tuple[UrlView, ...] | None = None
        self._loose: tuple[str, ...] | None = None
        self._cmd_urls: tuple[UrlView, ...] | None = None
        self._named: NamedPaths | None = None
        self._named_in: dict[str, int] = {}  # root → verdict
        self._doubts: dict[str, list[str]] = {}
        self._walks: LinkWalks = {}  # the folders the command goes down: walked once
        self._code_names: set[str] | None = None  # the programs its unparsed code names
        self._assigned: dict[str, str | None] | None = None  # the command's plain variables

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
        more: list[str | tuple[str, ...]] = []
        if kind == "execute":
            command, malformed = command_of(raw)
        elif isinstance(raw, dict):
            for key in ("command", "cmd"):
                value = raw.get(key)
                if isinstance(value, str) and value.strip():
                    more.append(value)
                elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                    more.append(tuple(value))
        more.extend(c for c in targets.commands if c != command and c not in more)
        if command is None and more:
            command = more.pop(0)
        if isinstance(raw, dict):
            cwd = _working_folder(raw, targets.folder, cwd)
            if kind in WALKING:  # a glob walks from the folder its words name (`../keys/*`)
                paths.extend(p for p in glob_reaches(raw, paths, cwd, kind) if p not in paths)
        if kind == "fetch":  # what a fetch's prompt names is what it fetches: an allow vouches
            urls.extend(u for u in targets.text_urls if u not in urls)
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
            more_commands=tuple(more),
        )

    def with_command(self, command: str | tuple[str, ...]) -> Request:
        """The same call judged for one of its other commands."""
        fields = {f: getattr(self, f) for f in self._shown if f not in _OWN_COMMAND}
        return Request(**fields, command=command)

    @property
    def parsed(self) -> ParsedCommand | None:
        if self.command is None:
            return None
        if self._parsed is None:
            too_long = self.too_long()
            if too_long is not None:
                self._parsed = ParsedCommand((), (too_long,))
            elif isinstance(self.command, str):
                from bridge.shell.parser import parse_cached  # (not loaded for other calls)

                self._parsed = parse_cached(self.command)
            else:
                from bridge.shell.parser import parse_command

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
            self._readings = ()
            if self.paths:
                from bridge.rules.paths import resolve_checked  # (loaded by a path)

                self._readings = tuple(resolve_checked(p, self.cwd) for p in self.paths)
        return self._readings

    def walks_into(self, root: str) -> bool:
        """Whether this search (or read of a folder, or other tool given a folder) may go down
        into `root`: a folder it names, or else (a search) the folder it runs in, holds `root`
        (a search of a folder reads what is inside, its glob or pattern deciding what only when
        it runs)."""
        from bridge.rules.paths import inside, resolve_checked

        folders = [names[0] for names, _ in self.path_readings()]
        if self.kind != "search":  # a read, a delete, a move, or a tool not known, of a folder
            folders = [f for f in folders if os.path.isdir(f)]
        elif not folders and self.cwd:
            folders = [resolve_checked(self.cwd)[0][0]]
        return any(root != f and inside(root, f) for f in folders)

    def loose_readings(self) -> tuple[str, ...]:
        """The real paths the loose paths (other keys' one-line values) may name: for deny
        rules."""
        if self._loose is None:
            self._loose = ()
            if self.loose_paths:
                from bridge.rules.paths import resolve_checked

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
            from bridge.rules.named import named_paths  # deny path rules against commands

            parsed = self.parsed
            assert parsed is not None
            raw = self.command if isinstance(self.command, str) else None
            self._named = named_paths(parsed, raw, self.cwd)
        return self._named

    def code_names(self, make: Callable[[tuple[str, ...]], set[str]]) -> set[str]:
        """`make(code)` of the command's unparsed code (`bridge.rules.rule._code_names`), made
        once a request: every deny and ask rule asks, and it may look at the disk."""
        if self._code_names is None:
            parsed = self.parsed
            self._code_names = make(parsed.code if parsed is not None else ())
        return self._code_names

    def walks_above(self, root: str, cwd: str | None) -> int:
        """Whether the command goes down a folder above `root` (`bridge.rules.named`)."""
        from bridge.rules.named import walks_above

        parsed = self.parsed
        return walks_above(parsed, cwd, root, self._walks) if parsed is not None else 0

    def assigned_values(self) -> dict[str, str | None]:
        """The variables the command gives plain values (`bridge.rules.changes.assigned`),
        worked out once a request: the guard reads them in names, paths and what it changes."""
        if self._assigned is None:
            from bridge.rules.changes import assigned

            parsed = self.parsed
            raw = self.command if isinstance(self.command, str) else ""
            self._assigned = assigned(parsed, raw) if parsed is not None else {}
        return self._assigned

    def walks_above_each(
        self, roots: tuple[str, ...], cwd: str | None, parts: tuple[Part, ...] | None = None
    ) -> list[int]:
        """`walks_above` for each of `roots` (of `parts` of the command only, when given)."""
        from bridge.rules.named import walks_above_each

        parsed = self.parsed
        if parsed is None:
            return [0] * len(roots)
        return walks_above_each(parsed, cwd, roots, self._walks, parts)

    def url_views(self) -> tuple[UrlView, ...]:
        if self._urls is None:
            from bridge.rules.urls import read_url

            self._urls = tuple(read_url(u, scheme_optional=True) for u in self.urls or ())
        return self._urls

    def command_url_views(self) -> tuple[UrlView, ...]:
        """The URLs a shell command names — in its text (`curl https://…`), and its words that
        read as a host (`curl evil.example/x`, `ssh user@evil.example`, `scp f host:dir`) — and
        the text values that are URLs: for deny and ask rules."""
        if self._cmd_urls is None:
            from bridge.rules.urls import (
                _HOSTISH,
                _URL_END,
                _URL_START,
                UrlView,
                _normal_host,
                command_url_spellings,
                read_url,
            )

            views = [read_url(u) for u in self.text_urls]
            parsed = self.parsed
            if self.command is not None and parsed is not None and self.too_long() is None:
                text = self.command if isinstance(self.command, str) else " ".join(self.command)
                for m in itertools.islice(_URL_START.finditer(text), MAX_URL_CANDIDATES):
                    end = _URL_END.search(text, m.end())
                    views.append(read_url(text[m.start() : end.start() if end else len(text)]))
                words = [w for p in parsed.parts for w in p.words[1:]]
                words.extend(w for w, _ in parsed.words)
                for spelled in itertools.islice(command_url_spellings(words), MAX_URL_CANDIDATES):
                    views.append(read_url(spelled))
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
                self.command if isinstance(self.command, str) else join_words(self.command)
            )
        elif self.urls:
            out["url"] = self.urls[0]
        elif self.paths:
            out["path"] = self.paths[0]
        elif self.title:
            out["title"] = self.title
        return out


# The kinds of call that go down a folder they are given: a search, a read of a folder (Gemini
# CLI's read_many_files), and a tool not known (an MCP server's `search_files`, `directory_tree`,
# Codex's `grep_files`): a deny or ask rule on a path inside it might match.
# A move too: it takes a folder along with all it holds, but its destination, a folder
# that holds the rule's, is no harm; which path is which is not known.
WALKING = frozenset({"search", "read", "other", "move"})
# The kinds of call that take a folder they are given along with all it holds.
CARRYING = frozenset({"delete"})

# Keys whose values are globs a search or read walks (Glob's `pattern`, Grep's `glob`, Gemini
# CLI's `include`), besides the paths themselves (read_many_files' `paths` are globs too).
_GLOB_KEYS = ("pattern", "patterns", "glob", "globs", "include", "includes")
_GLOB_CHARS = frozenset("*?[{")


def glob_reaches(raw: dict[str, Any], paths: list[str], cwd: str | None, kind: str) -> list[str]:
    """The folders a search's or read's globs (with a glob character: Grep's `pattern` is a
    regular expression) walk from — absolute, `~`, a `..` word, or a folder inside that may be a
    symlink (`up/keys/*`) — and of its paths that are globs (`../*/id_rsa`): a deny rule on
    what they reach matches, an allow rule covers them only when they are inside it. A relative
    pattern is read in the call's first path (Glob's `path`), else its working folder. An MCP
    tool's `arguments` (as the hooks hand it over) are looked in too."""
    folder = paths[0] if paths else cwd
    if folder and not folder.startswith(("/", "~")) and cwd:
        folder = cwd.rstrip("/") + "/" + folder
    globs = [p for p in paths if _GLOB_CHARS.intersection(p)]
    out = [glob_base(p) for p in globs]
    named = len(globs)  # the first ones are paths: what they match is searched or read
    tables = [raw, raw["arguments"]] if isinstance(raw.get("arguments"), dict) else [raw]
    for table, key in itertools.product(tables, _GLOB_KEYS):
        value = table.get(key)
        for glob in [value] if isinstance(value, str) else value if isinstance(value, list) else ():
            if not isinstance(glob, str) or "\n" in glob or not _GLOB_CHARS.intersection(glob):
                continue
            glob = glob.strip()
            if not glob.startswith(("/", "~")) and folder:
                glob = f"{folder.rstrip('/')}/{glob}"
            # `\x` is `x` to node-glob, ripgrep's globs and bash (`k\eys/*` lists keys/):
            # a glob with a `\` is judged as both
            for spelled in dict.fromkeys([glob, re.sub(r"\\(.)", r"\1", glob)]):
                globs.append(spelled)
                base = glob_base(spelled)
                if base != ".":  # `../keys`, or `up/keys` through a symlink: resolved
                    out.append(base)
    for k, glob in enumerate(globs[:_MAX_GLOBS]):
        out.extend(_links_walked(glob, cwd, reads=k < named or kind == "read"))
    return out


_MAX_GLOBS = 8  # globs of one call whose folder is looked in for symlinks
_MAX_ENTRIES = 512  # entries of that folder looked at


def _links_walked(glob: str, cwd: str | None, *, reads: bool) -> list[str]:
    """Where what a glob's first wildcard word matches leads, with the literal words after it,
    when that goes through a symlink (`*/keys/*` through `up` → `..`, `*/up/id_rsa` through
    `sub/up`) and the glob goes on past the word, or the call reads what it matches (`reads`:
    a path that is a glob, or a `read`): the glob walks there."""
    import fnmatch

    words = os.path.expanduser(glob).split("/")
    at = next((k for k, w in enumerate(words) if _GLOB_CHARS.intersection(w)), None)
    if at is None or (at == len(words) - 1 and not reads):
        return []
    base = "/".join(words[:at]) or ("/" if glob.startswith("/") else ".")
    if not base.startswith("/"):
        base = os.path.join(cwd or os.getcwd(), base)
    word = words[at]
    then = list(itertools.takewhile(lambda w: not _GLOB_CHARS.intersection(w), words[at + 1 :]))
    out = []
    try:
        with os.scandir(base) as entries:
            for entry in itertools.islice(entries, _MAX_ENTRIES):
                if not ("**" in word or fnmatch.fnmatchcase(entry.name, word)):
                    continue
                path = os.path.join(entry.path, *then)
                real = os.path.realpath(path)
                if real != os.path.normpath(path):  # through a symlink
                    out.append(real)
    except (OSError, ValueError):
        pass
    return out


def glob_base(glob: str) -> str:
    """The folder a glob walks from: its words up to the first with a glob character — and up
    one more for every `..` word after it (`*/../../keys` climbs two); `/` when a brace after it
    may hold an absolute path (`{/etc,x}/*`). Relative ones are made to start with `..` when
    they climb out of the folder they are read in."""
    words = glob.split("/")
    at = next((k for k, w in enumerate(words) if _GLOB_CHARS.intersection(w)), len(words))
    rest = "/".join(words[at:])
    if "{" in rest and any(m in rest for m in ("{/", ",/", "{~", ",~")):
        return "/"
    base = "/".join(words[:at]) or ("/" if glob.startswith("/") else ".")
    climbs = sum(1 for w in words[at:] if ".." in w)
    base = posixpath.normpath(base + "/.." * climbs) if climbs else base
    if not base.startswith(("/", "~")):
        base = posixpath.normpath(base)
    return base


def _working_folder(raw: dict[str, Any], nested: str | None, cwd: str | None) -> str | None:
    """The folder the call's relative paths are read in: the one its input names (`cwd`,
    `workdir`, `dir_path`, …; else the one beside a nested command), relative to the session's,
    else the session's. The tool runs there, whatever the session's folder is."""
    value = working_folder_in(raw) or nested
    if value is None:
        return cwd
    if value.startswith("~"):
        value = os.path.expanduser(value)
    if cwd and not value.startswith("/"):
        return cwd.rstrip("/") + "/" + value
    return value


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
