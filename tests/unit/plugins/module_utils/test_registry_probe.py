# -*- coding: utf-8 -*-
"""plugins/module_utils/_registry.py against real TLS servers on this host: a private CA, Basic and Bearer
registries, the wrong CA, no CA, a closed port; and the checks preflight builds from the probes."""

import base64
import datetime
import http.server
import socket
import ssl
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[4]
COLLECTIONS = ROOT / ".cache" / "collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _preflight as pf  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _registry as registry  # noqa: E402

USER, PASSWORD = "aisbench-ci", "right-password"
NAMES = {"registry_ca_files": "docker_engine_registry_ca_certificates", "registry_logins": "docker_engine_registry_logins"}


def _name(text):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def _ca(text):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_name(text)).issuer_name(_name(text)).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    return key, cert


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    ca_key, ca_cert = _ca("test site CA")
    _other_key, other_cert = _ca("another CA")
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    import ipaddress
    cert = (x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    directory = tmp_path_factory.mktemp("pki")
    (directory / "server.pem").write_bytes(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    def pem(certificate):
        return certificate.public_bytes(serialization.Encoding.PEM).decode()

    return {"server": str(directory / "server.pem"), "ca": pem(ca_cert), "other": pem(other_cert)}


class _Registry(http.server.BaseHTTPRequestHandler):
    """/basic/v2/ asks for Basic auth, /bearer/v2/ for a token from /token, /open/v2/ for nothing."""

    def _answer(self, status, headers=None):
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def _authorized(self):
        good = "Basic " + base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()
        return self.headers.get("Authorization") == good

    def do_GET(self):  # noqa: N802 - http.server naming
        url = urlsplit(self.path)
        if url.path == "/basic/v2/":
            self._answer(200 if self._authorized() else 401, {"WWW-Authenticate": 'Basic realm="test"'})
        elif url.path == "/bearer/v2/":
            realm = "https://127.0.0.1:%d/token" % self.server.server_address[1]
            self._answer(401, {"WWW-Authenticate": 'Bearer realm="%s",service="test-registry"' % realm})
        elif url.path == "/token":
            query = parse_qs(url.query)
            ok = self._authorized() and query.get("service") == ["test-registry"] and query.get("account") == [USER]
            self._answer(200 if ok else 401)
        elif url.path == "/open/v2/":
            self._answer(200)
        else:
            self._answer(404)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(pki):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server"])
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield "https://127.0.0.1:%d" % httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_names_of_a_registry():
    assert registry.registry_url("registry.example:5000") == "https://registry.example:5000"
    assert registry.registry_url("http://mirror.example:5000/") == "http://mirror.example:5000"
    assert registry.certs_dir_name("https://mirror.example:5443/") == "mirror.example:5443"
    assert registry.certs_dir_name("registry.example") == "registry.example"


def test_the_site_ca_makes_the_registry_trusted_and_basic_credentials_are_checked(server, pki):
    url = server + "/basic"
    answered = registry.probe(url, 5, pki["ca"])
    assert (answered["status"], answered["api_version"], answered["credentials"]) == (401, "registry/2.0", None)
    assert registry.verdict(answered, "mirror") == (True, "mirror %s: 401 auth required" % url)
    accepted = registry.probe(url, 5, pki["ca"], USER, PASSWORD)
    assert accepted["credentials"] == "accepted"
    assert registry.verdict(accepted, "registry")[1] == "registry %s: accepted the credentials of user %s" % (url, USER)
    refused = registry.probe(url, 5, pki["ca"], USER, "wrong")
    assert refused["credentials"] == "refused"
    assert registry.verdict(refused, "registry", login_variable="docker_engine_registry_logins") == (
        False, "registry %s: refused the credentials of user %s (HTTP 401); fix them in docker_engine_registry_logins"
        % (url, USER))


def test_bearer_credentials_are_checked_at_the_token_endpoint(server, pki):
    assert registry.probe(server + "/bearer", 5, pki["ca"], USER, PASSWORD)["credentials"] == "accepted"
    assert registry.probe(server + "/bearer", 5, pki["ca"], USER, "wrong")["credentials"] == "refused"


def test_a_registry_without_auth_needs_no_credentials(server, pki):
    opened = registry.probe(server + "/open", 5, pki["ca"], USER, PASSWORD)
    assert opened["credentials"] == "anonymous"
    assert registry.verdict(opened)[0] is True


def test_no_ca_and_the_wrong_ca_say_which_ca_to_give(server, pki):
    where = urlsplit(server).netloc
    missing = registry.probe(server + "/open", 5)
    assert missing["status"] is None and missing["untrusted"] is True
    ok, line = registry.verdict(missing, "mirror", ca_variable="docker_engine_registry_ca_certificates")
    assert not ok
    assert line.startswith("mirror %s/open: TLS certificate not trusted (certificate verify failed: unable to get local "
                           "issuer certificate)" % server)
    assert line.endswith("; give its CA in docker_engine_registry_ca_certificates['%s']" % where)
    wrong = registry.probe(server + "/open", 5, pki["other"])
    assert registry.verdict(wrong, "mirror", ca_variable="X")[1].endswith(
        "; the CA given in X['%s'] does not sign its certificate" % where)
    # Without certificate checks (registry_validate_certs: false) it answers.
    assert registry.probe(server + "/open", 5, validate_certs=False)["status"] == 200


def test_a_closed_port_and_a_silent_server_are_not_reachable():
    refused = registry.probe("https://127.0.0.1:%d" % _closed_port(), 3)
    assert registry.verdict(refused, "mirror")[1].endswith(": not reachable: connection refused")
    with socket.socket() as silent:  # accepts connections (backlog) but never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        timed_out = registry.probe("https://127.0.0.1:%d" % silent.getsockname()[1], 0.5)
    assert timed_out["error"] == "timed out"


def test_a_server_that_is_no_registry(server, pki):
    missing = registry.probe(server + "/nothing", 5, pki["ca"])
    assert registry.verdict(missing) == (False, "registry %s/nothing: 404: no /v2/ API at %s/nothing/v2/ (not a registry, or not "
                                                "under this path: dockerd asks <mirror>/v2/...)" % (server, server))


def test_preflight_checks_name_each_registry_that_does_not_work(server, pki):
    probes = [registry.probe(server + "/open", 5, pki["ca"]), registry.probe(server + "/open", 5)]
    mirrors = pf.check_registry_mirrors(probes, NAMES)
    assert mirrors["status"] == pf.FAIL
    assert mirrors["reason"].startswith("1/2 reachable; mirror %s/open: 200; mirror " % server)
    assert len(mirrors["details"]["problems"]) == 1
    assert "docker_engine_registry_ca_certificates[" in mirrors["details"]["problems"][0]
    logins = pf.check_registry_logins([registry.probe(server + "/basic", 5, pki["ca"], USER, "wrong")], NAMES)
    assert logins["status"] == pf.FAIL
    assert logins["details"]["problems"] == [
        "registry %s/basic: refused the credentials of user %s (HTTP 401); fix them in docker_engine_registry_logins"
        % (server, USER)]
    assert PASSWORD not in repr(logins) and "wrong" not in repr(logins)
    assert pf.check_registry_logins([], NAMES)["status"] == pf.SKIP
