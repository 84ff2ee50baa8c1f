"""Install third-party ACP agents for the test suite, into a cache, once.

Usage::

    python tests/agents/install.py [fast-agent] [claude] [gemini] [frameworks] [acpx] [codex-acp] [toad]
    # no names: fast-agent claude

or from Python::

    from tests.agents.install import install, fast_agent, claude_agent
    install("claude")                       # idempotent; instant once done
    launch = claude_agent(home, api.base_url)
    proc = await asyncio.create_subprocess_exec(launch.command, *launch.args, env=launch.env, ...)

Everything lands under ``$SYMPOSIUM_TEST_AGENTS_DIR`` (default ``<repo>/.cache/agents``, which is
gitignored): ``fast-agent/venv`` (a Python >= 3.12 venv), ``claude/node_modules``,
``gemini/node_modules``, ``toad/venv`` (on a CPython 3.14 unpacked from Debian's unstable suite
into ``toad/root``: see ``_debian_python``). Each agent's directory holds a ``.installed`` marker naming what was
installed; a pin change reinstalls. An ``fcntl`` lock per agent keeps two pytest workers (or two
shells) from installing at once. The launch helpers install on first use too.

Only the package registries are reached (PyPI through pip, npm through npm, Debian's archive through
apt-get); nothing here downloads anything else, and nothing is installed on the system.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import glob
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "AGENTS",
    "AgentLaunch",
    "InstallError",
    "InstallUnsupported",
    "acpx",
    "agents_dir",
    "claude_agent",
    "claude_code",
    "codex_agent",
    "fast_agent",
    "find_python312",
    "frameworks_python",
    "gemini_agent",
    "install",
    "install_many",
    "is_installed",
    "toad",
]

REPO = Path(__file__).resolve().parents[2]

#: What each agent is, pinned. fast-agent-mcp 0.10.47 and 0.10.48 need fastmcp-slim 4.1.3, which
#: needs a certifi release (>= 2026.10.19) the registry here does not have: 0.10.46 is the newest
#: that installs.
FAST_AGENT_VERSION = "0.10.46"
CLAUDE_ACP_VERSION = "0.23.1"  # bundles @anthropic-ai/claude-agent-sdk 0.2.83 = Claude Code 2.1.83
GEMINI_CLI_VERSION = "0.61.0"
# The CLIs themselves, run in their own terminal mode (`claude -p`, `codex exec`) by the hook
# door's tests; both npm packages ship the CLI's own binary.
CLAUDE_CODE_VERSION = "2.1.332"
CODEX_VERSION = "0.169.0"
# The headless ACP client the ACP front door's tests drive (its package.json asks for Node >=
# 22.13, but it runs on the Node 20 here; npm only warns).
ACPX_VERSION = "0.19.1"
# Codex through Zed's ACP adapter: the npm package ships the adapter's binary (with Codex built in)
# as an optional dependency per platform (`@zed-industries/codex-acp-linux-x64`).
CODEX_ACP_VERSION = "0.16.0"
# Toad, the terminal ACP client (not an agent either): it needs CPython >= 3.14.
TOAD_VERSION = "0.6.20"

#: Not an agent: the third-party OpenAI *client* frameworks the OpenAI front door is tested with
#: (tests/bridge/openai/frameworks/), in a venv of their own so that the project's venv stays lean.
FRAMEWORKS = "openai-agents==0.24.0 langchain-openai==1.7.3 pydantic-ai-slim[openai]==2.68.0"

AGENTS = {
    "fast-agent": f"fast-agent-mcp=={FAST_AGENT_VERSION}",
    "claude": f"@zed-industries/claude-agent-acp@{CLAUDE_ACP_VERSION}",
    "gemini": f"@google/gemini-cli@{GEMINI_CLI_VERSION}",
    "frameworks": FRAMEWORKS,
    "acpx": f"acpx@{ACPX_VERSION}",
    "claude-code": f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}",
    "codex": f"@openai/codex@{CODEX_VERSION}",
    "codex-acp": f"@zed-industries/codex-acp@{CODEX_ACP_VERSION}",
    "toad": f"batrachian-toad=={TOAD_VERSION}",
}
DEFAULT_AGENTS = ("fast-agent", "claude")

# The full resolution of fast-agent-mcp 0.10.46 on CPython 3.12 that was verified working here, so
# that a later release of some dependency cannot change what the tests run against.
_FAST_AGENT_CONSTRAINTS = """
a2a-sdk==1.2.2 agent-client-protocol==0.12.1 aiofile==3.12.3 aiohappyeyeballs==2.7.1
aiohttp==3.14.4 aiologic==0.17.1 aiosignal==1.4.0 annotated-doc==0.0.7 annotated-types==0.8.0
anthropic==1.11.0 anyio==4.16.0 attrs==26.1.0 Authlib==1.9.9 beartype==0.23.1 cachetools==8.0.1
caio==0.12.10 certifi==2026.10.18 cffi==2.1.1 charset-normalizer==3.5.2 click==8.5.1
cryptography==50.0.2 culsans==0.11.0 cyclopts==5.4.0 distro==1.9.0 dnspython==2.9.2
docstring_parser==0.18.0 email-validator==2.3.0 exceptiongroup==1.3.1 fastmcp-slim==4.0.11
filelock==4.0.12 frozenlist==1.8.0 fsspec==2026.9.0 google-api-core==2.44.0 google-auth==2.62.2
google-genai==2.28.0 googleapis-common-protos==1.76.0 griffelib==2.4.1 h11==0.16.0
hf-xet==1.8.0 httpcore==1.0.9 httpcore2==2.16.2 httpx==0.28.1 httpx2==2.16.2
huggingface_hub==1.33.0 idna==3.20 jaraco.classes==3.4.0 jaraco.context==6.1.2
jaraco.functools==4.6.0 jeepney==0.9.0 jiter==0.19.0 joserfc==1.8.0 json-rpc==1.15.0
jsonref==1.1.0 jsonschema==4.26.0 jsonschema-path==0.5.0 jsonschema-specifications==2025.9.1
keyring==25.7.0 markdown-it-py==4.3.0 mcp==2.3.0 mcp-types==2.3.0 mdurl==0.1.2
more-itertools==11.2.1 mslex==1.3.0 multidict==6.9.1 openai==3.24.0 openapi-pydantic==0.6.0
opentelemetry-api==1.45.2 opentelemetry-exporter-http-transport==0.66b0
opentelemetry-exporter-otlp-common==0.66b0 opentelemetry-exporter-otlp-proto-common==1.45.0
opentelemetry-exporter-otlp-proto-http==1.45.0 opentelemetry-instrumentation==0.66b2
opentelemetry-instrumentation-anthropic==0.62.4
opentelemetry-instrumentation-google-genai==1.2b0 opentelemetry-instrumentation-openai==0.62.4
opentelemetry-proto==1.45.0 opentelemetry-sdk==1.45.2
opentelemetry-semantic-conventions==0.66b2 opentelemetry-semantic-conventions-ai==0.5.1
opentelemetry-util-genai==1.3b0 packaging==26.3 pathable==0.6.0 pillow==13.0.0
platformdirs==4.14.7 prompt_toolkit==3.0.53 propcache==0.5.4 proto-plus==1.29.0
protobuf==7.36.2 py-key-value-aio==0.4.6 pyasn1==0.6.5 pyasn1_modules==0.4.2 pycparser==3.12
pydantic==2.14.0 pydantic-settings==2.15.0 pydantic_core==2.50.0 Pygments==2.21.0 PyJWT==2.15.1
pyperclip==1.11.0 python-dotenv==1.2.4 python-frontmatter==1.3.0 python-multipart==0.0.34
PyYAML==6.0.3 referencing==0.37.0 regex==2026.11.15 requests==2.34.2 rich==15.0.0
rich-rst==2.2.0 rpds-py==2026.9.1 ruamel.yaml==0.19.1 SecretStorage==3.5.0 shellingham==1.5.4
sniffio==1.3.1 sse-starlette==3.7.0 starlette==1.7.0 tenacity==9.1.4 textual-image==0.14.2
tiktoken==0.14.0 tqdm==4.70.1 truststore==0.10.5 typer==0.27.2 typing-inspection==0.4.5
typing_extensions==4.16.0 uncalled-for==0.6.1 uritemplate==4.2.0 urllib3==2.8.0 uvicorn==0.54.0
uvloop==0.23.0 watchfiles==1.3.0 wcwidth==0.9.4 websockets==15.0.1 wrapt==2.5.2 yarl==1.25.1
"""

# The resolution of FRAMEWORKS verified working here (CPython 3.11).
_FRAMEWORK_CONSTRAINTS = """
annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 certifi==2026.10.18 cffi==2.1.1
charset-normalizer==3.5.2 click==8.5.1 cryptography==50.0.2 distro==1.9.0 genai-prices==0.2.3
griffelib==2.4.1 h11==0.16.0 httpcore==1.0.9 httpcore2==2.16.2 httpx==0.28.1 httpx2==2.16.2
idna==3.20 jiter==0.19.0 jsonpatch==1.47 jsonpointer==3.12 jsonschema==4.26.0
jsonschema-specifications==2025.9.1 langchain-core==1.7.2 langchain-openai==1.7.3
langchain-protocol==0.0.20 langsmith==0.15.0 logfire-api==5.6.0 mcp==2.3.0 mcp-types==2.3.0
openai==3.54.0 openai-agents==0.24.0 opentelemetry-api==1.45.2 orjson==3.13.0 packaging==26.3
pycparser==3.12 pydantic==2.14.3 pydantic-ai-slim==2.68.0 pydantic-graph==2.68.0
pydantic_core==2.50.4 PyJWT==2.15.1 python-multipart==0.0.34 PyYAML==6.0.3 referencing==0.37.0
regex==2026.11.15 requests==2.34.2 requests-toolbelt==1.0.0 rpds-py==2026.9.1 sniffio==1.3.1
sse-starlette==3.7.0 starlette==1.10.0 tenacity==9.2.1 tiktoken==0.14.0 truststore==0.10.5
typing-inspection==0.4.5 typing_extensions==4.16.0 urllib3==2.8.0 uuid_utils==0.19.0
uvicorn==0.54.0 websockets==16.1.1 xxhash==4.1.0 zstandard==0.25.0
"""

# The resolution of batrachian-toad 0.6.20 verified working here (CPython 3.14).
_TOAD_CONSTRAINTS = """
aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiohttp-jinja2==1.6 aiosignal==1.4.0 aiosqlite==0.22.1
anyio==4.14.2 attrs==26.1.0 bashlex==0.18 certifi==2026.10.19.post1 click==8.4.0
format-currency==0.0.10 frozenlist==1.8.0 h11==0.16.0 httpcore==1.0.9 httpx==0.28.1 idna==3.20
jeepney==0.9.0 Jinja2==3.1.6 linkify-it-py==2.2.0 loguru==0.6.0 markdown-it-py==4.3.0
MarkupSafe==3.0.4 mdit-py-plugins==0.7.0 mdurl==0.1.2 multidict==7.2.1 notify_py==0.3.43
packaging==26.2 pathspec==1.1.1 platformdirs==4.9.6 propcache==0.5.4 psutil==7.2.2
Pygments==2.21.0 pyperclip==1.11.0 rich==15.0.0 setproctitle==1.3.7 textual==8.2.7
textual-diff-view==0.1.5 textual-serve==1.1.3 textual-speedups==0.2.1 tree-sitter==0.26.1
tree-sitter-bash==0.25.1 tree-sitter-css==0.25.0 tree-sitter-go==0.25.0 tree-sitter-html==0.23.2
tree-sitter-java==0.23.5 tree-sitter-javascript==0.25.0 tree-sitter-json==0.24.8
tree-sitter-markdown==0.5.4 tree-sitter-python==0.25.0 tree-sitter-regex==0.25.0
tree-sitter-rust==0.24.2 tree-sitter-sql==0.3.13 tree-sitter-toml==0.7.0 tree-sitter-xml==0.7.0
tree-sitter-yaml==0.7.2 typeguard==4.5.2 typing_extensions==4.15.0 watchdog==6.0.0
xdg-base-dirs==6.0.3 yarl==1.25.1
"""

#: Where Toad's CPython 3.14 comes from. No suite of this Debian release (bookworm) has one, so
#: it is unpacked from the unstable suite into the cache, never installed: its own apt state, its
#: own sources list, ``dpkg-deb --extract``. Unstable's python3.14 needs glibc >= 2.42 (bookworm
#: has 2.36), so the interpreter runs on unstable's own loader and C library, unpacked beside it
#: (``patchelf``, also from unstable, sets the interpreter and the rpath): nothing else on the
#: machine sees them. Unversioned on purpose: unstable keeps only its newest builds.
DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEBIAN_SUITE = "unstable"
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
DEBIAN_PACKAGES = ("python3.14", "python3-pip-whl", "patchelf")

_MARKER = ".installed"


class InstallError(RuntimeError):
    """An agent could not be installed; ``output`` holds what the installer printed."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(f"{message}\n{output}" if output else message)
        self.output = output


