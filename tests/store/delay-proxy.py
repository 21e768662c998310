#!/usr/bin/env python3
"""delay-proxy.py — a TCP relay that delays every chunk it forwards, in both directions, by
DELAY_MS while FLAG_FILE exists: what `tc netem delay` on the loopback does to a port, for a
kernel without netem (tests/store/netem-latency.sh uses it there).  Each chunk is written
DELAY_MS after it was read, in order, so a request and its answer each pay DELAY_MS once
however many segments they span, as packets behind netem do.

    delay-proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT FLAG_FILE DELAY_MS

LISTEN_PORT 0 takes a free port.  Prints "ready PORT" on stdout once it listens; runs until
killed.
"""
import asyncio
import os
import sys
import time


async def pump(reader, writer, flag, delay_s):
    queue = asyncio.Queue()

    async def send():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.ensure_future(send())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            queue.put_nowait((time.monotonic() + (delay_s if os.path.exists(flag) else 0.0), data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((0.0, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def main():
    listen_port, host, port, flag, delay_ms = sys.argv[1:6]
    delay_s = float(delay_ms) / 1000.0

    async def handle(client_r, client_w):
        try:
            up_r, up_w = await asyncio.open_connection(host, int(port))
        except OSError:
            client_w.close()
            return
        await asyncio.gather(pump(client_r, up_w, flag, delay_s), pump(up_r, client_w, flag, delay_s))

    server = await asyncio.start_server(handle, "127.0.0.1", int(listen_port))
    print("ready %d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
