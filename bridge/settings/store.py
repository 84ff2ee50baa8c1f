"""Editing the settings file: `SettingsStore`, which every change the program makes goes through.

`SettingsStore.update` takes an exclusive `flock` on a sibling `settings.toml.lock`, re-reads the
file, validates it, applies the change to a `tomlkit` document (a person's comments and layout
survive), validates the result and writes it atomically (temp file in the same directory, fsync,
`os.replace`, fsync the directory; file 0600, a directory it creates 0700). Two processes updating
at once lose nothing; a reader never sees half a file; a broken file is left byte-for-byte as it
was. `tomlkit` loads with the first edit.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.paths import settings_path
from bridge.settings.errors import SettingsError
from bridge.settings.file import Settings
from bridge.settings.parse import decode_text

if TYPE_CHECKING:
    import tomlkit
    import tomlkit.items

    from bridge.rules import Rule
    from bridge.settings.agents import AgentConfig

NEW_FILE_HEADER = (
    "# Symposium TUI settings. Edit freely: when the program changes something it keeps\n"
    "# your comments and layout. `symposium-tui config` shows what is in effect.\n"
)


def _ensure_dir(directory: Path) -> None:
    from bridge.paths import make_private_dir

    make_private_dir(directory)  # 0700, parents too, whatever the umask


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _table_of(items: dict[str, Any]) -> tomlkit.items.Table:
    import tomlkit

    table = tomlkit.table()
    for key, value in items.items():
        table[key] = value
    return table


def _agents_container(doc: tomlkit.TOMLDocument, *, create: bool) -> Any:
    import tomlkit

    if "agents" not in doc:
        if not create:
            return None
        doc["agents"] = tomlkit.table(is_super_table=True)
    return doc["agents"]


def _new_agent_table(values: dict[str, Any]) -> tomlkit.items.Table:
    import tomlkit

    table = _table_of(values)
    table.add(tomlkit.nl())
    return table


class SettingsStore:
    """Reads and edits one settings file; safe across threads and processes."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else settings_path()

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def load(self) -> Settings:
        return Settings.load(self.path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        _ensure_dir(self.path.parent)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def update(self, mutate: Callable[[tomlkit.TOMLDocument], None]) -> Settings:
        """Apply `mutate` to the file under an exclusive lock and return the new settings.

        A file that is broken now raises SettingsError and is not touched; so is a change that
        would break it. Exceptions from `mutate` propagate and nothing is written. Blocks while
        another process holds the lock (updates take milliseconds); from async code, consider
        `asyncio.to_thread`."""
        import tomlkit

        with self._locked():
            target = Path(os.path.realpath(self.path))  # write through a symlinked settings file
            try:
                raw: bytes | None = target.read_bytes()
            except FileNotFoundError:
                raw = None
            except OSError as exc:
                raise SettingsError(self.path, f"cannot read: {exc.strerror or exc}") from None
            if raw is None:
                old_text = None
                doc = tomlkit.parse(NEW_FILE_HEADER)
            else:
                old_text = decode_text(raw, self.path)
                Settings.parse(
                    old_text, self.path
                )  # broken → SettingsError; the file stays as it is
                try:
                    doc = tomlkit.parse(old_text)
                except tomlkit.exceptions.ParseError as exc:
                    raise SettingsError(
                        self.path, f"cannot edit this file: {exc}", line=exc.line, column=exc.col
                    ) from None
            mutate(doc)
            new_text = doc.as_string()
            try:
                settings = Settings.parse(new_text, self.path)
            except SettingsError as exc:
                raise SettingsError(
                    self.path,
                    f"the change was not written, it would break the file: {exc.reason}",
                    key=exc.key,
                ) from None
            if new_text == (old_text if old_text is not None else NEW_FILE_HEADER):
                settings.exists = old_text is not None
                return settings  # nothing changed: no write
            self._write(target, new_text.encode("utf-8"))
            return settings

    @staticmethod
    def _write(target: Path, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), 0o600)
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_dir(target.parent)

    # conveniences ------------------------------------------------------------------------------------

    def set_agent_bypass(self, agent_id: str, value: bool) -> Settings:
        """Persist (or clear) an agent's bypass; creates a bypass-only `[agents.<id>]` entry for an
        agent the settings do not configure."""

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            agents = _agents_container(doc, create=False)
            if agents is not None and agent_id in agents:
                entry = agents[agent_id]
                if entry.get("bypass") != value or "bypass" not in entry:
                    entry["bypass"] = value
            elif value:
                agents = _agents_container(doc, create=True)
                agents[agent_id] = _new_agent_table({"bypass": True})

        return self.update(mutate)

    def add_rule(self, rule: Rule, index: int | None = None) -> Settings:
        """Append a rule (or insert it at 0-based `index`; rules are tried in order)."""
        import tomlkit

        if rule.action not in ("allow", "ask", "deny"):
            raise ValueError(f"rule action must be allow, ask or deny, not {rule.action!r}")
        values = _rule_values(rule)

        def mutate(doc: tomlkit.TOMLDocument) -> None:

            if "rules" not in doc:
                aot = tomlkit.aot()
                aot.append(_table_of(values))
                doc["rules"] = aot
                return
            rules = doc["rules"]
            if isinstance(rules, tomlkit.items.AoT):
                new: Any = _table_of(values)
                if len(rules) and (index is None or index >= len(rules)):
                    last = rules[len(rules) - 1]
                    if not last.as_string().endswith("\n\n"):
                        last.add(tomlkit.nl())  # a blank line between [[rules]] entries
                    if list(doc)[-1] != "rules":
                        new.add(tomlkit.nl())  # and before the table that follows them
            else:  # rules = [{…}, …]
                new = tomlkit.inline_table()
                new.update(values)
            if index is None or index >= len(rules):
                rules.append(new)
            else:
                rules.insert(index, new)

        return self.update(mutate)

    def remove_rule(self, index: int, *, expect: Rule | None = None) -> Settings:
        """Remove the rule at 0-based `index` (as in `Settings.rules`). With `expect`, refuse (ValueError)
        when the rule there is not that one any more (someone edited the file meanwhile)."""

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            rules = _rules_at(doc, index, expect)
            del rules[index]
            if len(rules) == 0:
                del doc["rules"]

        return self.update(mutate)

    def replace_rule(self, index: int, rule: Rule, *, expect: Rule | None = None) -> Settings:
        """Put `rule` in place of the rule at 0-based `index`, editing its entry in place (its
        comments and its place in the order stay). `expect` as for `remove_rule`."""
        if rule.action not in ("allow", "ask", "deny"):
            raise ValueError(f"rule action must be allow, ask or deny, not {rule.action!r}")
        values = _rule_values(rule)

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            rules = _rules_at(doc, index, expect)
            entry = rules[index]
            for key in [k for k in entry if k not in values]:
                del entry[key]
            for key, value in values.items():
                if key not in entry or _plain(entry[key]) != _plain(value):
                    entry[key] = value

        return self.update(mutate)

    def move_rule(self, index: int, to: int, *, expect: Rule | None = None) -> Settings:
        """Move the rule at 0-based `index` to position `to` (rules are tried in order: within one
        action the first that matches decides, and its reason is the one given). Its entry moves
        whole, with the comments inside it. `expect` as for `remove_rule`."""
        import tomlkit

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            rules = _rules_at(doc, index, expect)
            if not 0 <= to < len(rules):
                raise IndexError(f"there is no place {to + 1} (the file has {len(rules)} rules)")
            if to == index:
                return
            entry = rules[index]
            del rules[index]
            rules.insert(to, entry)
            if isinstance(rules, tomlkit.items.AoT):
                # A blank line between [[rules]] entries, wherever the moved one came from.
                for n in range(len(rules) - 1):
                    if not rules[n].as_string().endswith("\n\n"):
                        rules[n].add(tomlkit.nl())

        return self.update(mutate)

    def set_preference(self, key: str, value: Any) -> Settings:
        """Set `[preferences] key = value`; None removes it."""

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            import tomlkit

            if "preferences" not in doc:
                if value is None:
                    return
                doc["preferences"] = tomlkit.table()
            prefs = doc["preferences"]
            if value is None:
                if key in prefs:
                    del prefs[key]
            elif (
                key not in prefs
                or _plain(prefs[key]) != value
                or type(_plain(prefs[key])) is not type(value)
            ):
                prefs[key] = value

        return self.update(mutate)

    def upsert_agent(self, agent: AgentConfig) -> Settings:
        """Create or replace `[agents.<agent.id>]` with these values, editing an existing entry in
        place (its comments stay). Defaults (no command, no args, …) are left out of a new entry."""
        if not agent.id.strip():
            raise ValueError("an agent id must not be empty")
        values: dict[str, Any] = {
            "name": agent.name if agent.name and agent.name != agent.id else None,
            "command": agent.command,
            "args": list(agent.args) if agent.args else None,
            "env": dict(agent.env) if agent.env else None,
            "description": agent.description,
            "bypass": agent.bypass,
        }

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            agents = _agents_container(doc, create=True)
            if agent.id in agents:
                entry = agents[agent.id]
                for key, value in values.items():
                    present = key in entry
                    if key == "bypass":
                        if present or value:
                            if not present or entry[key] != value:
                                entry[key] = value
                    elif value is None:
                        if present:
                            del entry[key]
                    elif not present or _plain(entry[key]) != value:
                        entry[key] = _env_item(value) if key == "env" else value
            else:
                new = {
                    k: (_env_item(v) if k == "env" else v)
                    for k, v in values.items()
                    if v is not None and v is not False
                }
                agents[agent.id] = _new_agent_table(new)

        return self.update(mutate)

    def remove_agent(self, agent_id: str) -> Settings:
        """Remove `[agents.<agent_id>]`; nothing happens when there is none."""

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            agents = _agents_container(doc, create=False)
            if agents is not None and agent_id in agents:
                del agents[agent_id]

        return self.update(mutate)


