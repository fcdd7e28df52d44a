"""Real ``mosquitto`` and ``nats-server`` processes for tests, on free loopback ports.

Each broker runs from a temporary directory (its config, password file and certificates
live there), is started and stopped by the test, and can be restarted on the SAME port
mid-test, which is how a broker restart looks to a client. ``scripts/test`` installs both
binaries; a test that needs one fails, saying how to install it, when it is missing.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .tls import write_self_signed

HOST = "127.0.0.1"
_START_TIMEOUT = 15.0


def free_port() -> int:
    """A TCP port nobody listens on right now (the broker binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((HOST, port)) == 0


def binary(name: str) -> str:
    """The path of a broker binary, or fail the test saying how to get it (never a skip:
    a skipped broker test would hide the gap it exists to cover)."""
    for candidate in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail(f"{name} is not installed: run scripts/test (or apt-get install {name})")


@dataclass
class BrokerProcess:
    """One broker process; ``start``/``stop``/``restart`` keep the same port."""

    workdir: Path
    port: int = 0

    def __post_init__(self) -> None:
        self.port = self.port or free_port()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = self.workdir / f"{type(self).__name__.lower()}.log"

    def command(self) -> list[str]:
        raise NotImplementedError

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        if self.running:
            return
        with self._log.open("ab") as log:
            self._proc = subprocess.Popen(
                self.command(), cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + _START_TIMEOUT
        while not _port_open(self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"{self.command()[0]} did not start on port {self.port}:\n{self.log_text()}"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        # The port must be free before a restart binds it again.
        deadline = time.monotonic() + 10
        while _port_open(self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def restart(self) -> None:
        """Stop and start again on the same port, as a broker restart does."""
        self.stop()
        self.start()

    def log_text(self) -> str:
        return self._log.read_text(errors="replace") if self._log.exists() else ""


@dataclass
class Mosquitto(BrokerProcess):
    """mosquitto on 127.0.0.1; anonymous unless ``user`` is set (then a password file)."""

    user: str | None = None
    password: str | None = None

    @property
    def url(self) -> str:
        return f"mqtt://{HOST}:{self.port}"

    def command(self) -> list[str]:
        conf = self.workdir / "mosquitto.conf"
        lines = [
            # Run as whoever runs the tests: started as root, mosquitto would otherwise
            # switch to its own user, which cannot read the password file in a temp dir.
            f"user {pwd.getpwuid(os.geteuid()).pw_name}",
            f"listener {self.port} {HOST}",
            "persistence false",
            "log_dest stdout",
            "log_type error",
            "log_type warning",
        ]
        if self.user:
            passwd = self.workdir / "passwd"
            passwd.write_text("")
            subprocess.run(
                [binary("mosquitto_passwd"), "-b", str(passwd), self.user, self.password or ""],
                check=True,
                capture_output=True,
            )
            passwd.chmod(0o600)
            lines += ["allow_anonymous false", f"password_file {passwd}"]
        else:
            lines.append("allow_anonymous true")
        conf.write_text("\n".join(lines) + "\n")
        return [binary("mosquitto"), "-c", str(conf)]


@dataclass
class NatsServer(BrokerProcess):
    """nats-server on 127.0.0.1, with a token, a user and password, or neither; TLS with
    a self-signed certificate when ``tls`` is set; with JetStream (stored in its work
    folder, so it outlives a restart) when ``jetstream`` is set."""

    token: str | None = None
    user: str | None = None
    password: str | None = None
    tls: bool = False
    jetstream: bool = False

    @property
    def url(self) -> str:
        return f"{'tls' if self.tls else 'nats'}://{HOST}:{self.port}"

    def command(self) -> list[str]:
        cmd = [binary("nats-server"), "-a", HOST, "-p", str(self.port)]
        if self.token:
            cmd += ["--auth", self.token]
        elif self.user:
            cmd += ["--user", self.user, "--pass", self.password or ""]
        if self.tls:
            cert, key = write_self_signed(self.workdir, "broker.local")
            cmd += ["--tls", "--tlscert", str(cert), "--tlskey", str(key)]
        if self.jetstream:
            cmd += ["-js", "-sd", str(self.workdir / "jetstream")]
        return cmd


@contextlib.contextmanager
def running(broker: BrokerProcess) -> Generator[BrokerProcess]:
    """Start ``broker`` for the block and always stop it after."""
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
