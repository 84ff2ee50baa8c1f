"""How an agent's reply is drawn in the chat: its markdown in the theme's colours, and its tool
calls as one line each (the bridge's fenced output folded away)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


def render_agent_text(text: str, colours: Mapping[str, str] | None = None) -> Any:
    """Agent output is markdown: headings, lists, emphasis, inline and fenced code, quotes, links,
    tables — rendered by Rich in the theme's own text colours (`colours`: the app's theme
    variables; without them, no colours), which every theme keeps readable at every colour depth.
    Rich's own markdown and code colours are not: blue links, magenta quotes and headings, dim
    rules, yellow strings on a light background."""
    from rich.markdown import Markdown

    styles, code = markdown_styles(colours or {})
    markdown = Markdown(_hard_breaks(text), code_theme=code, hyperlinks=False)
    return Styled(markdown, styles)


def _rich_colour(value: str | None) -> str:
    """A theme variable's colour as Rich writes it ("ansi_cyan" is Rich's "cyan"); "default"
    for what is not one colour ("auto 87%")."""
    if not value or " " in value:
        return "default"
    if value.startswith("ansi_"):
        return value.removeprefix("ansi_")
    return value[:7] if value.startswith("#") else value  # without an alpha


def markdown_styles(colours: Mapping[str, str]) -> tuple[Any, Any]:
    """Rich's markdown styles and a code theme, in the theme's text colours."""
    from pygments.token import (
        Comment,
        Error,
        Generic,
        Keyword,
        Name,
        Number,
        Operator,
        String,
        Token,
    )
    from rich.style import Style
    from rich.syntax import ANSISyntaxTheme
    from rich.theme import Theme

    def colour(name: str) -> str:
        return _rich_colour(colours.get(name))

    primary, secondary, accent = (
        colour("text-primary"),
        colour("text-secondary"),
        colour("text-accent"),
    )
    success, warning, error = colour("text-success"), colour("text-warning"), colour("text-error")
    muted = colour("text-muted")
    styles = Theme(
        {
            "markdown.code": f"bold {accent}",
            "markdown.code_block": "none",
            "markdown.block_quote": f"italic {secondary}",
            "markdown.list": accent,
            "markdown.item.bullet": f"bold {accent}",
            "markdown.item.number": accent,
            "markdown.hr": muted,
            "markdown.h1": f"bold underline {primary}",
            "markdown.h2": f"bold underline {primary}",
            "markdown.h3": f"bold {primary}",
            "markdown.h4": f"bold italic {primary}",
            "markdown.h5": "bold italic",
            "markdown.h6": "italic",
            "markdown.h7": "italic",
            "markdown.link": f"bold {primary}",
            "markdown.link_url": f"underline {muted}",
            "markdown.table.border": muted,
            "markdown.table.header": f"bold {primary}",
            "markdown.kbd": f"bold {warning}",
        }
    )
    code = ANSISyntaxTheme(
        {
            Token: Style(),
            Comment: Style(color=muted, italic=True),
            Keyword: Style(color=primary, bold=True),
            Keyword.Type: Style(color=secondary),
            Operator.Word: Style(color=primary, bold=True),
            Name.Builtin: Style(color=secondary),
            Name.Function: Style(color=success),
            Name.Class: Style(color=success, bold=True),
            Name.Namespace: Style(color=secondary),
            Name.Decorator: Style(color=accent),
            Name.Exception: Style(color=error),
            Name.Tag: Style(color=primary),
            Name.Attribute: Style(color=secondary),
            String: Style(color=warning),
            Number: Style(color=accent),
            Generic.Deleted: Style(color=error),
            Generic.Inserted: Style(color=success),
            Generic.Heading: Style(bold=True),
            Generic.Subheading: Style(color=primary, bold=True),
            Generic.Error: Style(color=error),
            Error: Style(color=error, underline=True),
        }
    )
    return styles, code


class Styled:
    """A Rich renderable drawn with a Rich theme's styles (markdown looks its styles up by name
    on the console that draws it)."""

    def __init__(self, renderable: Any, theme: Any) -> None:
        self.renderable = renderable
        self.theme = theme

    def __rich_console__(self, console: Any, options: Any) -> Any:
        with console.use_theme(self.theme):
            lines = console.render_lines(self.renderable, options, pad=False, new_lines=True)
        for line in lines:
            yield from line

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        with console.use_theme(self.theme):
            return Measurement.get(console, options, self.renderable)


def _hard_breaks(text: str) -> str:
    """Each line of an agent's reply stays a line (tool-call status lines, a reason, the reply),
    as a chat shows it: markdown's soft breaks become hard ones, outside fenced code."""
    out, fenced = [], False
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not fenced and line.strip() and nxt.strip():
            line += "  "  # a markdown hard break
        out.append(line)
    return "\n".join(out)