class InstallUnsupported(InstallError):
    """This machine cannot run the agent at all (another architecture, no Debian tools, a kernel
    too old for the C library it needs), as opposed to an install that failed."""


@dataclass
class AgentLaunch:
    """How to start an agent: ``command *args`` with exactly ``env`` (a full environment)."""

    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


# -- where -------------------------------------------------------------------------------------
def agents_dir() -> Path:
    return Path(os.environ.get("SYMPOSIUM_TEST_AGENTS_DIR") or REPO / ".cache" / "agents").resolve()


def _agent_dir(name: str) -> Path:
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(AGENTS)}")
    return agents_dir() / name


def _bin(name: str) -> Path:
    d = _agent_dir(name)
    return {
        "fast-agent": d / "venv" / "bin" / "fast-agent-acp",
        "claude": d / "node_modules" / ".bin" / "claude-agent-acp",
        "gemini": d / "node_modules" / ".bin" / "gemini",
        "frameworks": d / "venv" / "bin" / "python",
        "acpx": d / "node_modules" / ".bin" / "acpx",
        "claude-code": d / "node_modules" / ".bin" / "claude",
        "codex": d / "node_modules" / ".bin" / "codex",
        "codex-acp": d / "node_modules" / ".bin" / "codex-acp",
        "toad": d / "venv" / "bin" / "toad",
    }[name]


