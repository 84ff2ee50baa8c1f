"""F4: agents (and their bypass), approval rules and preferences, written through the settings layer.

Every change goes through `bridge.settings.SettingsStore` (locked, validated, atomic, comments
kept) and then into the live policy. A settings file that cannot be read is shown with its line
and is never written: the screen refuses changes until the file is fixed and reloaded (`r`).

- `screen.py` (+ `settings.tcss`) — `SettingsScreen`: the tabs, the broken-file banner, and the
  one place that writes what a panel asks for (`messages.SettingsChange`) and reloads the file.
- `agents.py`, `rules.py`, `preferences.py` — one panel each; they post messages, never write.
- `agent_form.py`, `rule_form.py` — the modal forms that add or edit an agent or a rule.
"""

from symposium_tui.screens.forms import TickBox
from symposium_tui.screens.settings.agent_form import AgentForm
from symposium_tui.screens.settings.agents import AgentsPanel
from symposium_tui.screens.settings.messages import SettingsChange, ThemeChosen
from symposium_tui.screens.settings.preferences import PreferencesPanel
from symposium_tui.screens.settings.rule_form import TOOL_KINDS, RuleForm
from symposium_tui.screens.settings.rules import RulesPanel
from symposium_tui.screens.settings.screen import SettingsScreen

__all__ = [
    "TOOL_KINDS",
    "AgentForm",
    "AgentsPanel",
    "PreferencesPanel",
    "RuleForm",
    "RulesPanel",
    "SettingsChange",
    "SettingsScreen",
    "ThemeChosen",
    "TickBox",
]