def _rules_at(doc: tomlkit.TOMLDocument, index: int, expect: Rule | None) -> Any:
    """The document's rules, after checking there is a rule at `index` (and that it is still
    `expect`, when given: someone may have edited the file since it was shown)."""
    rules = doc.get("rules")
    if rules is None or not 0 <= index < len(rules):
        raise IndexError(
            f"there is no rule {index + 1} (the file has {0 if rules is None else len(rules)})"
        )
    from bridge.rules import Rule

    if expect is not None and Rule.from_dict(dict(rules[index])).to_dict() != expect.to_dict():
        raise ValueError(f"rule {index + 1} is no longer {expect.describe()!r}; the file changed")
    return rules


def _rule_values(rule: Rule) -> dict[str, Any]:
    """A rule's settings values, its examples as inline tables one per line."""
    import tomlkit

    values = rule.to_dict()
    for key in ("match", "not_match"):
        if key in values:
            examples = tomlkit.array()
            for example in values[key]:
                if isinstance(example, dict):
                    item = tomlkit.inline_table()
                    item.update(example)
                    examples.add_line(item)
                else:
                    examples.add_line(example)
            examples.add_line(indent="")
            values[key] = examples
    return values


def rule_toml(rule: Rule) -> str:
    """One rule as the `[[rules]]` entry it would be in the settings file (for editing)."""
    import tomlkit

    doc = tomlkit.document()
    aot = tomlkit.aot()
    aot.append(_table_of(_rule_values(rule)))
    doc["rules"] = aot
    return doc.as_string()


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _env_item(env: dict[str, str]) -> Any:
    import tomlkit

    table = tomlkit.inline_table()
    table.update(env)
    return table