def is_installed(name: str) -> bool:
    marker = _agent_dir(name) / _MARKER
    try:
        done = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    if name == "toad" and done.get("dir") != str(_agent_dir(name)):
        return False  # its python3.14 names its loader by absolute path: a moved copy is broken
    return bool(done.get("spec") == AGENTS[name] and _bin(name).exists())


# -- locking and running -----------------------------------------------------------------------
@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    root = agents_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(
    argv: Sequence[str], log: list[str], *, env: dict[str, str] | None = None, timeout: float = 900
) -> str:
    log.append("$ " + " ".join(argv))
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.append(str(exc))
        raise InstallError(f"failed to run {argv[0]}", "\n".join(log)) from exc
    out = "\n".join(
        line for line in done.stdout.splitlines() if not line.startswith("WARNING: Location ")
    )
    log.append(out)
    if done.returncode != 0:
        raise InstallError(f"{argv[0]} exited with {done.returncode}", "\n".join(log))
    return done.stdout


# -- Python >= 3.12 ------------------------------------------------------------------------------
_PROBE = "import sys; print(sys.version_info >= (3, 12), sys.executable)"


def find_python312() -> str:
    """The path of a CPython >= 3.12 interpreter (3.12 preferred): ``python3.12`` on PATH, pyenv's
    versions (directly, or through its shims with ``PYENV_VERSION``), then newer ones."""
    candidates: list[tuple[str, dict[str, str] | None]] = []
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    for minor in ("3.12", "3.13", "3.14"):
        exe = shutil.which(f"python{minor}")
        if exe:
            candidates.append((exe, None))
        for path in sorted(
            glob.glob(str(pyenv_root / "versions" / f"{minor}.*" / "bin" / f"python{minor}")),
            reverse=True,
        ):
            candidates.append((path, None))
            version = Path(path).parents[1].name
            if exe:
                candidates.append((exe, {**os.environ, "PYENV_VERSION": version}))
    if sys.version_info >= (3, 12):
        candidates.insert(0, (sys.executable, None))
    tried = []
    for exe, env in candidates:
        try:
            out = subprocess.run(
                [exe, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        tried.append(exe)
        fields = out.stdout.split(maxsplit=1)
        if out.returncode == 0 and fields and fields[0] == "True":
            return fields[1].strip()
    raise InstallError(
        "fast-agent needs CPython >= 3.12 and none was found "
        f"(tried python3.12/3.13/3.14 on PATH and under {pyenv_root}/versions: {tried or 'nothing'})"
    )


# -- installers ----------------------------------------------------------------------------------
def _install_fast_agent(dest: Path, log: list[str]) -> None:
    python = find_python312()
    log.append(f"# using {python}")
    venv = dest / "venv"
    _run([python, "-m", "venv", str(venv)], log)
    constraints = dest / "constraints.txt"
    constraints.write_text("\n".join(_FAST_AGENT_CONSTRAINTS.split()) + "\n")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    _run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "-c",
            str(constraints),
            AGENTS["fast-agent"],
        ],
        log,
        env=env,
    )


