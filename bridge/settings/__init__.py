"""The settings file: agents, approval rules, preferences (`docs/architecture.md`, "Settings").

`$SYMPOSIUM_CONFIG_DIR/settings.toml`, else `$XDG_CONFIG_HOME/symposium/settings.toml`
(`bridge.paths.settings_path`). A person edits it by hand and the program edits it too (the
console's Bypass answer, rules, preferences), so:

* reading validates everything and a broken file is reported with its line — never "fixed";
* every program edit goes through `SettingsStore.update`: an exclusive `flock` on a sibling
  `settings.toml.lock`, re-read, validate, apply the change to a `tomlkit` document (a person's
  comments and layout survive), validate the result, write atomically (temp file in the same
  directory, fsync, `os.replace`, fsync the directory; file 0600, a directory it creates 0700).
  Two processes updating at once lose nothing; a reader never sees half a file; a broken file is
  left byte-for-byte as it was.

Everything that reads the file reads it here (`Settings.load`, or `Settings.load_quietly` where a
broken file is reported elsewhere): the console, the CLI, a CLI's hook and the OpenAI front door's
catalog. The package imports only the standard library, so a hook the CLI runs per tool call stays
cheap; `tomlkit` (editing), the rules and the approval broker load when first used.

One module per concern, every public name importable from `bridge.settings`:

* `file` — `Settings`, the whole file validated, and how it is read (`load`, `parse`,
  `rule_problems`);
* `model` — the typed tables: `Preferences`, `NotifyConfig`, `McpServerConfig`;
* `agents` — `AgentConfig` (`[agents.<id>]`) and `agent_display_name`;
* `parse` — decoding, TOML, the checks of each table, `rule_from_toml`;
* `toml_lines` — key paths (`format_key`) and the line that sets one (`locate`), for errors;
* `errors` — `SettingsError` (with the file, line and key) and `SchemaError`;
* `store` — `SettingsStore`: locked, validated, atomic edits that keep comments; `rule_toml`.
  It loads with the first use of one of its names (a hook that only reads the file does
  without it and the `tempfile`, `fcntl` and `tomlkit` it needs).

```toml
[preferences]                 # `Preferences`: theme, mouse, arm_delay, idle_timeout, max_agents, …
theme = "textual-dark"

[agents.claude]               # name, command, args, env, description, bypass
command = "npx"
args = ["-y", "@zed-industries/claude-agent-acp"]
bypass = false

[agents.zed-claude-code]      # an agent named by the extension: only its bypass
bypass = true

[[rules]]                     # bridge.rules.Rule: action (allow/ask/deny), agent, kind, title,
                              # title_regex, command, path, url, reason, match, not_match
action = "allow"
kind = "read"

[mcp_servers.calc]            # `McpServerConfig`: given to agents by the OpenAI front door
command = "python"
args = ["calc_mcp_server.py"]
```
"""

from typing import TYPE_CHECKING, Any

from bridge.settings.agents import BUILTIN_AGENT_IDS, AgentConfig, agent_display_name
from bridge.settings.errors import SettingsError
from bridge.settings.file import Settings, rule_problems
from bridge.settings.model import McpServerConfig, NotifyConfig, Preferences
from bridge.settings.parse import NOTIFY_KEYS, PREFERENCE_TYPES, TOP_KEYS, rule_from_toml
from bridge.settings.toml_lines import KeyPath, format_key

if TYPE_CHECKING:
    from bridge.settings.store import NEW_FILE_HEADER, SettingsStore, rule_toml

__all__ = [
    "BUILTIN_AGENT_IDS",
    "NEW_FILE_HEADER",
    "NOTIFY_KEYS",
    "PREFERENCE_TYPES",
    "TOP_KEYS",
    "AgentConfig",
    "KeyPath",
    "McpServerConfig",
    "NotifyConfig",
    "Preferences",
    "Settings",
    "SettingsError",
    "SettingsStore",
    "agent_display_name",
    "format_key",
    "rule_from_toml",
    "rule_problems",
    "rule_toml",
]

_STORE_NAMES = ("NEW_FILE_HEADER", "SettingsStore", "rule_toml")


def __getattr__(name: str) -> Any:
    """The store's names, loading it when one is first asked for."""
    if name in _STORE_NAMES:
        from bridge.settings import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
