"""A real OpenSSH server on a loopback port, for the tests of `symposium-tui attach`.

Its own throwaway host key, client key, `sshd_config` and `ssh_config`; nothing of the system's
sshd or of the user's `~/.ssh` is used. It runs as the current user (as root it needs the
privilege-separation directory, made here when missing). Every "host" is an alias in the
generated `ssh_config` that reaches this one server and sets `SYMPOSIUM_RUNTIME_DIR` (through
`SetEnv`, accepted by the server), so each alias is a separate bridge reached only through ssh.
"""

from __future__ import annotations

import getpass
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def sshd_available() -> bool:
    return os.access(SSHD, os.X_OK) and shutil.which("ssh") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class FakeHost:
    """One "machine": its own runtime and config dirs, reached through the ssh alias `name`."""

    name: str
    root: Path

    @property
    def runtime_dir(self) -> Path:
        return self.root / "run"

    @property
    def config_dir(self) -> Path:
        return self.root / "config"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["SYMPOSIUM_RUNTIME_DIR"] = str(self.runtime_dir)
        env["SYMPOSIUM_CONFIG_DIR"] = str(self.config_dir)
        env["SYMPOSIUM_HOST_NAME"] = self.name
        return env


@dataclass
class Sshd:
    dir: Path
    port: int
    proc: subprocess.Popen[bytes]
    hosts: dict[str, FakeHost] = field(default_factory=dict)

    @property
    def config(self) -> Path:
        return self.dir / "ssh_config"

    @property
    def ssh(self) -> str:
        """The `--ssh` command for `symposium-tui attach`."""
        return shlex.join(["ssh", "-F", str(self.config)])

    @property
    def remote_command(self) -> str:
        return shlex.join([sys.executable, "-m", "symposium_tui", "link"])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_sshd(base: Path, host_names: list[str]) -> Sshd:
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o700)
    host_key = base / "host_key"
    client_key = base / "client_key"
    for key in (host_key, client_key):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
            check=True,
            stdin=subprocess.DEVNULL,
        )
    (base / "authorized_keys").write_text(
        (client_key.with_suffix(".pub")).read_text(), encoding="utf-8"
    )
    port = _free_port()
    user = getpass.getuser()
    (base / "sshd_config").write_text(
        "\n".join(
            [
                f"ListenAddress 127.0.0.1:{port}",
                f"HostKey {host_key}",
                f"PidFile {base / 'sshd.pid'}",
                f"AuthorizedKeysFile {base / 'authorized_keys'}",
                f"AllowUsers {user}",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                "AcceptEnv SYMPOSIUM_*",
                "X11Forwarding no",
                "PrintMotd no",
                "LogLevel ERROR",
                "",
            ]
        ),
        encoding="utf-8",
    )
    host_pub = host_key.with_suffix(".pub").read_text().split()
    (base / "known_hosts").write_text(
        f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n", encoding="utf-8"
    )
    hosts = {name: FakeHost(name, base / "hosts" / name) for name in host_names}
    lines: list[str] = []
    for host in hosts.values():
        host.runtime_dir.mkdir(parents=True, exist_ok=True)
        host.config_dir.mkdir(parents=True, exist_ok=True)
        lines += [
            f"Host {host.name}",
            f"  SetEnv SYMPOSIUM_RUNTIME_DIR={host.runtime_dir} SYMPOSIUM_HOST_NAME={host.name}",
        ]
    lines += [
        "Host *",
        "  HostName 127.0.0.1",
        f"  Port {port}",
        f"  User {user}",
        f"  IdentityFile {client_key}",
        "  IdentitiesOnly yes",
        f"  UserKnownHostsFile {base / 'known_hosts'}",
        "  StrictHostKeyChecking yes",
        "  GlobalKnownHostsFile /dev/null",
        "  LogLevel ERROR",
        "",
    ]
    (base / "ssh_config").write_text("\n".join(lines), encoding="utf-8")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(base / "sshd_config")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=open(base / "sshd.log", "wb"),  # noqa: SIM115
    )
    server = Sshd(base, port, proc, hosts)
    # Ready when it answers a real login (the state, not a delay).
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            raise RuntimeError("sshd exited: " + (base / "sshd.log").read_text(errors="replace"))
        check = subprocess.run(
            ["ssh", "-F", str(base / "ssh_config"), "-o", "BatchMode=yes", host_names[0], "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
        if check.returncode == 0:
            return server
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(
                f"ssh to the test sshd failed: {check.stderr.decode(errors='replace')}\n"
                + (base / "sshd.log").read_text(errors="replace")
            )
        time.sleep(0.05)  # polling for a server that is starting, not asserting on time