def _install_frameworks(dest: Path, log: list[str]) -> None:
    venv = dest / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], log)
    constraints = dest / "constraints.txt"
    constraints.write_text("\n".join(_FRAMEWORK_CONSTRAINTS.split()) + "\n")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    _run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "-c",
            str(constraints),
            *FRAMEWORKS.split(),
        ],
        log,
        env=env,
    )


def frameworks_python() -> str:
    """The Python of the OpenAI client frameworks' venv (installed on first use)."""
    install("frameworks")
    return str(_bin("frameworks"))


# -- CPython 3.14 from Debian unstable, for Toad ------------------------------------------------
_PYTHON_PROBE = (
    "import sys, ssl, sqlite3, ctypes, lzma, bz2, zlib, hashlib, asyncio, pty; "
    "assert sys.version_info >= (3, 14), sys.version; "
    "print(sys.version.split()[0], ssl.OPENSSL_VERSION)"
)


def _apt_config(apt: Path, acquire: str) -> Path:
    """A configuration for a private apt under ``apt``: its own sources, lists, status (empty:
    nothing is installed) and package cache, no lock on the system's, none of the system's
    configuration (no ``apt.conf.d`` hooks) but for ``acquire``, how the system's apt reaches
    the archive (``apt-config dump Acquire``: proxies, date checks — the archive mirror here is
    a snapshot whose Release files are past their Valid-Until). Passed as ``APT_CONFIG``."""
    options = {
        "Dir::Etc::main": "/dev/null",
        "Dir::Etc::parts": apt / "etc" / "apt.conf.d",
        "Dir::Etc": apt / "etc",
        "Dir::State": apt / "state",
        "Dir::State::status": apt / "status",
        "Dir::Cache": apt / "cache",
        "Dir::Cache::pkgcache": "",
        "Dir::Cache::srcpkgcache": "",
        "APT::Architecture": "amd64",
        "APT::Architectures": "amd64",
        "APT::Install-Recommends": "false",
        "APT::Sandbox::User": "root",
        "Debug::NoLocking": "true",
    }
    lines = [f'{key} "{value}";' for key, value in options.items()]
    # Not the index targets: they would add the system's extra indexes (DEP-11, …).
    lines += [line for line in acquire.splitlines() if not line.startswith("Acquire::IndexTargets")]
    config = apt / "apt.conf"
    config.write_text("\n".join(lines) + "\n")
    return config


