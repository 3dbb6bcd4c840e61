#!/usr/bin/env python3
"""An HTTPS front for reel's `verify --url https://…` test: a throw-away CA and a
`localhost` certificate (made by http_tls_upstream.make_certs), requests that must carry
`Authorization: Bearer <TOKEN>` (else 401), each forwarded to an http:// backend and its
answer streamed back.

    python tls_front.py PORT CA_PEM BACKEND_URL TOKEN    -> https://localhost:PORT/…

Writes the CA certificate to CA_PEM before it listens, then prints `listening`. Every
request's headers are appended as one JSON line to $TLS_FRONT_LOG when set.
"""
import http.client
import json
import os
import ssl
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_tls_upstream  # noqa: E402

HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}


class Front(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    backend = None
    token = None

    def log_message(self, *args):
        pass

    def forward(self):
        log = os.environ.get("TLS_FRONT_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path,
                                    "headers": {k.lower(): v for k, v in self.headers.items()}}) + "\n")
        body = self.rfile.read(int(self.headers.get("content-length") or "0"))
        if self.headers.get("authorization") != f"Bearer {self.token}":
            self.send_response(401)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        conn = http.client.HTTPConnection(self.backend.hostname, self.backend.port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        conn.request(self.command, self.path, body, headers)
        r = conn.getresponse()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        while True:
            chunk = r.read1(65536)
            if not chunk:
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    do_GET = do_POST = do_DELETE = forward


def main() -> int:
    port, ca_path, backend, token = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    chain = http_tls_upstream.make_certs(ca_path)
    Front.backend = urllib.parse.urlsplit(backend)
    Front.token = token
    server = ThreadingHTTPServer(("127.0.0.1", port), Front)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(chain)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print("listening", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
