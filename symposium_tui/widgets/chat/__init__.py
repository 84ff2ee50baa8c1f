"""The built-in chat: the pane (`pane.py`) and how an agent's reply is drawn (`text.py`)."""

from symposium_tui.widgets.chat.pane import (
    AgentChoice,
    ChatLog,
    ChatMessage,
    ChatPane,
    agent_choice,
    eliza_choice,
)
from symposium_tui.widgets.chat.text import (
    ToolLines,
    compact_tool_piece,
    markdown_styles,
    render_agent_text,
)

__all__ = [
    "AgentChoice",
    "ChatLog",
    "ChatMessage",
    "ChatPane",
    "ToolLines",
    "agent_choice",
    "compact_tool_piece",
    "eliza_choice",
    "markdown_styles",
    "render_agent_text",
]
