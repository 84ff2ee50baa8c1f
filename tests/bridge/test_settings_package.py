"""`bridge.settings` and `bridge.approvals` are packages of one module per concern: every name the
single modules offered is still importable from the package, and reading the settings file (what
a CLI's hook does on every tool call) leaves the store, and what it writes with, unloaded."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SETTINGS_NAMES = (
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
)
APPROVALS_NAMES = (
    "ANSWER_KIND",
    "DECISION_DEADLINE",
    "DENIERS",
    "REASON_LIMIT",
    "RULES_THREAD",
    "SWITCH_INTERVAL",
    "Answer",
    "ApprovalBroker",
    "ApprovalContext",
    "AuditLog",
    "ClientChoice",
    "ConsoleHandle",
    "Decision",
    "PendingApproval",
    "Policy",
    "Request",
    "Resolution",
    "Rule",
    "RuleSet",
    "RulesThread",
    "args_hash",
    "capped_reason",
    "choose",
    "denial_notice",
    "host_name",
    "local_peer",
    "tool_call_targets",
)


@pytest.mark.parametrize(
    ("package", "names"),
    [("bridge.settings", SETTINGS_NAMES), ("bridge.approvals", APPROVALS_NAMES)],
)
def test_every_name_of_the_former_module_is_importable_from_the_package(package, names):
    module = importlib.import_module(package)
    missing = [name for name in names if not hasattr(module, name)]
    assert missing == []
    assert set(names) <= set(module.__all__)


def test_an_unknown_name_of_the_settings_package_is_an_attribute_error():
    import bridge.settings

    with pytest.raises(AttributeError, match="no attribute 'SettingsShop'"):
        bridge.settings.SettingsShop  # noqa: B018


READ_THEN_EDIT = """
import json, sys
from bridge.settings import Settings
settings = Settings.load()
read = sorted(m for m in {names!r} if m in sys.modules)
from bridge.settings import SettingsStore
SettingsStore().set_preference("mouse", False)
print(json.dumps({{"rules": len(settings.rules), "read": read,
                   "store": "bridge.settings.store" in sys.modules,
                   "mouse": Settings.load().prefs.mouse}}))
"""


def test_reading_the_settings_leaves_the_store_unloaded_until_it_is_used(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.toml").write_text(
        '[agents.claude]\ncommand = "npx"\n\n'
        '[[rules]]\naction = "allow"\ncommand = "git status"\n\n'
        '[[rules]]\naction = "deny"\nkind = "edit"\n'
    )
    names = ("bridge.settings.store", "tempfile", "fcntl", "tomlkit")
    code = textwrap.dedent(READ_THEN_EDIT.format(names=names))
    env = {**os.environ, "SYMPOSIUM_CONFIG_DIR": str(config)}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer == {"rules": 2, "read": [], "store": True, "mouse": False}
