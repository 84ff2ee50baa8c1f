"""The paths and URLs a tool call names, found in its `locations` and anywhere in its `rawInput`."""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from bridge.record import Frozen
from bridge.rules.bounds import (
    MAX_COMMAND,
    MAX_INPUT_DEPTH,
    MAX_INPUT_NODES,
    MAX_LOOSE_PATHS,
    MAX_URL_CANDIDATES,
)

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any

# a value that starts as a URL does (`https:`, `scheme://`)
_URL_PREFIX = r"\s*(?:(?i:https?|wss?|ftp):|[A-Za-z][A-Za-z0-9+.-]*:[/\\]{2})"


@lru_cache(maxsize=1)
def _url_prefix() -> re.Pattern[str]:
    """(Compiled with the first value looked at: a shell call's command is not one.)"""
    return re.compile(_URL_PREFIX)


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
        "workingdir",
        "dirpath",
        "currentdirectory",
        "root",
    ]
)
URL_KEYS = frozenset(["url", "urls", "uri", "uris", "href", "hrefs", "link", "links"])
# Keys whose values name a host a tool connects to or reads from (an MCP HTTP tool's `host`,
# WebSearch's `allowed_domains`): each is read as `https://HOST/`, for deny and ask URL rules.
HOST_KEYS = frozenset(
    ["host", "hosts", "hostname", "domain", "domains", "alloweddomains", "address", "addr", "ip",
     "endpoint"]
)  # fmt: skip
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
# Other keys a tool's input may put a shell command under (an MCP tool's `script`, `shell`),
# judged as one, and `commands`: a list of them, each judged.
SCRIPT_KEYS = frozenset({"script", "shell", "bash", "shellcommand", "commandline", "cmdline"})
COMMANDS_KEYS = frozenset({"commands", "cmds", "scripts"})
# Keys that name the folder a command runs in (Codex `workdir`, Gemini CLI `dir_path`).
FOLDER_KEYS = ("cwd", "workdir", "workingdir", "workingdirectory", "dirpath", "currentdirectory")


class Targets(Frozen):
    """The paths and URLs a tool call names (see `tool_call_targets`). `text_urls`: one-line text
    values that are URLs, and the URLs a prompt names; `loose_paths`: relative paths under other
    keys (both for deny rules); `commands`: the commands under a `command` or `cmd` key below the
    input's top level (an MCP tool's `arguments.command`), or under a `script`-like key or in a
    `commands` list anywhere, each a string or an argv; `folder`: the folder the first nested
    command's table says it runs in (its `cwd`, `workdir`, …), or None."""

    __slots__ = _fields = (
        "paths",
        "urls",
        "odd_paths",
        "odd_urls",
        "unchecked",
        "text_urls",
        "loose_paths",
        "commands",
        "folder",
    )

    def __init__(
        self,
        paths: tuple[str, ...] = (),
        urls: tuple[str, ...] = (),
        odd_paths: tuple[str, ...] = (),
        odd_urls: tuple[str, ...] = (),
        unchecked: str | None = None,
        text_urls: tuple[str, ...] = (),
        loose_paths: tuple[str, ...] = (),
        commands: tuple[str | tuple[str, ...], ...] = (),
        folder: str | None = None,
    ) -> None:
        self.paths = paths
        self.urls = urls
        self.odd_paths = odd_paths
        self.odd_urls = odd_urls
        self.unchecked = unchecked
        self.text_urls = text_urls
        self.loose_paths = loose_paths
        self.commands = commands
        self.folder = folder


