#!/usr/bin/env python3
"""A TCP proxy on loopback that adds object-storage latency to every HTTP
request: it holds the first bytes of each request for DELAY ms before
passing them on, so one request/response round trip costs DELAY more (a body
sent in several chunks is delayed once, not per chunk).

    python bench/latency_proxy.py --listen 127.0.0.1:9100 --upstream 127.0.0.1:9000 --delay-ms 25

Prints "ready PORT" once it listens, then serves until killed. bench/s3_latency.py
puts it between RockLake and the S3 emulator. With LATENCY_PROXY_LOG=FILE it
appends, for each request, its start time, the ms until the first bytes of its
response (the delay included) and its request line (method and path) to FILE,
to count the requests an operation makes and time them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

LOG = os.environ.get("LATENCY_PROXY_LOG")


async def pump_requests(reader, writer, delay: float, state: dict):
    """Client to server: the first chunk of each new request waits DELAY."""
    while data := await reader.read(65536):
        if state["between_requests"]:
            state["between_requests"] = False
            state["started"] = time.time()
            state["line"] = data.split(b"\r\n", 1)[0].decode("latin-1")
            await asyncio.sleep(delay)
        writer.write(data)
        await writer.drain()
    writer.close()


async def pump_responses(reader, writer, state: dict):
    """Server to client: any response bytes end the request in flight."""
    while data := await reader.read(65536):
        if LOG and not state["between_requests"]:
            took = (time.time() - state["started"]) * 1000
            with open(LOG, "a") as log:
                log.write(f"{state['started']:.6f} {took:.1f} {state['line']}\n")
        state["between_requests"] = True
        writer.write(data)
        await writer.drain()
    writer.close()


async def serve(listen_host: str, listen_port: int, upstream: tuple[str, int], delay: float):
    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(*upstream)
        except OSError:
            client_writer.close()
            return
        state = {"between_requests": True}
        try:
            await asyncio.gather(
                pump_requests(client_reader, server_writer, delay, state),
                pump_responses(server_reader, client_writer, state))
        except (ConnectionError, OSError):
            pass
        finally:
            client_writer.close()
            server_writer.close()

    server = await asyncio.start_server(handle, listen_host, listen_port)
    port = server.sockets[0].getsockname()[1]
    print(f"ready {port}", flush=True)
    async with server:
        await server.serve_forever()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listen", default="127.0.0.1:0")
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the S3 endpoint")
    ap.add_argument("--delay-ms", type=float, default=25)
    args = ap.parse_args()
    host, port = args.listen.rsplit(":", 1)
    up_host, up_port = args.upstream.rsplit(":", 1)
    try:
        asyncio.run(serve(host, int(port), (up_host, int(up_port)), args.delay_ms / 1000))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
