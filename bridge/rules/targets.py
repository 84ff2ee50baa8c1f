"""The paths and URLs a tool call names, found in its `locations` and anywhere in its `rawInput`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from bridge.rules.bounds import MAX_COMMAND, MAX_INPUT_DEPTH, MAX_INPUT_NODES, MAX_LOOSE_PATHS
from bridge.rules.urls import _URL_PREFIX

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
