"""bashlex, the port of bash's grammar, and what is done about what it gets wrong: a `${` without
its `}` (it would loop forever) and bash's `time` keyword (not implemented)."""

from __future__ import annotations

TYPE_CHECKING = False  # (`typing` costs a hook's start-up milliseconds: names for the checker)
if TYPE_CHECKING:
    from typing import Any

_guarded = False


def _guard_bashlex() -> None:
    """bashlex loops forever, taking memory without end, on a `${` whose word has no `}` after it
    where it misreads the quoting (`x'${'`): its `_paramexpand` finds no `}` (-1) and starts the
    word over. Such a word is a parse error instead, so the command is unknowable (asked), and an
    agent cannot hang the approval policy with it."""
    global _guarded
    if _guarded:
        return
    from bridge.shell.bashlex_tables import install

    install()  # (its tables read, not built: before bashlex is first imported)
    import bashlex.errors
    import bashlex.subst

    original = bashlex.subst._paramexpand

    def paramexpand(parserobj: Any, string: str, sindex: int) -> Any:
        if string[sindex + 1 : sindex + 2] == "{" and string.find("}", sindex + 2) == -1:
            raise bashlex.errors.ParsingError("bad substitution: no closing '}'", string, sindex)
        return original(parserobj, string, sindex)

    bashlex.subst._paramexpand = paramexpand
    _guarded = True


def _bashlex_parse(script: str) -> tuple[list[Any], str | None]:
    """bashlex's trees, or why it cannot parse the script. bash's `time` keyword is not implemented
    by bashlex: it is blanked out (it only times the pipeline after it) and the script parsed again."""
    _guard_bashlex()  # (first: it sets up how bashlex is imported)
    import bashlex

    try:
        return bashlex.parse(script), None
    except Exception as exc:  # bashlex raises assorted errors on odd input: fail to "ask"
        error = str(exc) or type(exc).__name__
    blanked = _blank_time_keywords(script)
    if blanked is None:
        return [], error
    try:
        return bashlex.parse(blanked), None
    except Exception:
        return [], error


def _blank_time_keywords(script: str) -> str | None:
    """The script with every `time [-p] [--]` keyword (as bash's tokenizer finds it) replaced by
    spaces, so that every other word keeps its position."""
    from bashlex import state, tokenizer

    try:
        tokens = list(tokenizer.tokenizer(script, state.parserstate()))
    except Exception:
        return None
    spans = [
        (t.lexpos, t.endlexpos)
        for t in tokens
        if t.ttype is not None and t.ttype.name in ("TIME", "TIMEOPT", "TIMEIGN")
    ]
    if not spans:
        return None
    chars = list(script)
    for start, end in spans:
        if script[start:end] not in ("time", "-p", "--"):
            return None
        chars[start:end] = " " * (end - start)
    return "".join(chars)