def _debian_python(dest: Path, log: list[str]) -> Path:
    """Unpack Debian unstable's CPython 3.14 (and the libraries it links, its loader and C library
    included) into ``dest/root``, make it run on that loader, check it; return its path."""
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        raise InstallUnsupported(
            f"Toad's CPython 3.14 is unpacked from Debian's amd64 packages; this is "
            f"{sys.platform} {os.uname().machine}"
        )
    apt_get, apt_config, dpkg_deb = map(shutil.which, ("apt-get", "apt-config", "dpkg-deb"))
    if apt_get is None or apt_config is None or dpkg_deb is None:
        raise InstallUnsupported(
            "Toad's CPython 3.14 is unpacked from Debian's packages: this machine has no "
            "apt-get, apt-config or dpkg-deb"
        )
    if not Path(DEBIAN_KEYRING).exists():
        raise InstallUnsupported(f"no Debian archive keyring ({DEBIAN_KEYRING}) on this machine")
    apt = dest / "apt"
    for sub in (
        "etc/apt.conf.d",
        "etc/sources.list.d",
        "etc/preferences.d",
        "state/lists/partial",
        "cache/archives/partial",
    ):
        (apt / sub).mkdir(parents=True, exist_ok=True)
    (apt / "etc" / "sources.list").write_text(
        f"deb [signed-by={DEBIAN_KEYRING}] {DEBIAN_MIRROR} {DEBIAN_SUITE} main\n"
    )
    (apt / "status").touch()
    env = {
        **os.environ,
        "APT_CONFIG": str(_apt_config(apt, _run([apt_config, "dump", "Acquire"], log))),
        "DEBIAN_FRONTEND": "noninteractive",
        "LC_ALL": "C",
    }
    _run([apt_get, "-q", "update"], log, env=env, timeout=300)
    _run(
        [apt_get, "-q", "--yes", "--download-only", "install", *DEBIAN_PACKAGES],
        log,
        env=env,
        timeout=300,
    )
    root = dest / "root"
    debs = sorted((apt / "cache" / "archives").glob("*.deb"))
    for deb in debs:
        _run([dpkg_deb, "--extract", str(deb), str(root)], log)
    (dest / "debian-packages.txt").write_text("".join(deb.name + "\n" for deb in debs))
    shutil.rmtree(apt)  # the lists and the .debs (~30 MB) are not needed any more

    lib = root / "usr" / "lib" / "x86_64-linux-gnu"
    loader = lib / "ld-linux-x86-64.so.2"
    python = root / "usr" / "bin" / "python3.14"
    patchelf = root / "usr" / "bin" / "patchelf"
    # patchelf is unstable's too, so it runs on the same loader, named explicitly. The rpath
    # first, the interpreter second, in two runs: patchelf 0.18 doing both at once (or the
    # interpreter first) writes a python3.14 that dies of SIGSEGV before main.
    patch = [str(loader), "--library-path", str(lib), str(patchelf)]
    try:
        # DT_RPATH, which (unlike RUNPATH) also serves the libraries lib-dynload's modules need.
        _run([*patch, "--force-rpath", "--set-rpath", str(lib), str(python)], log)
        _run([*patch, "--set-interpreter", str(loader), str(python)], log)
        _run([str(python), "-c", _PYTHON_PROBE], log)
    except InstallError as exc:
        if "kernel too old" in exc.output:
            raise InstallUnsupported(
                "the kernel is too old for Debian unstable's C library", exc.output
            ) from exc
        raise
    return python


