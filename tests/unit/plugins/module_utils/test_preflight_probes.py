# -*- coding: utf-8 -*-
"""Probes of plugins/module_utils/_preflight.py against real sockets and servers in this process.
Its tests that start a process: tests/integration/scripts/test_preflight_probes_real.py."""
import http.server
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
COLLECTIONS = ROOT / ".cache" / "collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _preflight as pf  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _registry as registry  # noqa: E402


class _RegistryLikeHandler(http.server.BaseHTTPRequestHandler):
    """Answers /v2/ the way the path's first segment says: /auth (or none: a mirror's base URL) -> 401, /open -> 200,
    else 404."""

    def do_GET(self):  # noqa: N802 - http.server naming
        if self.path in ("/auth/v2/", "/v2/"):
            self.send_response(401)
            self.send_header("Docker-Distribution-API-Version", "registry/2.0")
            self.send_header("WWW-Authenticate", 'Basic realm="test"')
        elif self.path == "/open/v2/":
            self.send_response(200)
            self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        else:
            self.send_response(404)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def http_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RegistryLikeHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_registry_401_and_200_are_reachable(http_server):
    auth = registry.probe(http_server + "/auth", 3)
    assert auth["status"] == 401
    assert auth["api_version"] == "registry/2.0"
    assert auth["probed"] == http_server + "/auth/v2/"
    opened = registry.probe(http_server + "/open/", 3)
    assert opened["status"] == 200
    missing = registry.probe(http_server + "/nothing", 3)
    assert missing["status"] == 404
    outcome = pf.check_registry_mirrors([auth, opened, missing])
    assert outcome["status"] == pf.FAIL
    assert outcome["details"]["unreachable"] == [http_server + "/nothing"]


def test_docker_probe_errors():
    missing = pf.probe_docker("unix:///nonexistent/aisbench.sock", 1)
    assert missing["reachable"] is False
    assert "No such file" in missing["error"]
    assert "TLS endpoints are not supported" in pf.probe_docker("https://engine:2376")["error"]
    refused = pf.probe_docker("tcp://127.0.0.1:%d" % _closed_port(), 1)
    assert "refused" in refused["error"].lower()


def test_commands_probe_searches_sbin(tmp_path):
    tool = tmp_path / "aisbench-tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    found = pf.probe_commands(["aisbench-tool", "sh", "aisbench-missing"], path_env=str(tmp_path) + os.pathsep + "/bin")
    assert found["aisbench-tool"] == str(tool)
    assert found["sh"] == "/bin/sh"
    assert found["aisbench-missing"] is None
    # Not on the given PATH, but in an sbin directory (where Ansible's PATH may not reach).
    sbin_tool = next((name for name in ("ldconfig", "sysctl", "modprobe") if os.path.exists("/usr/sbin/" + name)
                      or os.path.exists("/sbin/" + name)), None)
    if sbin_tool:
        assert pf.probe_commands([sbin_tool], path_env="/nonexistent")[sbin_tool] is not None


def test_nvidia_probe_of_this_host_matches_sysfs():
    devices = Path("/sys/bus/pci/devices")
    nvidia = [entry for entry in devices.iterdir()
              if (entry / "vendor").read_text().strip() == "0x10de" and (entry / "class").read_text().strip()[:6] in ("0x0300", "0x0302")
              ] if devices.is_dir() else []
    observed = pf.probe_nvidia("/")
    assert len(observed["pci_gpus"]) == len(nvidia)
    if not nvidia and not os.path.exists("/proc/driver/nvidia"):
        assert pf.check_gpu(0, observed)["status"] == pf.SKIP
        assert pf.check_gpu(1, observed)["status"] == pf.FAIL
