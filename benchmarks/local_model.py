"""Run a benchmark or a management command with a real local chat model configured.

Starts the model server the test suite uses (`tests/llm_server.py`: SmolLM2-135M-Instruct,
GGUF, on xllamacpp with 2 threads), points the platform at it through its ordinary settings
(OPENAI_BASE_URL, RAG_CHAT_MODEL, RAG_COMPOSER=openai, or extractive with --composer) and
runs the given command in this process, then stops the server:

    python benchmarks/local_model.py manage.py evaluate_conversations --dataset ... --limit 40
    python benchmarks/local_model.py benchmarks/answer_shape.py --collection Guide

A small model on a shared CPU is slow, so two limits are raised for the measurement only: the
follow-up rewrite gets --rewrite-timeout seconds (default 30, not the 4-second default), and
the first token --first-token seconds (default 120, not 15: a full context takes that long
to read on two busy cores). Otherwise every call would time out into the offline fallback
and the figures would not be the model's.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rewrite-timeout", type=float, default=30.0, help="at most 60")
    parser.add_argument("--first-token", type=float, default=120.0)
    parser.add_argument("--chat-timeout", type=float, default=300.0)
    parser.add_argument(
        "--composer",
        default="openai",
        choices=["openai", "extractive"],
        help="extractive: the model only rewrites follow-ups (and suggests follow-ups)",
    )
    parser.add_argument("script", help="manage.py or a benchmark script")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from tests.llm_server import local_llm_server, missing_requirements

    reason = missing_requirements()
    if reason:
        print(f"cannot start the local model: {reason}", file=sys.stderr)
        return 2
    with local_llm_server(start_timeout_s=120.0) as server:
        os.environ.update(
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="local",
            RAG_CHAT_MODEL=server.model,
            RAG_COMPOSER=args.composer,
            RAG_REWRITE_TIMEOUT_S=str(args.rewrite_timeout),
            RAG_CHAT_TIMEOUT_S=str(args.chat_timeout),
            RAG_CHAT_FIRST_TOKEN_TIMEOUT_S=str(args.first_token),
        )
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
        print(f"model {server.model} at {server.base_url}", file=sys.stderr)
        sys.argv = [str(REPO / args.script), *args.arguments]
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as exit_:
            return int(exit_.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
