"""The agents scenario's DNS/HTTP/TLS sink, served for real on loopback ports."""

import json
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "model_endpoint"))
import dns_http_sink  # noqa: E402


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def sink(tmp_path):
    log = tmp_path / "sink.jsonl"
    ports = {"dns": free_port(socket.SOCK_DGRAM), "http": free_port(), "tls": free_port()}
    args = ["--answer", "10.9.8.7", "--log", str(log), "--dns-port", str(ports["dns"]), "--http-port", str(ports["http"]),
            "--tls-port", str(ports["tls"])]
    threading.Thread(target=dns_http_sink.main, args=(args,), daemon=True).start()
    time.sleep(0.5)
    return ports, log


def query(name, qtype):
    question = b"".join(bytes([len(label)]) + label.encode() for label in name.split(".")) + b"\0"
    return struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + question + struct.pack("!HH", qtype, 1)


def records(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_every_name_resolves_to_the_sink_and_is_logged(sink):
    ports, log = sink
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5)
        sock.sendto(query("pypi.org", 1), ("127.0.0.1", ports["dns"]))
        reply = sock.recv(512)
        sock.sendto(query("us.i.posthog.com", 28), ("127.0.0.1", ports["dns"]))
        empty = sock.recv(512)
    ident, flags, _qd, answers = struct.unpack("!HHHH", reply[:8])
    assert (ident, flags & 0x8000, answers) == (0x1234, 0x8000, 1)
    assert socket.inet_ntoa(reply[-4:]) == "10.9.8.7"
    assert struct.unpack("!H", empty[6:8])[0] == 0  # AAAA: no record, so clients fall back to the A record
    expected = [("dns", "pypi.org", "A"), ("dns", "us.i.posthog.com", "AAAA")]
    assert [(r["kind"], r["name"], r["type"]) for r in records(log)] == expected


def test_http_requests_and_tls_hellos_are_logged_by_host(sink):
    ports, log = sink
    request = urllib.request.Request("http://127.0.0.1:%d/pypi/aider-chat/json" % ports["http"],
                                     headers={"Host": "pypi.org"})
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=5)
    assert error.value.code == 503
    context = ssl.create_default_context()
    with socket.create_connection(("127.0.0.1", ports["tls"]), timeout=5) as raw:
        with pytest.raises((ssl.SSLError, OSError)):
            context.wrap_socket(raw, server_hostname="raw.githubusercontent.com").do_handshake()
    time.sleep(0.3)
    got = records(log)
    assert {"kind": "http", "method": "GET", "host": "pypi.org", "path": "/pypi/aider-chat/json"}.items() <= got[0].items()
    assert got[1]["kind"] == "tls" and got[1]["sni"] == "raw.githubusercontent.com"