def _file_url_path(value: str) -> str:
    """The path of a `file:` URL (percent-decoded)."""
    from urllib.parse import unquote, urlsplit  # (a `file:` URL only: not on every start-up)

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
    found = _Found()
    for loc in tool_call.get("locations") or ():
        if isinstance(loc, dict) and isinstance(loc.get("path"), str) and loc["path"]:
            path = loc["path"]
            found.paths.append(_file_url_path(path) if path[:5].lower() == "file:" else path)
    raw = tool_call.get("rawInput")
    stack: list[tuple[str, Any, int]] = [("rawInput", raw, 0)] if raw is not None else []
    nodes = 0
    while stack:
        key, value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_INPUT_NODES or depth > MAX_INPUT_DEPTH:
            found.unchecked = "the tool call's input is too large or too deep to check"
            break
        if isinstance(value, dict):
            for k, v in value.items():
                if _is_command(str(k), v, depth):
                    # a command below the top level (`arguments.command`), or under another
                    # key (`script`): the rules read it too, in the folder its table names
                    if isinstance(v, list) and _key(str(k)) in COMMANDS_KEYS:
                        found.commands.extend(v)
                    else:
                        found.commands.append(v if isinstance(v, str) else tuple(v))
                    if depth and found.folder is None:
                        found.folder = working_folder_in(value)
            stack.extend((str(k), v, depth + 1) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((key, v, depth + 1) for v in reversed(value))
        elif isinstance(value, str) and value.strip() and not found.add(key, value, depth):
            break
    return Targets(
        tuple(found.paths),
        tuple(found.urls),
        tuple(dict.fromkeys(found.odd_paths)),
        tuple(dict.fromkeys(found.odd_urls)),
        found.unchecked,
        tuple(found.text_urls),
        tuple(found.loose_paths),
        tuple(dict.fromkeys(found.commands)),
        found.folder,
    )


def _key(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


def working_folder_in(table: dict[str, Any]) -> str | None:
    """The folder a table's command says it runs in: its first working-folder key, else one in
    a table inside it (Node's `exec(command, {cwd})`: `options.cwd`)."""
    for level in (table, *(v for v in table.values() if isinstance(v, dict))):
        for k, v in level.items():
            if isinstance(v, str) and v and "\0" not in v and _key(str(k)) in FOLDER_KEYS:
                return v
    return None


def _is_command(key: str, value: Any, depth: int) -> bool:
    """A string, or a list of strings, under a `command` or `cmd` key below the top level, or
    under a `script`-like or `commands` key anywhere."""
    name = _key(key)
    if not ((depth and name in COMMAND_KEYS) or name in SCRIPT_KEYS or name in COMMANDS_KEYS):
        return False
    if name in COMMANDS_KEYS and isinstance(value, list):
        return bool(value) and all(isinstance(v, str) and v.strip() for v in value)
    if isinstance(value, str):
        return bool(value.strip())
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str) for v in value)
        and bool("".join(value).strip())
    )


class _Found:
    """The targets found so far in one tool call (see `Targets`)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.urls: list[str] = []
        self.odd_paths: list[str] = []
        self.odd_urls: list[str] = []
        self.text_urls: list[str] = []
        self.loose_paths: list[str] = []
        self.commands: list[str | tuple[str, ...]] = []
        self.folder: str | None = None
        self.unchecked: str | None = None

    def add(self, key: str, value: str, depth: int) -> bool:
        """One string value under `key`, by what its key says it is (else by how it looks);
        False when it is too long to check (then nothing more is looked at)."""
        name = _key(key)
        if name in COMMAND_KEYS:
            return True  # a shell command: bridge.shell reads it (and its paths and URLs)
        if len(value) > MAX_COMMAND and _names_target(name, value):
            self.unchecked = f"`{key}` is {len(value):,} characters, too long to check"
            return False
        if value[:5].lower() == "file:":
            self.paths.append(_file_url_path(value))
            if name in URL_KEYS:
                self.urls.append(value)  # `file://host/…` names a host too
            elif name not in PATH_KEYS:
                self.odd_paths.append(key)
        elif name in URL_KEYS:
            self.urls.append(value)
        elif name in PATH_KEYS:
            self.paths.append(value)
            if _url_prefix().match(value):
                self.urls.append(value)
        elif name in TEXT_KEYS:
            self._add_text(name, value)
        elif _url_prefix().match(value[:256]):
            self.urls.append(value if len(value) < 4096 else value[:4096])
            self.odd_urls.append(key)
        elif _looks_like_path(value):
            self.paths.append(value)
            self.odd_paths.append(key)
        elif name in HOST_KEYS and len(value) < 256 and not any(c.isspace() for c in value):
            self.text_urls.append("https://" + value.lstrip("/"))  # `evil.example`, `localhost`
        elif "\n" not in value and len(value) < 4096 and len(self.loose_paths) < MAX_LOOSE_PATHS:
            self.loose_paths.append(value)  # `keys/id_rsa`, `keys`: may be a path (for deny rules)
        return True

    def _add_text(self, name: str, value: str) -> None:
        """A text value: the URL it is (one line), or the URLs a prompt names (for deny rules)."""
        if "\n" not in value and _url_prefix().match(value[:256]):
            self.text_urls.append(value)  # a one-line text that is a URL: for deny rules
        elif name == "prompt" and "://" in value:
            # A fetch tool's prompt names what it fetches: Gemini CLI's web_fetch fetches
            # every word of it that holds `://` (`parsePrompt`), whatever the case.
            words = (w for w in value.split() if "://" in w)
            self.text_urls.extend(itertools.islice(words, MAX_URL_CANDIDATES))


def _names_target(name: str, value: str) -> bool:
    """Whether a value is a path or a URL (by its key, else by how it starts)."""
    return (
        name in PATH_KEYS
        or name in URL_KEYS
        or (
            name not in TEXT_KEYS
            and bool(_url_prefix().match(value[:256]) or _looks_like_path(value[:256]))
        )
    )
