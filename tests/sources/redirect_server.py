"""A real HTTP server that redirects: `GET /to?url=U` answers 302 with `Location: U`.

Started by the web guard's tests as its own process (python redirect_server.py PORT); it
imports nothing from the project."""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Redirects(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        target = parse_qs(parts.query).get("url", [""])[0]
        if parts.path != "/to" or not target:
            self.send_error(404)
            return
        self.send_response(302)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Redirects).serve_forever()
