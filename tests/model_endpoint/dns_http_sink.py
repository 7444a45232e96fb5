"""A DNS, HTTP and TLS sink for trials: every name resolves to the sink, every request to it is logged, none answered.

The agents scenario gives the trials this DNS server (a Docker Compose overlay's ``dns``) while their network has a
route out (``aisbench_nightly_model_gateway_trials_only: false``): an agent that phones home (an update check,
analytics, a price map, telemetry) resolves its host here and then connects here, and the sink writes one JSON line
per DNS query, HTTP request (method, Host, path) and TLS ClientHello (the SNI host name) to its log. The model's
requests go to the gateway by IP address and never reach the sink.

Standard library only. Usage:
    dns_http_sink.py [--answer IP] [--log sink.jsonl] [--dns-port 53] [--http-port 80] [--tls-port 443]
--answer defaults to the sink's own address (its host name's, as Docker's /etc/hosts has it).
"""

import argparse
import json
import socket
import socketserver
import struct
import sys
import threading
import time

QTYPES = {1: "A", 28: "AAAA", 5: "CNAME", 15: "MX", 16: "TXT", 33: "SRV", 65: "HTTPS", 12: "PTR"}


class Log:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def write(self, record):
        record = dict(record, time=round(time.time(), 3))
        line = json.dumps(record, sort_keys=True)
        sys.stderr.write("sink: %s\n" % line)
        if self.path:
            with self.lock, open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")


def parse_query(data):
    """(id, flags, name, qtype, end of the question) of a DNS query; ValueError when it is not one."""
    if len(data) < 12:
        raise ValueError("short DNS message")
    ident, flags, qdcount = struct.unpack("!HHH", data[:6])
    if qdcount < 1:
        raise ValueError("no question")
    labels, offset = [], 12
    while True:
        if offset >= len(data):
            raise ValueError("cut name")
        length = data[offset]
        offset += 1
        if length == 0:
            break
        if length & 0xC0:
            raise ValueError("compressed name in a question")
        labels.append(data[offset:offset + length].decode("ascii", "replace"))
        offset += length
    if offset + 4 > len(data):
        raise ValueError("cut question")
    qtype, _qclass = struct.unpack("!HH", data[offset:offset + 4])
    return ident, flags, ".".join(labels), qtype, offset + 4


def dns_answer(data, answer_ip):
    """The reply to a query: an A record with answer_ip for every name, no record (NODATA) for other types."""
    ident, flags, _name, qtype, end = parse_query(data)
    question = data[12:end]
    reply_flags = 0x8000 | (flags & 0x0100) | 0x0080 | 0x0400  # response, recursion desired copied, available, authoritative
    records = b""
    count = 0
    if qtype == 1:
        records = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton(answer_ip)
        count = 1
    return struct.pack("!HHHHHH", ident, reply_flags, 1, count, 0, 0) + question + records


def tls_server_name(data):
    """The SNI host name of a TLS ClientHello, or None."""
    try:
        if data[0] != 0x16 or data[5] != 0x01:
            return None
        offset = 5 + 4 + 2 + 32  # record header, handshake header, client version, random
        offset += 1 + data[offset]  # session id
        offset += 2 + struct.unpack("!H", data[offset:offset + 2])[0]  # cipher suites
        offset += 1 + data[offset]  # compression methods
        end = offset + 2 + struct.unpack("!H", data[offset:offset + 2])[0]
        offset += 2
        while offset + 4 <= end:
            kind, length = struct.unpack("!HH", data[offset:offset + 4])
            offset += 4
            if kind == 0:  # server_name: list length, type, name length, name
                name_length = struct.unpack("!H", data[offset + 3:offset + 5])[0]
                return data[offset + 5:offset + 5 + name_length].decode("ascii", "replace")
            offset += length
    except (IndexError, struct.error):
        return None
    return None


def serve(args):
    log = Log(args.log)

    class Dns(socketserver.BaseRequestHandler):
        def handle(self):
            data, sock = self.request
            try:
                _ident, _flags, name, qtype, _end = parse_query(data)
                log.write({"kind": "dns", "name": name, "type": QTYPES.get(qtype, str(qtype)), "client": self.client_address[0]})
                sock.sendto(dns_answer(data, args.answer), self.client_address)
            except ValueError as exc:
                log.write({"kind": "dns-unreadable", "error": str(exc), "client": self.client_address[0]})

    class DnsTcp(socketserver.BaseRequestHandler):
        def handle(self):
            try:
                length = struct.unpack("!H", self.request.recv(2))[0]
                data = self.request.recv(length)
                _ident, _flags, name, qtype, _end = parse_query(data)
                log.write({"kind": "dns", "name": name, "type": QTYPES.get(qtype, str(qtype)), "client": self.client_address[0],
                           "transport": "tcp"})
                reply = dns_answer(data, args.answer)
                self.request.sendall(struct.pack("!H", len(reply)) + reply)
            except (ValueError, struct.error, OSError) as exc:
                log.write({"kind": "dns-unreadable", "error": str(exc), "client": self.client_address[0], "transport": "tcp"})

    class Http(socketserver.StreamRequestHandler):
        def handle(self):
            self.request.settimeout(10)
            try:
                line = self.rfile.readline(8192).decode("latin-1").strip()
                host = ""
                while True:
                    header = self.rfile.readline(8192).decode("latin-1").strip()
                    if not header:
                        break
                    if header.lower().startswith("host:"):
                        host = header.split(":", 1)[1].strip()
                parts = line.split()
                log.write({"kind": "http", "method": parts[0] if parts else "", "host": host,
                           "path": parts[1] if len(parts) > 1 else "", "client": self.client_address[0]})
                self.wfile.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            except OSError as exc:
                log.write({"kind": "http-unreadable", "error": str(exc), "client": self.client_address[0]})

    class Tls(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.settimeout(10)
            try:
                data = self.request.recv(16384)
            except OSError:
                data = b""
            log.write({"kind": "tls", "sni": tls_server_name(data) if data else None, "client": self.client_address[0]})

    class Udp(socketserver.ThreadingMixIn, socketserver.UDPServer):
        allow_reuse_address = True
        daemon_threads = True

    class Tcp(socketserver.ThreadingMixIn, socketserver.TCPServer):
        allow_reuse_address = True
        daemon_threads = True

    servers = [Udp(("0.0.0.0", args.dns_port), Dns), Tcp(("0.0.0.0", args.dns_port), DnsTcp),
               Tcp(("0.0.0.0", args.http_port), Http), Tcp(("0.0.0.0", args.tls_port), Tls)]
    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stderr.write("sink: answering every name with %s; DNS %d, HTTP %d, TLS %d\n"
                     % (args.answer, args.dns_port, args.http_port, args.tls_port))
    servers[0].serve_forever()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--answer", default="", help="the IP address every name resolves to (default: the sink's own)")
    parser.add_argument("--log", default="", help="JSON lines, one per DNS query, HTTP request or TLS hello")
    parser.add_argument("--dns-port", type=int, default=53)
    parser.add_argument("--http-port", type=int, default=80)
    parser.add_argument("--tls-port", type=int, default=443)
    args = parser.parse_args(argv)
    args.answer = args.answer or socket.gethostbyname(socket.gethostname())
    serve(args)


if __name__ == "__main__":
    main()
