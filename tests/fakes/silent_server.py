"""A TCP server on loopback that accepts connections and never answers: a hanging model endpoint."""
from __future__ import annotations

import socket
import threading


class SilentServer:
    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="silent-server", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> SilentServer:
        self._thread.start()
        return self

    def _accept(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            self._held.append(conn)  # read nothing, write nothing, keep it open

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=2)
        for conn in self._held:
            conn.close()
        self._listener.close()
