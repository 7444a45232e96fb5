"""Test harness for the registry scenario (standard library only): an htpasswd line, and images pushed from
``docker save`` archives into a registry over its v2 API.

    registry_seed.py htpasswd USER                  (password on stdin; prints USER:<bcrypt hash>)
    registry_seed.py push --url https://NAME:PORT --connect IP --ca CA.crt --user USER (password on stdin)
                          ARCHIVE=SOURCE_TAG=REPOSITORY:TAG[+DIR] ...

The host engine could push too, but only after trusting the test's CA in the host's /etc/docker/certs.d (host
configuration shared with every other checkout) and gzip-compressing every layer (a CPU minute for the runtime image).
Here each layer goes up as it is in the archive (an uncompressed OCI layer), read once; a layer already sent to
another repository of the same run is mounted, not sent again. +DIR adds a layer holding that empty directory (a
SWE-bench-like image has /testbed). The registry is reached at IP (the host cannot resolve the test network's names)
and its certificate checked for NAME.
"""

import argparse
import base64
import hashlib
import http.client
import io
import json
import socket
import ssl
import sys
import tarfile
import warnings
from urllib.parse import urlsplit

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"
CHUNK = 1024 * 1024


def htpasswd(user, password):
    """USER:<bcrypt hash>, the only hash distribution's htpasswd auth takes: Debian's libcrypt makes it ($2b$) through
    Python's crypt module (Python < 3.13; the bcrypt package where it is installed)."""
    try:
        import bcrypt  # pylint: disable=import-outside-toplevel

        return "%s:%s" % (user, bcrypt.hashpw(password.encode(), bcrypt.gensalt()).decode())
    except ImportError:
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt  # pylint: disable=import-outside-toplevel,deprecated-module

    return "%s:%s" % (user, crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH)))


class Registry:
    """The registry's v2 API over one TLS connection to IP, checked for the registry's name."""

    def __init__(self, url, connect, ca, user, password):
        parts = urlsplit(url)
        self.name, self.port = parts.hostname, parts.port or 443
        self.connect = connect or self.name
        self.context = ssl.create_default_context(cafile=ca)
        self.auth = "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
        self.sent = {}  # digest -> repository it was first sent to

    def _connection(self):
        raw = socket.create_connection((self.connect, self.port), timeout=60)
        connection = http.client.HTTPSConnection(self.name, self.port, timeout=60, blocksize=CHUNK)
        connection.sock = self.context.wrap_socket(raw, server_hostname=self.name)
        return connection

    def request(self, method, path, body=None, headers=None, expect=(200, 201, 202)):
        connection = self._connection()
        try:
            headers = dict(headers or {}, Authorization=self.auth)
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        if response.status not in expect:
            raise RuntimeError("%s %s: HTTP %d %s" % (method, path, response.status, data[:300]))
        return response, data

    def has_blob(self, repository, digest):
        response, _data = self.request("HEAD", "/v2/%s/blobs/%s" % (repository, digest), expect=(200, 404))
        return response.status == 200

    def send_blob(self, repository, digest, size, open_body):
        """Make the blob digest exist in repository: there already, mounted from the repository it was sent to, or
        uploaded from open_body() (bytes, or a file object that must hash to digest). True when it was uploaded."""
        if self.has_blob(repository, digest):
            return False
        path = "/v2/%s/blobs/uploads/" % repository
        if digest in self.sent:
            response, _data = self.request("POST", path + "?mount=%s&from=%s" % (digest, self.sent[digest]))
            if response.status == 201:
                return False
        else:
            response, _data = self.request("POST", path)
        location = urlsplit(response.getheader("Location"))
        target = location.path + ("?" + location.query + "&" if location.query else "?") + "digest=" + digest
        self.request("PUT", target, body=open_body(), headers={"Content-Type": "application/octet-stream",
                                                               "Content-Length": str(size)}, expect=(201,))
        self.sent[digest] = repository
        return True


class HashingReader(io.RawIOBase):
    """A file object that hashes what http.client reads from it, so a layer is read from the archive once."""

    def __init__(self, handle):
        super().__init__()
        self.handle = handle
        self.sha = hashlib.sha256()

    def readable(self):
        return True

    def read(self, size=-1):
        data = self.handle.read(size if size and size > 0 else CHUNK)
        self.sha.update(data)
        return data


def layer_of_dir(path):
    """An uncompressed layer tar holding the empty directory path."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as layer:
        info = tarfile.TarInfo(path.strip("/") + "/")
        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
        layer.addfile(info)
    return buffer.getvalue()


def push(registry, archive_path, source_tag, destination, extra_dir=None):
    repository, tag = destination.rsplit(":", 1)
    with tarfile.open(archive_path, "r:") as archive:
        manifest = json.load(archive.extractfile("manifest.json"))
        entry = next((item for item in manifest if source_tag in (item.get("RepoTags") or [])), None)
        if entry is None:
            raise SystemExit("%s holds no image tagged %s" % (archive_path, source_tag))
        config = json.loads(archive.extractfile(entry["Config"]).read())
        layers = []
        for name in entry["Layers"]:
            member = archive.getmember(name)
            diff_id = config["rootfs"]["diff_ids"][len(layers)]
            reader = HashingReader(archive.extractfile(member))
            # send_blob calls the lambda at once (or not at all): reader is this layer's.
            if registry.send_blob(repository, diff_id, member.size, lambda: reader) \
                    and "sha256:" + reader.sha.hexdigest() != diff_id:
                raise SystemExit("%s: layer %s does not hash to its diff_id %s" % (archive_path, name, diff_id))
            layers.append({"mediaType": OCI_LAYER, "digest": diff_id, "size": member.size})
    if extra_dir:
        data = layer_of_dir(extra_dir)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        registry.send_blob(repository, digest, len(data), lambda: data)
        layers.append({"mediaType": OCI_LAYER, "digest": digest, "size": len(data)})
        config["rootfs"]["diff_ids"].append(digest)
        config.setdefault("history", []).append({"created_by": "aisbench tests: mkdir %s" % extra_dir})
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_digest = "sha256:" + hashlib.sha256(config_bytes).hexdigest()
    registry.send_blob(repository, config_digest, len(config_bytes), lambda: config_bytes)
    body = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                       "config": {"mediaType": OCI_CONFIG, "digest": config_digest, "size": len(config_bytes)},
                       "layers": layers}).encode()
    registry.request("PUT", "/v2/%s/manifests/%s" % (repository, tag), body=body,
                     headers={"Content-Type": OCI_MANIFEST}, expect=(201,))
    return "%s:%s %s" % (repository, tag, config_digest)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    line = commands.add_parser("htpasswd")
    line.add_argument("user")
    pushing = commands.add_parser("push")
    pushing.add_argument("--url", required=True)
    pushing.add_argument("--connect", help="address to connect to instead of the URL's host")
    pushing.add_argument("--ca", required=True)
    pushing.add_argument("--user", required=True)
    pushing.add_argument("images", nargs="+", metavar="ARCHIVE=SOURCE_TAG=REPOSITORY:TAG[+DIR]")
    args = parser.parse_args(argv)
    password = sys.stdin.readline().rstrip("\n")
    if args.command == "htpasswd":
        print(htpasswd(args.user, password))
        return 0
    registry = Registry(args.url, args.connect, args.ca, args.user, password)
    for spec in args.images:
        archive_path, source_tag, destination = spec.split("=", 2)
        destination, _sep, extra_dir = destination.partition("+")
        print(push(registry, archive_path, source_tag, destination, extra_dir or None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
