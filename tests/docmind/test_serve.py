"""`python -m docmind.serve`: a WebSocket message over the transport limit is closed with 1009, never dropped; a
form body goes to the application as it came, without Twisted parsing it on the way."""
from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
import subprocess
import sys
import time
from io import BytesIO
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests
from daphne.http_protocol import WebRequest
from twisted.web.test.requesthelper import DummyChannel

from docmind.serve import TRANSPORT_MAX_MESSAGE_BYTES, BodyAsIsRequest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_port():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "docmind.serve", "-b", "127.0.0.1", "-p", str(port),
                             "tests.fakes.ws_echo_app:app"], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed without a close frame")
        data += chunk
    return data


def _open(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101")
    return sock


def _send_text(sock: socket.socket, payload: bytes) -> None:
    mask = os.urandom(4)
    header = bytes([0x81]) + bytes([0x80 | 127]) + struct.pack("!Q", len(payload)) + mask
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload[:64])) if len(payload) < 64 else None
    if masked is None:  # XOR a large payload quickly: repeat the mask over the whole length
        whole = int.from_bytes(payload, "big") ^ int.from_bytes((mask * (len(payload) // 4 + 1))[:len(payload)], "big")
        masked = whole.to_bytes(len(payload), "big")
    try:
        sock.sendall(header + masked)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may close before reading it all; the close frame is what matters


def _read_frame(sock: socket.socket) -> tuple[int, bytes]:
    first, second = _recv_exact(sock, 2)
    length = second & 0x7F
    if length == 126:
        length = struct.unpack("!H", _recv_exact(sock, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", _recv_exact(sock, 8))[0]
    return first & 0x0F, _recv_exact(sock, length)


def test_a_message_over_the_transport_limit_is_closed_with_1009(server_port):
    sock = _open(server_port)
    try:
        _send_text(sock, b"x" * (TRANSPORT_MAX_MESSAGE_BYTES + 1))
        opcode, payload = _read_frame(sock)
        assert opcode == 0x8  # close
        assert struct.unpack("!H", payload[:2])[0] == 1009
    finally:
        sock.close()


def test_a_message_over_one_mebibyte_still_reaches_the_app(server_port):
    sock = _open(server_port)
    try:
        size = 1024 * 1024 + 10
        _send_text(sock, b"x" * size)
        opcode, payload = _read_frame(sock)
        assert opcode == 0x1 and payload == str(size).encode()
    finally:
        sock.close()


def _received_form(request_class: type[WebRequest]) -> tuple[dict, list[bytes]]:
    """(Twisted's `args`, the bodies handed on) after a multipart POST reaches a request of `request_class`."""
    channel = DummyChannel()
    channel.factory = SimpleNamespace(server=SimpleNamespace(protocol_connected=lambda request: None))
    request = request_class(channel)
    handed_on: list[bytes] = []
    request.process = lambda: handed_on.append(request.content.read())
    body = b'--xyz\r\nContent-Disposition: form-data; name="title"\r\n\r\nhandbook\r\n--xyz--\r\n'
    request.requestHeaders.setRawHeaders(b"content-type", [b"multipart/form-data; boundary=xyz"])
    request.content = BytesIO(body)
    request.content.seek(0, 2)  # as the channel leaves it: at the end of what it wrote
    request.requestReceived(b"POST", b"/api/kb/documents/", b"HTTP/1.1")
    return request.args, handed_on


def test_twisted_leaves_a_form_body_unparsed_and_hands_it_on_whole():
    body = b'--xyz\r\nContent-Disposition: form-data; name="title"\r\n\r\nhandbook\r\n--xyz--\r\n'
    assert _received_form(BodyAsIsRequest) == ({}, [body])
    # daphne's own request parses it into `args` first (the work this server skips)
    assert _received_form(WebRequest) == ({b"title": [b"handbook"]}, [body])


def test_an_upload_reaches_the_application_byte_for_byte(server_port):
    data = os.urandom(3 * 1024 * 1024)
    response = requests.post(f"http://127.0.0.1:{server_port}/upload", files={"file": ("a.bin", data)},
                             data={"title": "x"}, timeout=30)
    request = response.request
    assert response.status_code == 200
    assert response.text == hashlib.sha256(request.body).hexdigest()