# How the bridge renders a tool call's status in the response text (`bridge.acp_updates.ToolCallState`).
_TOOL_LINE = re.compile("(\u23f3|\u2699\ufe0f|\u2705|\u274c|\u2022) \\*\\*(.+)\\*\\*")
_SETTLED = ("\u2705", "\u274c")  # completed, failed


_FENCE = "`" * 10  # how the bridge fences a tool call's output (`bridge.render.FENCE`)
# How the bridge tells the client a denial's reason (`AgentSession._deny_notice`): a quote.
_DENY_NOTICE = re.compile(r"\n\n> (The user(?:'s rules)? denied [^\n]+)\n\n")


def compact_tool_piece(piece: str, decided: str | None = None) -> str:
    """A tool call's entry as the chat draws it: its status line (with who decided its
    permission, when that is known), then an output of one line on one line (`↳ output`) rather
    than as a code block with blank lines around it; a longer output stays a code block."""
    head, _, rest = piece.partition("\n")
    if decided:
        head += f" · {decided}"
    body = rest
    if body.startswith(_FENCE + "\n"):
        body = body[len(_FENCE) + 1 :]
        end = body.rfind(_FENCE)
        if end >= 0 and not body[end + len(_FENCE) :].strip():
            output = body[:end].strip("\n")
            if "\n" not in output:
                if not output.strip():
                    return head + "\n"
                tick = "``" if "`" in output else "`"
                return f"{head}\n↳ {tick} {output} {tick}\n"
    return f"{head}\n{rest}"


class ToolLines:
    """A reply as the chat shows it: the response text, except that a tool call is one entry that
    changes state (⏳ → ✅) where the text has a new line for each state, a one-line output is
    one line, and a permission a rule (or a person) settled says so. The history keeps the text
    as the agent sent it."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self._open: dict[str, int] = {}  # title of a call not settled yet → its piece
        self._tools: set[int] = set()  # the pieces that are tool calls
        self._decided: dict[int, str] = {}  # a tool call's piece → who settled its permission

    def add(self, piece: str) -> None:
        notice = _DENY_NOTICE.fullmatch(piece)
        if notice is not None:  # the bridge's word on a denial with a reason: under its call
            self.pieces.append(f"↳ {notice.group(1)}\n")
            return
        m = _TOOL_LINE.fullmatch(piece.split("\n", 1)[0])
        if m is None:
            self.pieces.append(piece)
            return
        icon, title = m.groups()
        index = self._open.pop(title, None)
        if index is None:
            self.pieces.append(piece)
            index = len(self.pieces) - 1
            self._tools.add(index)
        else:
            self.pieces[index] = piece
        if icon not in _SETTLED:
            self._open[title] = index

    def decided(self, words: str) -> bool:
        """The permission of the call waiting now (the latest not settled) was settled `words`
        ("by rule 2") — or, when the call went on before the word came (a rule saved and the call
        approved by it, a bypass confirmed: the agent can be quicker than the console's event),
        the latest call no one is said to have settled. False when there is none."""
        if self._open:
            self._decided[max(self._open.values())] = words
            return True
        unsaid = [i for i in self._tools if i not in self._decided]
        if not unsaid:
            return False
        self._decided[max(unsaid)] = words
        return True

    @property
    def text(self) -> str:
        return "".join(
            compact_tool_piece(piece, self._decided.get(i)) if i in self._tools else piece
            for i, piece in enumerate(self.pieces)
        )
