#!/usr/bin/env python3
"""An OTLP/HTTP traces receiver for reel's OpenTelemetry tests: what reel sends is
decoded by the official `opentelemetry-proto` package (the protobuf classes the
OpenTelemetry Python SDK's exporters use), not by reel's code.

    python otlp_receiver.py serve --out FILE [--port 0] [--fail N] [--reject N]
        -> prints `listening on http://127.0.0.1:PORT` on stderr, then serves POST /v1/traces
    python otlp_receiver.py decode-json FILE
        -> reads OTLP/JSON lines (reel export otlp -o FILE) with protobuf's own JSON
           parser into ExportTraceServiceRequest (hex ids turned into protobuf JSON's
           base64 first: OTLP/JSON's one departure from it), prints them as below

Each request taken is appended to FILE as one JSON line:
    {"content_type": ..., "user_agent": ..., "headers": {lowercased: value},
     "resource": {key: value}, "scope": {"name", "version"},
     "spans": [{"trace_id", "span_id", "parent_span_id" (hex), "name", "kind",
                "start", "end" (unix nanos), "attributes": {key: value},
                "status": {"code", "message"}, "links": [{"trace_id", "span_id"}]}]}
A body that does not decode is answered 400 and logged as {"error": "..."}.
--fail N   the first N requests get 503 with `Retry-After: 0` (logged as {"failed": n})
--reject N every answer says partial_success.rejected_spans = N
Standard library plus opentelemetry-proto. SIGTERM or SIGINT stops it.
"""

import argparse
import base64
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from google.protobuf import json_format


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind) if kind else None


def attributes(kvs):
    return {kv.key: value_of(kv.value) for kv in kvs}


def described(request):
    out = []
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            out.append({
                "resource": attributes(rs.resource.attributes),
                "scope": {"name": ss.scope.name, "version": ss.scope.version},
                "spans": [{
                    "trace_id": s.trace_id.hex(),
                    "span_id": s.span_id.hex(),
                    "parent_span_id": s.parent_span_id.hex(),
                    "name": s.name,
                    "kind": s.kind,
                    "start": s.start_time_unix_nano,
                    "end": s.end_time_unix_nano,
                    "attributes": attributes(s.attributes),
                    "status": {"code": s.status.code, "message": s.status.message},
                    "links": [{"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()}
                              for l in s.links],
                } for s in ss.spans],
            })
    return out


def serve(args):
    lock = threading.Lock()
    state = {"failed": 0}

    def log(entry):
        with lock, open(args.out, "a") as f:
            f.write(json.dumps(entry) + "\n")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, status, body=b"", headers=()):
            self.send_response(status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if self.path != "/v1/traces":
                self.answer(404)
                return
            with lock:
                fail = state["failed"] < args.fail
                if fail:
                    state["failed"] += 1
                    n = state["failed"]
            if fail:
                log({"failed": n})
                self.answer(503, b"collector busy", [("Retry-After", "0")])
                return
            request = trace_service_pb2.ExportTraceServiceRequest()
            try:
                request.ParseFromString(body)
            except Exception as e:  # noqa: BLE001 - any decode failure is the finding
                log({"error": str(e)})
                self.answer(400)
                return
            for part in described(request):
                part.update({
                    "content_type": self.headers.get("Content-Type"),
                    "user_agent": self.headers.get("User-Agent"),
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                })
                log(part)
            response = trace_service_pb2.ExportTraceServiceResponse()
            if args.reject:
                response.partial_success.rejected_spans = args.reject
                response.partial_success.error_message = "rejected by the test"
            self.answer(200, response.SerializeToString())

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


# OTLP/JSON's one departure from protobuf's JSON mapping: trace and span ids are hex,
# not base64 (the OTLP specification, "JSON Protobuf Encoding").
HEX_IDS = ("traceId", "spanId", "parentSpanId")


def hex_ids_to_base64(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in HEX_IDS and isinstance(v, str):
                node[k] = base64.b64encode(bytes.fromhex(v)).decode()
            else:
                hex_ids_to_base64(v)
    elif isinstance(node, list):
        for v in node:
            hex_ids_to_base64(v)


def decode_json(args):
    with open(args.file) as f:
        for line in f:
            if not line.strip():
                continue
            doc = json.loads(line)
            hex_ids_to_base64(doc)
            request = trace_service_pb2.ExportTraceServiceRequest()
            json_format.ParseDict(doc, request)
            for part in described(request):
                print(json.dumps(part))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--out", required=True)
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--fail", type=int, default=0)
    s.add_argument("--reject", type=int, default=0)
    d = sub.add_parser("decode-json")
    d.add_argument("file")
    args = p.parse_args()
    if args.cmd == "serve":
        serve(args)
    else:
        decode_json(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