def _install_toad(dest: Path, log: list[str]) -> None:
    python = _debian_python(dest, log)
    venv = dest / "venv"
    _run([str(python), "-m", "venv", "--without-pip", str(venv)], log)
    wheels = sorted((dest / "root" / "usr" / "share" / "python-wheels").glob("pip-*.whl"))
    if not wheels:
        raise InstallError("python3-pip-whl brought no pip wheel", "\n".join(log))
    constraints = dest / "constraints.txt"
    constraints.write_text("\n".join(_TOAD_CONSTRAINTS.split()) + "\n")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    # pip runs from its wheel (as ensurepip does) and installs into the venv that runs it.
    _run(
        [
            str(venv / "bin" / "python"),
            f"{wheels[-1]}/pip",
            "install",
            "-q",
            "-c",
            str(constraints),
            AGENTS["toad"],
        ],
        log,
        env=env,
    )


def _install_npm(name: str, dest: Path, log: list[str]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError(
            "npm is not on PATH (Node.js >= 20 is needed for the Claude and Gemini agents)"
        )
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "package.json").write_text(
        json.dumps({"name": f"symposium-test-{name}", "private": True}) + "\n"
    )
    _run(
        [
            npm,
            "install",
            "--prefix",
            str(dest),
            "--no-audit",
            "--no-fund",
            "--save-exact",
            "--no-update-notifier",
            AGENTS[name],
        ],
        log,
    )


