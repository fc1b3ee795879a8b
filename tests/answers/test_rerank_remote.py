"""The remote reranker against a real HTTP server on loopback (Cohere/Jina response shape)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from asgiref.sync import async_to_sync

from apps.answers.retrieval.rerank import RemoteReranker


class _Handler(BaseHTTPRequestHandler):
    mode = "ok"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.mode == "error":
            self.send_response(503)
            self.end_headers()
            return
        # Score by how many query words a document shares: deterministic and checkable.
        words = set(body["query"].split())
        results = [
            {"index": i, "relevance_score": len(words & set(doc.split()))}
            for i, doc in enumerate(body["documents"])
        ]
        payload = json.dumps({"results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"mode": "ok"})
    httpd = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", handler
    httpd.shutdown()


def test_remote_scores_reorder_best_first(server: tuple[str, type[_Handler]]) -> None:
    url, _ = server
    reranker = RemoteReranker(base_url=url, model="test-rerank")
    scores = async_to_sync(reranker.rerank)(
        query="annual leave days", passages=["vpn setup", "annual leave is 26 days", "leave"]
    )
    assert scores is not None and [s.index for s in scores] == [1, 2, 0]


def test_remote_failure_keeps_the_fused_order(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.mode = "error"
    reranker = RemoteReranker(base_url=url, model="test-rerank", timeout_s=2)
    assert async_to_sync(reranker.rerank)(query="q", passages=["a", "b"]) is None


def test_unreachable_endpoint_keeps_the_fused_order() -> None:
    reranker = RemoteReranker(base_url="http://127.0.0.1:9/v1", model="x", timeout_s=1)
    assert async_to_sync(reranker.rerank)(query="q", passages=["a"]) is None


def test_base_url_must_be_http() -> None:
    with pytest.raises(ValueError, match="http"):
        RemoteReranker(base_url="file:///etc/passwd", model="x")
