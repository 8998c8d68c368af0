"""Response-cache lookups and ``openai`` backend overhead (targets: > 50,000 lookups/s, < 5 ms).

Usage: python timings/bench_backends.py [--entries 2000] [--lookups 100000] [--requests 2000]
       python timings/bench_backends.py --smoke   (50 entries, 500 lookups, 16 requests: seconds)

1. Cache: ``--entries`` answers are stored in a temporary ``ResponseCache`` (not timed), then
   ``ResponseCache.get`` is timed on ``--lookups`` existing keys (all hits, OS file cache warm).
   ``resolve`` on the same requests (key hashing + lookups, the path a rerun takes) is timed too.
2. ``openai`` backend: a trivial HTTP server in a subprocess answers every chat completion
   instantly with a fixed body. ``--requests`` text requests go through
   ``OpenAIChatBackend.generate`` in batches of 8, one in flight, and, as the baseline, the same
   JSON bodies (``openai_wire.chat_body``, what the backend sends) are POSTed with a bare
   ``httpx2.AsyncClient`` over one keep-alive connection. The backend's own overhead per
   request = backend time - baseline time (both per request).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from halluscope.models import Request, Response, ResponseCache, cache_key, user_message
from halluscope.models.cache import key_payload
from halluscope.models.openai_backend import OpenAIChatBackend
from halluscope.models.openai_wire import chat_body

BODY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "bench",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "A cat sitting on a mat."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
    }
).encode()
RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(BODY)).encode()
    + b"\r\n\r\n"
    + BODY
)


def serve(port: int) -> None:
    """The trivial server: HTTP/1.1 keep-alive, a fixed 200 answer to every request."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                writer.write(RESPONSE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port)
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def requests_for(n: int) -> list[Request]:
    return [
        Request(
            request_id=f"bench-{i}",
            image_id=f"img{i}",
            messages=(user_message(f"Describe image number {i}."),),
            params={"max_new_tokens": 64, "temperature": 0.0, "seed": 0},
            task="caption",
        )
        for i in range(n)
    ]


class _Refuse:
    """A backend that must not be called (every request is a cache hit)."""

    def __init__(self, identity: dict) -> None:
        self.identity = identity

    def generate(self, batch: list[Request]) -> list[Response]:
        raise AssertionError("every request should be a cache hit")


def bench_cache(entries: int, lookups: int) -> None:
    requests = requests_for(entries)
    identity = {"backend": "openai", "name": "bench", "base_url": "http://x/v1", "revision": ""}
    with tempfile.TemporaryDirectory() as root:
        cache = ResponseCache(root)
        keys = []
        for request in requests:
            payload = key_payload(identity, request, "v1")  # stored beside it, as resolve does
            key = cache_key(identity, request, "v1")
            answer = Response(
                request.request_id, f"caption {request.request_id}", "bench", identity
            )
            cache.put(key, answer, payload)
            keys.append(key)
        order = [keys[i % len(keys)] for i in range(lookups)]
        start = time.perf_counter()
        for key in order:
            cache.get(key)
        elapsed = time.perf_counter() - start
        print(
            f"cache get: {lookups:,} lookups over {entries:,} entries in {elapsed:.3f} s = "
            f"{lookups / elapsed:,.0f} lookups/s (target > 50,000/s)"
        )

        start = time.perf_counter()
        ResponseCache(root).resolve(_Refuse(identity), requests, "v1")
        elapsed = time.perf_counter() - start
        print(
            f"cache resolve (all hits, incl. key hashing): {entries:,} requests in "
            f"{elapsed:.3f} s = {entries / elapsed:,.0f} requests/s"
        )


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bench_openai(n: int) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        base_url = f"http://127.0.0.1:{port}/v1"
        requests = requests_for(n)
        backend = OpenAIChatBackend(
            "bench", base_url, api_key_env=None, max_in_flight=1, max_retries=0
        )
        backend.generate(requests[:8])  # warm-up: client, connection, imports
        start = time.perf_counter()
        for i in range(0, n, 8):
            answers = backend.generate(requests[i : i + 8])
            assert answers[0].text == "A cat sitting on a mat."
        per_backend = (time.perf_counter() - start) / n
        bodies = [chat_body(r, backend.model, backend.json_schema) for r in requests]
        backend.close()

        async def baseline() -> float:
            import httpx2

            async with httpx2.AsyncClient(base_url=base_url, trust_env=False) as client:
                await client.post("/chat/completions", json=bodies[0])
                start = time.perf_counter()
                for body in bodies:
                    answer = await client.post("/chat/completions", json=body)
                    answer.json()
                return (time.perf_counter() - start) / n

        per_raw = asyncio.run(baseline())

        wide = OpenAIChatBackend("bench", base_url, api_key_env=None, max_in_flight=8)
        wide.generate(requests[:8])
        start = time.perf_counter()
        for i in range(0, n, 64):
            wide.generate(requests[i : i + 64])
        per_wide = (time.perf_counter() - start) / n
        wide.close()
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=10)
    print(
        f"openai backend: {per_backend * 1000:.3f} ms/request (1 in flight, batches of 8); "
        f"bare httpx2 POST: {per_raw * 1000:.3f} ms/request; backend overhead: "
        f"{(per_backend - per_raw) * 1000:.3f} ms/request (target < 5 ms)"
    )
    print(
        f"openai backend, 8 in flight, batches of 64: {per_wide * 1000:.3f} ms/request = "
        f"{1 / per_wide:,.0f} requests/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--lookups", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--smoke", action="store_true", help="a few seconds: 50 entries, 500 lookups, 16 requests"
    )
    args = parser.parse_args()
    if args.smoke:
        args.entries, args.lookups, args.requests = 50, 500, 16
    if args.serve:
        serve(args.serve)
        return
    bench_cache(args.entries, args.lookups)
    bench_openai(args.requests)


if __name__ == "__main__":
    main()
