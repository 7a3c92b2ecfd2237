#!/usr/bin/env python3
"""A TCP relay on 127.0.0.1: every connection it accepts is joined to a new connection to --to HOST:PORT.

The database failover tests put one in front of the test PostgreSQL as a host of a multi-host DATABASE_URL
and kill it to lose that "host": its connections break at once and its port refuses new ones, as a database
machine that died would (a killed process's sockets are closed by the kernel). Standard library only.

    tcp-relay.py --to 127.0.0.1:54339 --ready-file FILE    writes the port it listens on to FILE
"""
import argparse
import asyncio
import os


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--to", required=True, help="HOST:PORT to relay to")
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    host, port = arguments.to.rsplit(":", 1)

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 5)
        except (OSError, asyncio.TimeoutError):
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))

    server = await asyncio.start_server(handle, "127.0.0.1", arguments.port)
    temporary = arguments.ready_file + ".tmp"
    with open(temporary, "w") as ready:
        ready.write(str(server.sockets[0].getsockname()[1]))
    os.replace(temporary, arguments.ready_file)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
