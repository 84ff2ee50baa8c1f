"""What governs the agents is asked about, whoever asks.

Symposium's own folders (its settings and rules, the agents on bypass, its audit log, the console's
socket, what a console keeps) and each CLI's settings (Claude Code's, Codex's and Gemini CLI's —
the user's and any project's: where their hooks and permissions are) decide what an agent may do.
An agent that changes them changes its own guard: one on bypass could drop a deny rule, switch its
CLI's hooks off, or answer the console's socket itself. So a call that names one of them — a file
it reads or writes, a word of its shell command, the folder a command runs in, a word only known
when it runs with such a name in it — goes to a person: an ask, bypass included (`RuleSet.decide`,
right after the deny rules: a deny rule still denies first).

A call that deletes or moves a folder above one of them takes it along (`rm -rf ~`, `rm -rf
$HOME`, `mv ~/.config /tmp`, `find ~ -delete`, a `delete` tool given `~`): asked too, as is a
command that changes what is inside a folder it goes down, with one of them in it (`chmod -R 777
~`), changes who may use such a folder (`chmod 000 ~`), unpacks an archive or copies a folder's
contents into one (`tar xf x.tar`, `cp -r evil/. .`), or cleans its untracked files (`git clean
-fdx`). Reading such a folder is not asked (`grep -r x ~`, `ls ~`, `tar czf x.tgz .`).

What a command changes that cannot be known is asked as well (`check_unknown`, after the deny and
ask rules that might match): an unreadable command naming a program that changes files, such a
program given a path only known when it runs, a redirection there, a link the command makes, a
script it writes and runs, `patch`.

Not seen: a path interpreter code builds itself (`perl -e 'unlink glob "~/.*/*"'`).
"""

from __future__ import annotations

import os
import posixpath

from bridge.rules.changes import (
    CHANGERS,
    PERMISSIONS,
    REPLACERS,
    changes_where,
    destination,
    find_spares,
    substituted,
    unknown_change,
    walks_and_changes,
    with_values,
    writes_into,
)

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from bridge.rules.request import Request
    from bridge.shell import ParsedCommand

# A CLI's settings file wherever it is (a user's or a project's), by its folder's and its own name
_CLI_FILES = {
    (".claude", "settings.json"): "Claude Code's settings",
    (".claude", "settings.local.json"): "Claude Code's settings",
    (".codex", "config.toml"): "Codex's settings",
    (".codex", "hooks.json"): "Codex's hooks",
    (".gemini", "settings.json"): "Gemini CLI's settings",
    (".gemini", "trustedFolders.json"): "Gemini CLI's trusted folders",
}
# ... and such a folder itself (moved away or deleted, its settings go with it)
_CLI_FOLDERS = {
    ".claude": "Claude Code's settings folder",
    ".codex": "Codex's settings folder",
    ".gemini": "Gemini CLI's settings folder",
}
_MANAGED = {
    "/etc/claude-code/managed-settings.json": "Claude Code's managed settings",
    "/etc/gemini-cli/settings.json": "Gemini CLI's system settings",
    "/etc/gemini-cli/system-defaults.json": "Gemini CLI's system settings",
}
# A command whose text has none of these names (nor a guarded folder's) names nothing guarded:
# its paths are not worked out for the guard
_NAMES = frozenset(
    {n for pair in _CLI_FILES for n in pair}
    | {posixpath.basename(p) for p in _MANAGED}
    | {"settings.toml", "audit.jsonl", "console.sock"}  # Symposium's own files, by name
)


def _folders() -> list[tuple[str, str]]:
    """Symposium's own folders, as the process's environment places them: (path, what)."""
    from bridge.paths import config_dir_path, runtime_dir_path, state_dir_path

    return [
        (config_dir_path(), "Symposium's settings and audit log"),
        (runtime_dir_path(), "Symposium's console socket"),
        (state_dir_path(), "what Symposium's console keeps"),
    ]


