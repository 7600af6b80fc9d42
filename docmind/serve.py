"""`python -m docmind.serve …`: daphne (same arguments) with the WebSocket transport DocMind expects.

Daphne's WebSocket layer (autobahn) answers a message over its size limit by dropping the TCP
connection: the client sees a reset, no close code, no reason. Here
- an over-limit message is refused with a close frame, code 1009 (message too big);
- the transport's limit is a multiple of the chat consumer's own (chat.consumers.MAX_FRAME_BYTES),
  so a frame a little over that still reaches the consumer, which answers it with an error event
  before closing with 1009; only far larger frames are cut at the transport, still with 1009.
Explicit `--websocket-max-message-size` / `--websocket-max-frame-size` arguments win.

Twisted's HTTP request parses every multipart or URL-encoded POST body into its own `args` before daphne
sees the request, on the one thread that serves every connection; daphne never reads `args` (the body goes
to Django as it came). Here that parse is off, so an upload costs the event loop little more than its bytes:
the parse (the email package, a regular expression compiled for each body's boundary) grew with the file, and
a 14 MB upload cost ~0.6 s of CPU during which every other client waited, chat streams included. Nor does
Twisted format its own access-log line for every request when daphne sends Twisted's log nowhere (verbosity
0 or 1, the default): daphne writes the access log operators read.

On SIGTERM/SIGINT the process stops its work and exits within docmind.shutdown.GRACE_SECONDS.
"""
from __future__ import annotations

import sys
from typing import Any

from daphne.cli import CommandLineInterface
from daphne.http_protocol import WebRequest
from daphne.server import Server

from docmind import shutdown

# Four times the consumer's 1 MiB: what the transport buffers before a message reaches the app.
TRANSPORT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class BodyAsIsRequest(WebRequest):
    """Daphne's request without Twisted's parse of a form body into `args`, which nothing reads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "parsePOSTFormSubmission": False})


def _no_access_line(request: Any) -> None:
    """Twisted's access-log line, not written."""


class DocMindServer(Server):
    """Daphne's server with a WebSocket factory that closes (1009) instead of dropping the connection, and HTTP
    requests whose form bodies Twisted leaves unparsed."""

    @property
    def http_factory(self) -> Any:
        return self._http_factory

    @http_factory.setter
    def http_factory(self, factory: Any) -> None:
        # Daphne's factory sets its own request class on every connection it builds; this one replaces it.
        build = factory.buildProtocol

        def build_protocol(address: Any) -> Any:
            protocol = build(address)
            if protocol is not None:
                protocol.requestFactory = BodyAsIsRequest
            return protocol

        factory.buildProtocol = build_protocol
        if self.verbosity <= 1:  # daphne has sent Twisted's log nowhere
            factory.log = _no_access_line
        self._http_factory = factory

    @property
    def ws_factory(self) -> Any:
        return self._ws_factory

    @ws_factory.setter
    def ws_factory(self, factory: Any) -> None:
        # Daphne builds the factory in `run()` and then sets only the options it knows; an option it
        # leaves unset (None) keeps this value.
        factory.setProtocolOptions(failByDrop=False)
        self._ws_factory = factory


class DocMindCommandLine(CommandLineInterface):
    server_class = DocMindServer

    def run(self, args: list[str]) -> None:
        # argparse keeps the last occurrence, so the operator's own limits override these defaults.
        defaults = ["--websocket-max-message-size", str(TRANSPORT_MAX_MESSAGE_BYTES),
                    "--websocket-max-frame-size", str(TRANSPORT_MAX_MESSAGE_BYTES)]
        # order: daphne.server installs the asyncio reactor on import; taken here, after it, never the default one
        from twisted.internet import reactor

        # Before daphne's own shutdown work: running turns are cancelled and the exit is bounded.
        reactor.addSystemEventTrigger("before", "shutdown", shutdown.begin)
        super().run(defaults + list(args))


def main(argv: list[str] | None = None) -> None:
    DocMindCommandLine().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
