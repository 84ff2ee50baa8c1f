"""What is too large to check: beyond these bounds a request is asked, or a match is a MIGHT."""

from __future__ import annotations

MAX_COMMAND = 64 * 1024  # a longer command (or path, URL) is asked: "too long to check"
MAX_INPUT_NODES = 10_000  # values in one rawInput looked at; beyond: too large to check
MAX_INPUT_DEPTH = 32
MAX_LOOSE_PATHS = 32  # other keys' one-line values looked at as possible paths (deny rules)
MAX_EXPANSIONS = 256  # brace alternatives, glob matches, directories: beyond it, "might"
MAX_BRACES = 16  # `{` in one word
MAX_LINK_WALK = 4096  # entries a folder walk that follows symlinks looks at; beyond: "might"
MAX_GLOB_LEVELS = 2  # path components with a glob in one pattern (each level lists directories)
MAX_URL_CANDIDATES = 32  # the pieces of one text value that are read as URLs