def _cli_files() -> dict[str, str]:
    """The user's settings folder and files of each CLI, where the CLI looks for them (its own
    variable for its home honoured, as `bridge.hooks.where` finds them)."""
    env = os.environ.get
    user = os.path.expanduser("~")
    out: dict[str, str] = {}
    for home, files, what in (
        (
            env("CLAUDE_CONFIG_DIR") or os.path.join(user, ".claude"),
            ("settings.json", "settings.local.json"),
            "Claude Code's",
        ),
        (
            env("CODEX_HOME") or os.path.join(user, ".codex"),
            ("config.toml", "hooks.json"),
            "Codex's",
        ),
        (
            os.path.join(env("GEMINI_CLI_HOME") or user, ".gemini"),
            ("settings.json", "trustedFolders.json"),
            "Gemini CLI's",
        ),
    ):
        out[home] = f"{what} settings folder"
        out.update({os.path.join(home, f): f"{what} settings" for f in files})
    return out


class Guards:
    """The guarded folders and files of this process's environment (its variables read once)."""

    def __init__(self) -> None:
        from bridge.rules.paths import resolve_path

        # (real path, what): everything inside
        self.folders = [(resolve_path(folder), what) for folder, what in _folders()]
        self.files: dict[str, str] = {}  # real path -> what: the file, or the folder itself
        env = os.environ.get
        # the user's (by where they resolve to as well: a settings file may be a link into dotfiles)
        named: dict[str, str] = {**_MANAGED, **_cli_files()}
        for variable in (
            "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
        ):
            if env(variable):
                named[env(variable) or ""] = "Gemini CLI's settings"
        for path, what in named.items():
            self.files[resolve_path(path)] = what

    def folder(self, path: str) -> str | None:
        """What the guarded folder that holds a (real) path is, if one does."""
        from bridge.rules.paths import inside  # (loaded with the guards: by `resolve_path`)

        for root, what in self.folders:
            if inside(path, root):
                return what
        return None

    def what(self, path: str) -> str | None:
        """What a (real) path is, when it is guarded."""
        found = self.folder(path) or self.files.get(path)
        if found is not None:
            return found
        head, name = posixpath.split(path)
        return _CLI_FILES.get((posixpath.basename(head), name)) or _CLI_FOLDERS.get(name)

    def roots(self, cwd: str | None) -> list[tuple[str, str]]:
        """The guarded folders and files there are, with the project's CLI folders (those in the
        folder the call runs in, a real path): (real path, what)."""
        found = [(r, w) for r, w in (*self.folders, *self.files.items()) if os.path.lexists(r)]
        if cwd:
            for name, what in _CLI_FOLDERS.items():
                path = os.path.join(cwd, name)
                if os.path.lexists(path):
                    found.append((os.path.realpath(path), what))
        return found

    def carried(self, req: Request, changes: bool) -> str | None:
        """Why a call that takes a guarded folder or file along (a delete or move of a folder
        above it), or changes what is inside a folder above it, is asked; or None."""
        carries = req.kind in ("delete", "move") and bool(req.paths)
        if not (carries or changes):
            return None  # (an edit, a read, a command that changes nothing it goes down)
        from bridge.rules.paths import resolve_path
        from bridge.rules.verdicts import MIGHT, YES

        cwd = resolve_path(req.cwd) if req.cwd else None
        roots = self.roots(cwd)
        if carries:
            for root, what in roots:
                if req.walks_into(root):
                    return _why(what, root, along=True)
        parsed = req.parsed
        if not changes or not roots or parsed is None:
            return None
        # (a find spared by its `-name` must not name a guarded folder, nor one above it)
        names = _environment().names() | {c for root, _ in roots for c in root.split("/") if c}
        parts = tuple(
            p
            for p in parsed.parts
            if walks_and_changes(p.words) and not find_spares(p.words, names)
        )
        if any(p.open_args and walks_and_changes(p.words, CHANGERS) for p in parsed.parts):
            parts = parsed.parts  # (what any of them finds may be given to a changer)
        values = req.assigned_values()  # (`x=.config; rm -rf $x` is `rm -rf .config`)
        parts = tuple(with_values(p, values) for p in parts)
        verdicts = req.walks_above_each(tuple(r for r, _ in roots), cwd, parts)
        for (root, what), verdict in zip(roots, verdicts, strict=True):
            if verdict == YES:
                return _why(what, root, along=True)
        for (root, what), verdict in zip(roots, verdicts, strict=True):
            if verdict == MIGHT:
                return _why(what, root, within=True)
        return self._changed_in(parsed, cwd, roots, values)

    @staticmethod
    def _changed_in(
        parsed: ParsedCommand,
        cwd: str | None,
        roots: list[tuple[str, str]],
        values: dict[str, str | None],
    ) -> str | None:
        """A permission change of a folder above one (or of one), an archive unpacked, or an
        untracked file cleaned, in a folder that holds one."""
        from bridge.rules.named import given_paths
        from bridge.rules.paths import inside

        for part in parsed.parts:
            words = with_values(part, values).words
            program = posixpath.basename(words[0]) if words else ""
            if not changes_where(words):
                continue
            operands, bases = given_paths(parsed, cwd, words)
            given = program in PERMISSIONS or program in REPLACERS
            into = () if given else writes_into(words) or ()
            if given:
                targets = operands
            elif into:
                targets = {destination(d, b, values) for d in into for b in bases}
            else:
                targets = set(bases)
            for root, what in roots:
                if any(inside(root, target) for target in targets):
                    return _why(what, root, within=True)
        return None

    def check(self, req: Request, mentions: bool, changes: bool = False) -> str | None:
        """Why the request is asked about (the `why` of an ask), or None: it names nothing
        guarded. `mentions`: its shell command's text has a guarded name in it (`mentioned`);
        `changes`: it runs a program that changes what is inside a folder it goes down."""
        for names, _ in req.path_readings():
            for path in names:
                what = self.what(path)
                if what is not None:
                    return _why(what, path)
        for path in req.loose_readings():
            what = self.what(path)
            if what is not None:
                return _why(what, path)
        carried = self.carried(req, changes)
        if carried is not None:
            return carried
        if not mentions:
            return None
        named = req.named_paths()
        for path in sorted(named.real | named.maybe):
            what = self.what(path)
            if what is not None:
                return _why(what, path)
        runs_in = self.folder(named.cwd) if named.cwd is not None else None
        if runs_in is not None and named.cwd is not None:  # (its relative words are in there)
            return _why(runs_in, named.cwd, runs_in=True)
        maybe = sorted(_environment().names() & named.parts)
        if maybe:
            return f"ask: a word only known when it runs may name {maybe[0]!r} ({_GOVERNS})"
        return None


