"""The processes the browser tests drive: Home Assistant, the OpenNVR simulator, Ollama's fake.

Each runs as its own process, as a homeowner's would: Home Assistant with ``hass -c`` on the
configuration ``scripts/develop`` uses (``scripts/ha_config.py``), the demo NVR with
``python -m tests.fakes.opennvr_sim`` as ``scripts/develop`` starts it, and the Ollama-API
fake with ``python -m tests.fakes.ollama_server``. Their output goes to log files in the
temporary directory, named in every failure so a red run says where to look.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "scripts"))
from ha_config import lay_out  # noqa: E402  (scripts/ha_config.py: scripts/develop's layout)

PR_SET_PDEATHSIG = 1
#: The owner the tests onboard, log in as and name as an approver.
OWNER = {"name": "Dana Owner", "username": "dana", "password": "correct-horse-42", "language": "en"}


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, be sent SIGTERM when the test process dies, so
    a killed or timed-out run leaves no Home Assistant behind."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class ServiceError(RuntimeError):
    """A service did not start or answered wrongly; the message names its log."""


@dataclass
class Process:
    """A child process with its output in ``log``; stopped with SIGTERM, then SIGKILL."""

    name: str
    argv: list[str]
    log: Path
    cwd: Path = ROOT
    popen: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def start(self, env: dict[str, str] | None = None) -> None:
        with self.log.open("wb") as out:
            self.popen = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=_die_with_parent,  # noqa: PLW1509  (no threads run yet here)
            )

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.terminate()
        try:
            self.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=10)


def wait_http(process: Process, url: str, timeout: float) -> None:
    """Wait until ``url`` answers (any HTTP status) while ``process`` lives."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process.alive():
            raise ServiceError(f"{process.name} exited; its log ({process.log}):\n{process.tail()}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.3)
    raise ServiceError(
        f"{process.name} did not answer {url} within {timeout:.0f} s; log {process.log}:\n"
        f"{process.tail()}"
    )


@dataclass
class Simulator:
    """The demo OpenNVR, with scripted alerts fast enough for a test to see one."""

    process: Process
    port: int
    token: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, workdir: Path, alert_rate: float) -> Simulator:
        from tests.fakes.opennvr_sim import DEMO_TOKEN

        port = free_port()
        argv = [sys.executable, "-m", "tests.fakes.opennvr_sim", "--port", str(port)]
        argv += ["--alert-rate", str(alert_rate), "--activity-every", "0"]
        process = Process("the OpenNVR simulator", argv, workdir / "opennvr_sim.log")
        process.start()
        wait_http(process, f"http://127.0.0.1:{port}/api/v1/health", 30)
        return cls(process, port, DEMO_TOKEN)


@dataclass
class Ollama:
    """The Ollama-API fake with its default models (one that sees pictures, two that do
    not)."""

    process: Process
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, workdir: Path) -> Ollama:
        port = free_port()
        argv = [sys.executable, "-m", "tests.fakes.ollama_server", "--port", str(port)]
        process = Process("the Ollama fake", argv, workdir / "ollama.log")
        process.start()
        wait_http(process, f"http://127.0.0.1:{port}/api/version", 30)
        return cls(process, port)


@dataclass
class HomeAssistant:
    """A real Home Assistant (``hass -c``) on ``scripts/develop``'s configuration."""

    process: Process
    port: int
    config_dir: Path
    access_token: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, workdir: Path, timeout: float = 240) -> HomeAssistant:
        port = free_port()
        config_dir = workdir / "config"
        lay_out(config_dir)
        argv = [str(VENV_BIN / "hass"), "-c", str(config_dir)]
        process = Process("Home Assistant", argv, workdir / "home-assistant.out")
        # SETUP_PORT, not an http: block in YAML (deprecated; it opens a migration dialog).
        process.start(env={**os.environ, "SETUP_PORT": str(port)})
        home = cls(process, port, config_dir)
        # /api/onboarding answers once the http server is up; the frontend follows.
        wait_http(process, f"{home.url}/api/onboarding", timeout)
        return home

    def tail(self) -> str:
        return self.process.tail()

    # ── HTTP ─────────────────────────────────────────────────────────────

    def request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        form: dict[str, str] | None = None,
        auth: bool = True,
    ) -> Any:
        """One call to Home Assistant's HTTP API; raises with the answer on a non-2xx."""
        headers: dict[str, str] = {}
        data: bytes | None = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if auth and self.access_token:
            headers["Authorization"] = f"Bearer {self.access_token}"
        req = urllib.request.Request(f"{self.url}{path}", data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=60) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            raise ServiceError(f"{method} {path}: HTTP {err.code}: {err.read()[:500]!r}") from err
        with contextlib.suppress(ValueError):
            return json.loads(raw)
        return raw.decode(errors="replace")

    # ── onboarding ───────────────────────────────────────────────────────

    def onboard(self) -> None:
        """Onboarding through its HTTP API, every step a new user's browser takes: the
        owner, the home's core configuration, analytics, and the integration step."""
        client_id = f"{self.url}/"
        created = self.request(
            "POST", "/api/onboarding/users", {"client_id": client_id, **OWNER}, auth=False
        )
        tokens = self.request(
            "POST",
            "/auth/token",
            form={
                "grant_type": "authorization_code",
                "code": created["auth_code"],
                "client_id": client_id,
            },
            auth=False,
        )
        self.access_token = tokens["access_token"]
        self.request("POST", "/api/onboarding/core_config", {})
        self.request("POST", "/api/onboarding/analytics", {})
        self.request(
            "POST",
            "/api/onboarding/integration",
            {"client_id": client_id, "redirect_uri": f"{client_id}?auth_callback=1"},
        )
        left = [step for step in self.request("GET", "/api/onboarding") if not step["done"]]
        if left:
            raise ServiceError(f"onboarding steps left undone: {left}")

    def entries(self, domain: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.request(
            "GET", f"/api/config/config_entries/entry?domain={domain}"
        )
        return found

    def state(self, entity_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.request("GET", f"/api/states/{entity_id}")
        return found

    def template(self, template: str) -> str:
        return str(self.request("POST", "/api/template", {"template": template}))


@dataclass
class Stack:
    """What the session runs: Home Assistant, the demo NVR, the Ollama fake."""

    ha: HomeAssistant
    sim: Simulator
    ollama: Ollama
    workdir: Path
