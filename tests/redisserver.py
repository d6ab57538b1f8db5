"""A real redis-server (Debian's, installed by scripts/redis.sh) for the
tests: a free port of 127.0.0.1, no persistence, killed afterwards."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """``start()``, ``kill()`` (SIGKILL) and ``start()`` again on the same
    port: what a crash and a restart without persistence look like."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5, socket_connect_timeout=5)

    def start(self) -> "RedisServer":
        exe = shutil.which("redis-server")
        assert exe, "redis-server is not installed: bash scripts/redis.sh"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder), "--loglevel", "warning", "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.client().ping():
                    return self
            except Exception as e:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from e
                time.sleep(0.02)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.kill()


class SlowLink:
    """A TCP hop to ``port`` on 127.0.0.1 that holds every chunk ``delay``
    seconds each way: a Redis across a slow network (its answers come
    after the crawl's last item left). ``url`` points at the hop."""

    def __init__(self, port: int, delay: float) -> None:
        self.target, self.delay = port, delay
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True, name="slow-link").start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:  # closed
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while chunk := src.recv(65536):
                time.sleep(self.delay)
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.server.close()