def _why(
    what: str, path: str, runs_in: bool = False, along: bool = False, within: bool = False
) -> str:
    if along:
        where = f"deletes or moves a folder that holds {path}"
    elif within:
        where = f"changes what is inside a folder that holds {path}"
    else:
        where = f"runs in {path}" if runs_in else f"names {path}"
    return f"ask: it {where} ({what}: {_GOVERNS})"


_GOVERNS = "what governs agents goes to a person, bypass included"


def _unknown_why(unknown: str | None) -> str | None:
    if unknown is None:
        return None
    return (
        f"ask: {unknown}, so whether it changes what governs the agents is not known ({_GOVERNS})"
    )


def is_guarded(reason: str | None) -> bool:
    """Whether an ask's reason is the guard's: no allow rule (nor bypass) answers such a call."""
    return bool(reason) and _GOVERNS in (reason or "")


_VARIABLES = (
    "HOME",
    "SYMPOSIUM_CONFIG_DIR",
    "XDG_CONFIG_HOME",
    "SYMPOSIUM_RUNTIME_DIR",
    "XDG_RUNTIME_DIR",
    "SYMPOSIUM_STATE_DIR",
    "XDG_STATE_HOME",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    "GEMINI_CLI_HOME",
)


class _Environment:
    """What the guards read from one environment, each built with its first use: the names a
    command that names something guarded has in its text, and the guards themselves."""

    __slots__ = ("_guards", "_names")

    def __init__(self) -> None:
        self._guards: Guards | None = None
        self._names: frozenset[str] | None = None

    def guards(self) -> Guards:
        if self._guards is None:
            self._guards = Guards()
        return self._guards

    def names(self) -> frozenset[str]:
        """A CLI's settings file or folder, or a guarded folder's (as given and as it
        resolves)."""
        if self._names is None:
            env = os.environ.get
            paths = [folder for folder, _ in _folders()] + list(_cli_files())
            paths += [env(v) or "" for v in _VARIABLES[7:]]
            self._names = _NAMES | {
                posixpath.basename(q.rstrip("/"))
                for p in paths
                if p
                for q in (p, os.path.realpath(os.path.expanduser(p)))
            } - {""}
        return self._names


