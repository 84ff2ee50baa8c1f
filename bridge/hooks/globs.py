"""Gemini CLI's globs as its glob library (node-glob) reads them, for the paths a call names.

`read_many_files` reads every file its `include` entries match: paths or globs, read in the
working folder, with `\\` taken for `/`. It and `glob` (unless `case_sensitive` is true) match
with `nocase`: every word of a glob matches whatever its case, its literal words and the folders
of an absolute one included (`KEYS/ID_RSA` reads keys/id_rsa). So each literal word is spelled
as the folder it is in spells it too, and the rules judge every spelling.
"""

from __future__ import annotations

import itertools
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MAGIC = frozenset("*?[{(")  # a word with one of these is a pattern: its case is the glob's
MAX_GLOBS = 8  # globs of one call spelled on disk
MAX_SPELLINGS = 8  # spellings of one glob
MAX_ENTRIES = 4096  # entries of one folder looked at


def gemini_paths(tool: str, raw: dict[str, Any], cwd: str | None) -> list[str]:
    """The paths a Gemini CLI `read_many_files` or `glob` call reads or lists besides the ones
    under its path keys: `include`'s entries, and the spellings on disk of their literal words."""
    folder = cwd
    if tool == "read_many_files":
        include = raw.get("include")
        entries = [include] if isinstance(include, str) else include
        named = [e.replace("\\", "/") for e in entries or () if isinstance(e, str) and e.strip()]
        globs = named
    elif tool == "glob" and raw.get("case_sensitive") is not True:
        named = []
        pattern = raw.get("pattern")
        globs = [pattern] if isinstance(pattern, str) and pattern.strip() else []
        globs += [re.sub(r"\\(.)", r"\1", g) for g in globs if "\\" in g]  # `k\eys`: keys
        where = raw.get("dir_path") or raw.get("path")
        if isinstance(where, str) and where:
            folder = os.path.join(cwd, where) if cwd else where
    else:
        return []
    out = list(named)
    for glob in globs[:MAX_GLOBS]:
        if glob.startswith("/") or folder:
            out.extend(nocase_spellings(os.path.join(folder or "/", glob)))
    return out


def nocase_spellings(path: str) -> list[str]:
    """The spellings on disk of an absolute glob's literal words, up to its first pattern word,
    that differ from its own in case only (`/p/KEYS/*` → `/p/keys/*`, `/p/Keys/*` when both
    are there): what a glob that ignores case matches besides what it says."""
    words = path.split("/")
    heads = [""]
    rest: list[str] = []
    for k, word in enumerate(words[1:], 1):
        if _MAGIC.intersection(word):
            rest = words[k:]
            break
        if word.lower() == word.upper():  # no letter to read in another case ("", "..", "2")
            heads = [f"{head}/{word}" for head in heads]
            continue
        spelled: list[str] = []
        for head in heads:
            try:
                with os.scandir(head or "/") as entries:
                    names = [
                        e.name
                        for e in itertools.islice(entries, MAX_ENTRIES)
                        if e.name.lower() == word.lower()
                    ]
            except OSError:
                names = []
            spelled.extend(f"{head}/{name}" for name in names or [word])
        heads = spelled[:MAX_SPELLINGS]
    spellings = ("/".join([head, *rest]) if rest else head for head in heads)
    return [s for s in dict.fromkeys(spellings) if s != path]
