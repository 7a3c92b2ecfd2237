#!/usr/bin/env python3
"""A real SMTP server that keeps what it receives: aiosmtpd (PyPI, pinned by scripts/test-tools.sh, installed
into var/venv) on the loopback interface, with STARTTLS or implicit TLS and AUTH as a mail provider would
offer them. The Swift tests (MailTransportTests) start it against MAIL_TRANSPORT=smtp; benchmarks use it as
the sink a server's mail goes to (bench/README.md).

    var/venv/bin/python scripts/smtp-sink.py --port 2525 --tls starttls --cert cert.pem --key key.pem \\
        --user d4h --password secret --out var/smtp-sink

Each accepted mail is written to OUT as N.json (written whole, then renamed: a reader never sees half of
one): the envelope, the authenticated user, whether the session was over TLS, and the message's bytes in
base64 as they arrived after DATA (dot-unstuffed, as the protocol defines them). With --transcript, every
command's verb (never its arguments, which hold addresses and credentials) is appended to that file as
"VERB tls" or "VERB plain", so a test can tell what a client sent before TLS and whether it sent AUTH at all.

--port 0 lets the system choose; the port is printed as "listening on PORT" and, with --ready-file, written
to that file once the server accepts connections.
"""

import argparse
import asyncio
import base64
import itertools
import json
import os
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2525, help="port (0: the system chooses; default 2525)")
    parser.add_argument("--tls", choices=["starttls", "implicit", "none"], default="starttls",
                        help="starttls: offer STARTTLS; implicit: TLS from the first byte; none: no TLS (default starttls)")
    parser.add_argument("--cert", help="PEM certificate (required unless --tls none)")
    parser.add_argument("--key", help="PEM private key of --cert")
    parser.add_argument("--user", help="require AUTH as this user (PLAIN and LOGIN offered, over TLS only)")
    parser.add_argument("--password", help="the password of --user")
    parser.add_argument("--mechanisms", default="PLAIN,LOGIN", help="AUTH mechanisms to offer (default PLAIN,LOGIN)")
    parser.add_argument("--rcpt-reply", help='answer every RCPT TO with this reply instead of accepting it, e.g. "451 4.3.0 Try later"')
    parser.add_argument("--out", help="directory the mails are written to (default: kept nowhere)")
    parser.add_argument("--transcript", help="file each command's verb is appended to")
    parser.add_argument("--ready-file", help="file the port is written to once the server listens")
    arguments = parser.parse_args()
    if arguments.tls != "none" and not (arguments.cert and arguments.key):
        parser.error("--cert and --key are required unless --tls none")
    if bool(arguments.user) != bool(arguments.password):
        parser.error("--user and --password go together")
    return arguments


class Sink:
    """The aiosmtpd handler: refuses RCPT when told to, writes each mail to a file."""

    def __init__(self, out, rcpt_reply):
        self.out = out
        self.rcpt_reply = rcpt_reply
        self.numbers = itertools.count(1)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.rcpt_reply:
            return self.rcpt_reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.out:
            number = next(self.numbers)
            record = {
                "mailFrom": envelope.mail_from,
                "mailOptions": envelope.mail_options,
                "recipients": envelope.rcpt_tos,
                "user": session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
                "tls": session.ssl is not None or server.implicit_tls,
                "content": base64.b64encode(envelope.original_content).decode(),
            }
            partial = os.path.join(self.out, f"{number}.json.partial")
            with open(partial, "w") as file:
                json.dump(record, file)
            os.rename(partial, os.path.join(self.out, f"{number}.json"))
        return "250 OK queued"


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login == user.encode() and auth_data.password == password.encode()
        # 535 5.7.8, RFC 4954's answer to a wrong password.
        if ok:
            return AuthResult(success=True, handled=False, auth_data=auth_data)
        return AuthResult(success=False, handled=False, message="535 5.7.8 Authentication credentials invalid")
    return check


class RecordingSMTP(SMTP):
    """aiosmtpd's SMTP, appending each command's verb (and whether TLS was up) to the transcript."""

    def __init__(self, handler, transcript, implicit_tls, **options):
        super().__init__(handler, **options)
        self.implicit_tls = implicit_tls
        if transcript:
            for verb, method in list(self._smtp_methods.items()):
                self._smtp_methods[verb] = self._recorded(verb, method, transcript)

    def _recorded(self, verb, method, transcript):
        async def recorded(arg):
            with open(transcript, "a") as file:
                file.write(f"{verb} {'tls' if self.implicit_tls or self._tls_protocol else 'plain'}\n")
            return await method(arg)
        return recorded


async def serve(arguments):
    context = None
    if arguments.tls != "none":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(arguments.cert, arguments.key)
    if arguments.out:
        os.makedirs(arguments.out, exist_ok=True)
    handler = Sink(arguments.out, arguments.rcpt_reply)
    implicit = arguments.tls == "implicit"
    offered = {name.strip().upper() for name in arguments.mechanisms.split(",") if name.strip()}
    options = dict(
        hostname="smtp-sink.localhost",
        enable_SMTPUTF8=True,
        timeout=60,
        tls_context=context if arguments.tls == "starttls" else None,
        # Implicit TLS is TLS too, which aiosmtpd only knows of STARTTLS.
        auth_require_tls=not implicit,
        auth_exclude_mechanism=[name for name in ("PLAIN", "LOGIN") if name not in offered],
    )
    if arguments.user:
        options.update(auth_required=True, authenticator=authenticator(arguments.user, arguments.password))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: RecordingSMTP(handler, arguments.transcript, implicit, loop=loop, **options),
        host=arguments.host, port=arguments.port, ssl=context if implicit else None)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on {port}", flush=True)
    if arguments.ready_file:
        partial = arguments.ready_file + ".partial"
        with open(partial, "w") as file:
            file.write(f"{port}\n")
        os.rename(partial, arguments.ready_file)
    async with server:
        await server.serve_forever()


def main():
    arguments = parse_arguments()
    try:
        asyncio.run(serve(arguments))
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