_ENVIRONMENTS: dict[tuple[str | None, ...], _Environment] = {}


def _environment() -> _Environment:
    """The environment as it is now (read again when a variable the guards read changed)."""
    env = os.environ.get
    key = tuple(env(v) for v in _VARIABLES)
    found = _ENVIRONMENTS.get(key)
    if found is None:
        _ENVIRONMENTS.clear()
        found = _ENVIRONMENTS[key] = _Environment()
    return found


def guards() -> Guards:
    """The guards of the environment as it is now."""
    return _environment().guards()


def mentioned(command: str | tuple[str, ...], names: frozenset[str] | None = None) -> bool:
    """Whether a command's text has a guarded name in it (else it names nothing guarded)."""
    text = command if isinstance(command, str) else " ".join(command)
    return any(name in text for name in names or _environment().names())


def _spelled(parsed: ParsedCommand, names: frozenset[str]) -> bool:
    """Whether a command's words, as the shell reads them, may name something guarded: one has a
    guarded name once its quotes are removed (`.cl""aude`, `$'.cl\\x61ude'`), or is a glob or
    brace expansion (`~/.*/*`, `~/.c{l,}aude`: what it expands to is looked at)."""
    from bridge.shell import GLOB_CHARS

    for word, _ in parsed.words:
        if "{" in word or not GLOB_CHARS.isdisjoint(word) or any(n in word for n in names):
            return True
    return False


def check(req: Request) -> str | None:
    """Why the request is asked about (the `why` of an ask), or None: it names nothing guarded.
    The guards' paths are resolved only for a request that has paths or names one of them."""
    environment = _environment()
    command = req.command
    parsed = req.parsed if command is not None else None
    names = environment.names()
    mentions = (
        parsed is not None
        and command is not None
        and (mentioned(command, names) or _spelled(parsed, names))
    )
    changes = parsed is not None and any(
        walks_and_changes(p.words)
        or changes_where(p.words)
        or (p.open_args and walks_and_changes(p.words, CHANGERS))
        for p in parsed.parts
    )
    if parsed is not None and any(d for _, d in parsed.words):
        found = _named_by_values(parsed, req.assigned_values(), names)
        if found is not None:  # `a=.cl; b=aude; sed -i … ~/$a$b/settings.json`
            return f"ask: {found[0]!r} is {found[1]!r} when it runs ({_GOVERNS})"
    if not (mentions or changes or req.paths or req.loose_paths):
        return None
    return environment.guards().check(req, mentions, changes)


def _named_by_values(
    parsed: ParsedCommand, values: dict[str, str | None], names: frozenset[str]
) -> tuple[str, str] | None:
    """A word that names something guarded once the command's own plain variables are put in,
    with what it becomes; or None."""
    for word, dynamic in parsed.words:
        if dynamic:
            plain = substituted(word, values)
            if plain is not None and any(n in plain for n in names):
                return word, plain
    return None


def check_unknown(req: Request) -> str | None:
    """Why what a shell command changes cannot be known (`unknown_change`: the `why` of an ask),
    or None. Asked after the deny and ask rules that might match (their reason is the person's
    own), before any allow."""
    command = req.command
    parsed = req.parsed if command is not None else None
    if parsed is None:
        return None
    raw = command if isinstance(command, str) else None
    return _unknown_why(unknown_change(parsed, raw, _environment().names(), req.assigned_values))