def install(name: str, *, force: bool = False, quiet: bool = True) -> Path:
    """Install one agent (``fast-agent``, ``claude`` or ``gemini``) unless it already is; return its
    directory. Raises :class:`InstallError` with the installer's output on failure."""
    dest = _agent_dir(name)
    if not force and is_installed(name):
        return dest
    with _locked(name):
        if not force and is_installed(name):  # another process did it while we waited
            return dest
        log: list[str] = []
        started = time.monotonic()
        if not quiet:
            print(
                f"installing {name} ({AGENTS[name]}) into {dest} ...", file=sys.stderr, flush=True
            )
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        try:
            if name == "fast-agent":
                _install_fast_agent(dest, log)
            elif name == "frameworks":
                _install_frameworks(dest, log)
            elif name == "toad":
                _install_toad(dest, log)
            else:
                _install_npm(name, dest, log)
            if not _bin(name).exists():
                raise InstallError(f"{name}: {_bin(name)} missing after install", "\n".join(log))
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise
        seconds = round(time.monotonic() - started, 1)
        marker = {"spec": AGENTS[name], "seconds": seconds, "at": _now_iso(), "dir": str(dest)}
        (dest / _MARKER).write_text(json.dumps(marker) + "\n")
        if not quiet:
            print(f"installed {name} in {seconds} s", file=sys.stderr, flush=True)
        return dest


def install_many(
    names: Sequence[str] = DEFAULT_AGENTS, *, quiet: bool = True
) -> dict[str, InstallError]:
    """Install several; return the failures by name (empty when all went well)."""
    failures: dict[str, InstallError] = {}
    for name in names:
        try:
            install(name, quiet=quiet)
        except InstallError as exc:
            failures[name] = exc
    return failures


# -- launching -----------------------------------------------------------------------------------
def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _base_env(home: Path) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    for key in ("TMPDIR", "USER", "LOGNAME", "SHELL", "PYTHONPATH"):  # (a worktree's code)
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _node_path(env: dict[str, str]) -> None:
    """Make sure ``node`` (the agents' ``#!/usr/bin/env node``) is on the agent's PATH."""
    if shutil.which("node", path=env["PATH"]):
        return
    for guess in ("/usr/local/bin/node", "/usr/bin/node"):
        if os.path.exists(guess):
            env["PATH"] = os.path.dirname(guess) + os.pathsep + env["PATH"]
            return


def fast_agent(
    home: Path, model: str = "passthrough", *, extra_args: Sequence[str] = ()
) -> AgentLaunch:
    """fast-agent as an ACP agent. ``model``: ``passthrough`` echoes each prompt (and
    ``***CALL_TOOL <server>__<tool> {json}`` calls an MCP tool), ``slow`` answers after 3 s,
    ``generic.<name>`` with ``GENERIC_BASE_URL`` in env talks to an OpenAI-compatible server.
    ``home`` is fast-agent's own home (sessions, cards), also used as ``$HOME``."""
    install("fast-agent")
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    env = _base_env(home)
    env["PYTHONUNBUFFERED"] = "1"
    return AgentLaunch(
        str(_bin("fast-agent")), ["--model", model, "--home", str(home), *extra_args], env
    )


def acpx(home: Path) -> AgentLaunch:
    """acpx, the headless ACP client (an ACP *client*: give it `--agent "<command>"`). ``home``
    becomes ``$HOME`` (where it keeps its sessions and queue)."""
    install("acpx")
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    env = _base_env(home)
    _node_path(env)
    return AgentLaunch(str(_bin("acpx")), [], env)


#: Toad's settings: no usage statistics, no desktop notifications or sounds.
_TOAD_SETTINGS = {
    "statistics": {"allow_collect": False},
    "notifications": {"system": "never", "enable_sounds": False},
}


def toad(home: Path) -> AgentLaunch:
    """Toad, the terminal ACP client (an ACP *client*: ``toad acp "<agent command>" <project>``),
    for a real terminal (``TERM=xterm-256color``). ``home`` becomes ``$HOME`` and holds its XDG
    config (settings written here: no statistics, no notifications), data and state. Its one
    call out, a version check over HTTPS, goes to a proxy on a closed loopback port and fails
    at once; loopback itself stays direct."""
    install("toad")
    home = Path(home)
    config = home / ".config"
    (config / "toad").mkdir(parents=True, exist_ok=True)
    (config / "toad" / "toad.json").write_text(json.dumps(_TOAD_SETTINGS, indent=4) + "\n")
    env = _base_env(home)
    del env["NO_COLOR"]
    env.update(
        {
            "TERM": "xterm-256color",
            "XDG_CONFIG_HOME": str(config),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost,::1",
        }
    )
    return AgentLaunch(str(_bin("toad")), [], env)


def _claude_env(home: Path, anthropic_base_url: str) -> dict[str, str]:
    """The environment Claude Code runs in offline: ``$HOME`` is ``home``, with a fresh plugin
    blocklist written into it so that Claude Code does not try to fetch one."""
    home = Path(home)
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    (plugins / "blocklist.json").write_text(json.dumps({"fetchedAt": _now_iso(), "plugins": []}))
    env = _base_env(home)
    _node_path(env)
    env.update(
        {
            "ANTHROPIC_BASE_URL": anthropic_base_url.rstrip("/"),
            "ANTHROPIC_API_KEY": "x",
            # These machines set IS_SANDBOX=yes: Claude Code running as root then dies at
            # session/new. Empty (or 1) lets it run.
            "IS_SANDBOX": "",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
    )
    return env


def claude_agent(home: Path, anthropic_base_url: str) -> AgentLaunch:
    """Claude Code through Zed's ACP adapter, talking to ``anthropic_base_url`` (a fake Messages
    API). ``home`` becomes ``$HOME``."""
    install("claude")
    return AgentLaunch(str(_bin("claude")), [], _claude_env(home, anthropic_base_url))


def claude_code(home: Path, anthropic_base_url: str) -> AgentLaunch:
    """The `claude` CLI itself (give it ``-p PROMPT``), talking to ``anthropic_base_url``."""
    install("claude-code")
    return AgentLaunch(str(_bin("claude-code")), [], _claude_env(home, anthropic_base_url))


def codex_agent(home: Path, responses_base_url: str) -> AgentLaunch:
    """Codex through Zed's ACP adapter, talking to ``responses_base_url`` (a fake Responses API,
    ``tests/agents/fake_openai_responses.py``) as a custom model provider written into
    ``$CODEX_HOME/config.toml``; it asks before every command (``approval_policy = "untrusted"``)
    and may not write without approval (``sandbox_mode = "read-only"``)."""
    install("codex-acp")
    home = Path(home)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        "\n".join(
            [
                'model = "gpt-5-codex"',
                'model_provider = "fake"',
                'approval_policy = "untrusted"',
                'sandbox_mode = "read-only"',
                "[model_providers.fake]",
                'name = "fake"',
                f"base_url = {json.dumps(responses_base_url)}",
                'wire_api = "responses"',
                'env_key = "FAKE_OPENAI_API_KEY"',
                "request_max_retries = 0",
                "stream_max_retries = 0",
                "",
            ]
        )
    )
    env = _base_env(home)
    _node_path(env)
    env.update({"CODEX_HOME": str(codex_home), "FAKE_OPENAI_API_KEY": "x"})
    return AgentLaunch(str(_bin("codex-acp")), [], env)


def gemini_agent(home: Path, gemini_base_url: str, *, trusted: Sequence[Path] = ()) -> AgentLaunch:
    """Gemini CLI in ACP mode, talking to ``gemini_base_url`` (a fake Gemini API). Session cwds
    must be listed in ``trusted`` (written to ``$HOME/.gemini/trustedFolders.json``), or Gemini
    silently ignores the MCP servers offered in ``session/new``."""
    install("gemini")
    home = Path(home)
    gem = home / ".gemini"
    gem.mkdir(parents=True, exist_ok=True)
    (gem / "trustedFolders.json").write_text(
        json.dumps({str(Path(p).resolve()): "TRUST_FOLDER" for p in trusted})
    )
    env = _base_env(home)
    _node_path(env)
    env.update(
        {
            "GOOGLE_GEMINI_BASE_URL": gemini_base_url.rstrip("/"),
            "GEMINI_API_KEY": "x",
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
    )
    return AgentLaunch(str(_bin("gemini")), ["--acp"], env)


def main(argv: Sequence[str] | None = None) -> int:
    names = list(argv if argv is not None else sys.argv[1:]) or list(DEFAULT_AGENTS)
    for name in names:
        if name in ("-h", "--help"):
            print(__doc__)
            return 0
        if name not in AGENTS:
            print(f"unknown agent {name!r}; known: {', '.join(AGENTS)}", file=sys.stderr)
            return 2
    status = 0
    for name in names:
        started = time.monotonic()
        try:
            install(name, quiet=False)
        except InstallError as exc:
            print(f"FAILED {name}: {exc}", file=sys.stderr)
            status = 1
            continue
        print(f"{name}: {_bin(name)} ({AGENTS[name]}; {time.monotonic() - started:.1f} s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
