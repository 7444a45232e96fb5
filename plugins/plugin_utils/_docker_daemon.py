# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The rules of daemon.json (host and inner engine): build it from role variables and check every value the way
dockerd uses it. Controller only; the docker_daemon_config and inner_daemon_config filters (filter/docker_daemon.py)
import it on first use."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import ipaddress
import numbers
import posixpath
import re

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._validation import (
    http_url_problem,
    registry_host_problem,
    registry_problem,
)

STORAGE_DRIVERS = ("overlay2", "fuse-overlayfs", "btrfs", "zfs", "vfs", "devicemapper")
CGROUP_DRIVERS = ("systemd", "cgroupfs")
LOG_DRIVERS = ("json-file", "local", "journald", "syslog", "none", "fluentd", "gelf", "awslogs", "splunk", "gcplogs")
BUILTIN_RUNTIMES = ("runc", "io.containerd.runc.v2")
_SIZE = re.compile(r"^[1-9][0-9]*[kmg]?\Z")
# dockerd's own size syntax (go-units RAMInBytes): 10m, 1.5g, 512KiB, 100 MB.
_DOCKER_SIZE = re.compile(r"^(\d+(\.\d+)*) ?([kKmMgGtTpP])?[iI]?[bB]?\Z")
# Go's time.ParseDuration: 1h30m, 500ms, 2s.
_GO_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|\u00b5s|ms|s|m|h))+\Z|^0\Z")
LOG_LEVELS = ("debug", "info", "warn", "error", "fatal")
# log-opts that json-file and local understand (dockerd refuses every container with another one).
FILE_LOG_OPTS = ("max-size", "max-file", "compress", "labels", "labels-regex", "env", "env-regex", "tag", "mode",
                 "max-buffer-size")
SIZE_LOG_OPTS = ("max-size", "max-buffer-size")
DURATION_LOG_OPTS = ("fluentd-retry-wait", "fluentd-async-reconnect-interval", "gelf-tcp-reconnect-delay")
BOOL_OPTIONS = ("live-restore", "ipv6", "iptables", "ip6tables", "ip-forward", "ip-masq", "userland-proxy", "icc",
                "debug", "experimental", "no-new-privileges", "selinux-enabled", "init", "userns-remap-disabled")
COUNT_OPTIONS = {"max-concurrent-downloads": 1, "max-concurrent-uploads": 1, "max-download-attempts": 1,
                 "shutdown-timeout": 0, "mtu": 68}
PATH_OPTIONS = ("data-root", "exec-root", "pidfile")
# Named settings -> the daemon.json key they fill (for messages: which variable to fix).
SETTING_OF = {"registry-mirrors": "registry_mirrors", "insecure-registries": "insecure_registries",
              "storage-driver": "storage_driver", "exec-opts": "cgroup_driver", "data-root": "data_root",
              "log-driver": "log_driver", "log-opts.max-size": "log_max_size", "log-opts.max-file": "log_max_file",
              "default-address-pools": "default_address_pools", "runtimes": "runtimes",
              "default-runtime": "default_runtime", "live-restore": "live_restore"}


# The inner engine of the runtime container (dind): trial networks come from this pool unless the site gives its
# own; 172.24.0.0/13 in /24 networks is room for 2048 of them, inside the range Docker itself uses by default.
INNER_ADDRESS_POOLS = ({"base": "172.24.0.0/13", "size": 24},)
# Trial containers log into the inner engine night after night: rotated, so their logs cannot fill its disk.
INNER_LOG_ROTATION = {"log_max_size": "20m", "log_max_file": 2}
# Trial containers get an init as PID 1: Harbor's main service runs `sh -c "sleep infinity"`, which ignores SIGTERM,
# so without one every trial's `compose down` waits Docker's 10 s stop timeout (docs/performance.md, "Per-trial
# overhead"). A site sets {"init": false} in runtime_container_daemon_options for tasks that need their own PID 1.
INNER_DAEMON_OPTIONS = {"init": True}
# Options the runtime image's entrypoint owns: the storage driver is chosen when the container starts (overlay2
# where its /var/lib/docker can hold it, else vfs), the data-root is the container's /var/lib/docker volume and
# the sockets are the entrypoint's.
INNER_RESERVED = {"storage-driver": "storage_driver",
                  "data-root": "docker_volume: the inner /var/lib/docker is that volume",
                  "hosts": "run_dir: the entrypoint's sockets"}


def _fail(setting, value, why, prefix="docker_engine"):
    raise AnsibleFilterError("%s_%s: %r %s" % (prefix, setting, value, why))


class _Checker(object):
    """Checks merged daemon.json options; names the option, where it came from and dockerd's reason."""

    def __init__(self, config, extra, prefix="docker_engine"):
        self.config = config
        self.extra = extra
        self.prefix = prefix

    def source(self, path):
        node = self.extra
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                setting = SETTING_OF.get(path) or SETTING_OF.get(path.split(".")[0])
                return "%s_%s" % (self.prefix, setting if setting else "daemon_options")
            node = node[part]
        return "%s_daemon_options" % self.prefix

    def fail(self, path, value, why):
        raise AnsibleFilterError("%s: daemon.json option %s=%s (from %s) %s"
                                 % (self.prefix, path, _show(value), self.source(path), why))

    def size(self, path, value):
        if not isinstance(value, str) or not _DOCKER_SIZE.match(value.strip()) or not value.strip():
            self.fail(path, value, "is not a size like 100m, 512k or 1g; dockerd: invalid size: %s" % _show(value))

    def path(self, path, value):
        if not isinstance(value, str) or not posixpath.isabs(value) or ".." in value.split("/"):
            self.fail(path, value, "is not an absolute path without '..'; dockerd would put it under its working "
                                   "directory and start on an empty data-root, without the images and containers")
        if posixpath.normpath(value) in ("/", "/proc", "/sys", "/dev", "/run", "/etc", "/usr", "/boot"):
            self.fail(path, value, "is a system directory")

    def string_list(self, path, value):
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            self.fail(path, value, "must be a list of strings")

    def check(self):
        config = self.config
        for key in BOOL_OPTIONS:
            if key in config and not isinstance(config[key], bool):
                self.fail(key, config[key], "must be true or false (a JSON boolean, not a string); dockerd: cannot "
                                            "unmarshal %s into a bool" % _json_type(config[key]))
        for key, low in COUNT_OPTIONS.items():
            if key in config:
                value = config[key]
                if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
                    self.fail(key, value, "must be a whole number of at least %d" % low)
        if config.get("mtu", 68) > 65535:
            self.fail("mtu", config["mtu"], "is larger than 65535")
        for key in PATH_OPTIONS:
            if key in config:
                self.path(key, config[key])
        if "log-level" in config and config["log-level"] not in LOG_LEVELS:
            self.fail("log-level", config["log-level"], "is not one of %s" % ", ".join(LOG_LEVELS))
        if "hosts" in config:
            self.fail("hosts", config["hosts"], "cannot be set in daemon.json on Debian and Ubuntu: their docker.service "
                                                "already passes -H fd://, and dockerd refuses to start with: the "
                                                "following directives are specified both as a flag and in the "
                                                "configuration file: hosts")
        self.drivers()
        self.logging()
        self.networks()
        self.registries()
        self.runtimes()
        if "default-shm-size" in config:
            self.size("default-shm-size", config["default-shm-size"])

    def drivers(self):
        config = self.config
        if "storage-driver" in config and config["storage-driver"] not in STORAGE_DRIVERS:
            self.fail("storage-driver", config["storage-driver"], "is not one of %s" % ", ".join(STORAGE_DRIVERS))
        if "exec-opts" in config:
            self.string_list("exec-opts", config["exec-opts"])
            for option in config["exec-opts"]:
                key, _sep, value = option.partition("=")
                if key.strip() == "native.cgroupdriver" and value.strip() not in CGROUP_DRIVERS:
                    self.fail("exec-opts", option, "names a cgroup driver that is not one of %s" % ", ".join(CGROUP_DRIVERS))
                if not _sep:
                    self.fail("exec-opts", option, "is not key=value")

    def logging(self):
        config = self.config
        driver = config.get("log-driver", "json-file")
        if "log-driver" in config and driver not in LOG_DRIVERS:
            self.fail("log-driver", driver, "is not one of %s" % ", ".join(LOG_DRIVERS))
        opts = config.get("log-opts", {})
        if not isinstance(opts, dict):
            self.fail("log-opts", opts, "must be a mapping of option names to strings")
        for key, value in opts.items():
            path = "log-opts.%s" % key
            if not isinstance(value, str):
                self.fail(path, value, "must be a string (quote it); dockerd: json: cannot unmarshal %s into a string"
                                       % _json_type(value))
            if driver in ("json-file", "local") and key not in FILE_LOG_OPTS:
                self.fail(path, value, "is not an option of the %s log driver (known: %s); dockerd refuses every "
                                       "container with: unknown log opt '%s'" % (driver, ", ".join(FILE_LOG_OPTS), key))
            if key in SIZE_LOG_OPTS:
                self.size(path, value)
            elif key in DURATION_LOG_OPTS and not _GO_DURATION.match(value):
                self.fail(path, value, "is not a duration like 500ms, 2s or 1m; dockerd: time: invalid duration")
            elif key == "max-file" and not (value.isdigit() and int(value) >= 1):
                self.fail(path, value, "must be a positive whole number; dockerd: max-file cannot be less than 1")
            elif key == "compress" and value not in ("true", "false", "1", "0"):
                self.fail(path, value, "must be \"true\" or \"false\"")
            elif key == "mode" and value not in ("blocking", "non-blocking"):
                self.fail(path, value, "must be blocking or non-blocking")
        if "max-file" in opts and "max-size" not in opts and driver == "json-file":
            self.fail("log-opts.max-file", opts["max-file"], "needs log-opts.max-size; dockerd: max-file cannot be "
                                                             "set without max-size")

    def networks(self):
        config = self.config
        for key in ("fixed-cidr", "fixed-cidr-v6"):
            if key in config:
                try:
                    ipaddress.ip_network(config[key], strict=True)
                except (TypeError, ValueError) as exc:
                    self.fail(key, config[key], "is not a CIDR network (%s)" % exc)
        if "bip" in config:
            try:
                interface = ipaddress.ip_interface(config["bip"])
            except (TypeError, ValueError) as exc:
                self.fail("bip", config["bip"], "is not an address with a prefix like 172.26.0.1/16 (%s)" % exc)
            if "/" not in str(config["bip"]):
                self.fail("bip", config["bip"], "needs a prefix length: the bridge's own address, like 172.26.0.1/16")
            if interface.ip == interface.network.network_address:
                self.fail("bip", config["bip"], "must be the bridge's own address with a prefix, like 172.26.0.1/16, "
                                                "not a network address")
        if "dns" in config:
            self.string_list("dns", config["dns"])
            for server in config["dns"]:
                try:
                    ipaddress.ip_address(server)
                except ValueError:
                    self.fail("dns", server, "is not an IP address")
        pools = config.get("default-address-pools", [])
        if not isinstance(pools, list):
            self.fail("default-address-pools", pools, "must be a list of {base, size}")
        for pool in pools:
            if not isinstance(pool, dict) or set(pool) != {"base", "size"}:
                self.fail("default-address-pools", pool, "entries need exactly the keys base and size")
            try:
                network = ipaddress.ip_network(pool["base"], strict=True)
            except (TypeError, ValueError):
                self.fail("default-address-pools", pool, "has a base that is not a CIDR network")
            size = pool["size"]
            if not isinstance(size, int) or isinstance(size, bool) or not network.prefixlen <= size <= network.max_prefixlen:
                self.fail("default-address-pools", pool, "has a size outside %d-%d" % (network.prefixlen, network.max_prefixlen))

    def registries(self):
        config = self.config
        for mirror in config.get("registry-mirrors", []) if isinstance(config.get("registry-mirrors", []), list) else [None]:
            problem = http_url_problem(mirror)
            if problem:
                self.fail("registry-mirrors", mirror, problem)
        for registry in config.get("insecure-registries", []) if isinstance(config.get("insecure-registries", []), list) else [None]:
            problem = registry_problem(registry)
            if problem:
                self.fail("insecure-registries", registry, problem)
        proxies = config.get("proxies", {})
        if not isinstance(proxies, dict):
            self.fail("proxies", proxies, "must be a mapping with http-proxy, https-proxy, no-proxy")
        for key in ("http-proxy", "https-proxy"):
            if key in proxies:
                problem = http_url_problem(proxies[key])
                if problem:
                    self.fail("proxies.%s" % key, proxies[key], problem)

    def runtimes(self):
        config = self.config
        runtimes = config.get("runtimes", {})
        if not isinstance(runtimes, dict):
            self.fail("runtimes", runtimes, "must be a mapping of name -> {path, runtimeArgs}")
        for name, runtime in runtimes.items():
            if not isinstance(runtime, dict) or not isinstance(runtime.get("path"), str) or not runtime["path"]:
                self.fail("runtimes.%s" % name, runtime, "needs a path")
        if "default-runtime" in config and config["default-runtime"] not in runtimes \
                and config["default-runtime"] not in BUILTIN_RUNTIMES:
            self.fail("default-runtime", config["default-runtime"], "is neither a built-in runtime (%s) nor a key of "
                                                                    "runtimes" % ", ".join(BUILTIN_RUNTIMES))


def _json_type(value):
    """What dockerd calls the JSON type of a value it cannot unmarshal."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, numbers.Number):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _show(value):
    return repr(value) if isinstance(value, str) else "%s" % (value,)


def _merge(base, extra):
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _list(settings, name, prefix="docker_engine"):
    value = settings.get(name) or []
    if not isinstance(value, list):
        _fail(name, value, "must be a list", prefix)
    return value


def docker_daemon_config(settings, prefix="docker_engine"):
    if not isinstance(settings, dict):
        raise AnsibleFilterError("docker_daemon_config expects a dict of settings, got %r" % type(settings).__name__)

    config = {}

    for name, key, problem_of in (("registry_mirrors", "registry-mirrors", http_url_problem),
                                  ("insecure_registries", "insecure-registries", registry_problem)):
        entries = _list(settings, name, prefix)
        for entry in entries:
            problem = problem_of(entry)
            if problem:
                _fail(name, entry, problem, prefix)
        if entries:
            config[key] = entries

    storage = settings.get("storage_driver") or ""
    if storage:
        if storage not in STORAGE_DRIVERS:
            _fail("storage_driver", storage, "is not one of %s" % ", ".join(STORAGE_DRIVERS), prefix)
        config["storage-driver"] = storage

    cgroup = settings.get("cgroup_driver") or ""
    if cgroup:
        if cgroup not in CGROUP_DRIVERS:
            _fail("cgroup_driver", cgroup, "is not one of %s" % ", ".join(CGROUP_DRIVERS), prefix)
        config["exec-opts"] = ["native.cgroupdriver=%s" % cgroup]

    data_root = settings.get("data_root") or ""
    if data_root:
        if not isinstance(data_root, str) or not posixpath.isabs(data_root) or ".." in data_root.split("/"):
            _fail("data_root", data_root, "must be an absolute path without '..'", prefix)
        config["data-root"] = data_root

    log_driver = settings.get("log_driver") or ""
    if log_driver:
        if log_driver not in LOG_DRIVERS:
            _fail("log_driver", log_driver, "is not one of %s" % ", ".join(LOG_DRIVERS), prefix)
        config["log-driver"] = log_driver
        if log_driver in ("json-file", "local"):
            log_opts = {}
            size = settings.get("log_max_size")
            if size not in (None, ""):
                if not _SIZE.match(str(size)):
                    _fail("log_max_size", size, "must look like 100m, 512k or 1g", prefix)
                log_opts["max-size"] = str(size)
            files = settings.get("log_max_file")
            if files not in (None, ""):
                try:
                    count = int(files)
                except (TypeError, ValueError):
                    count = 0
                if count < 1:
                    _fail("log_max_file", files, "must be a positive integer", prefix)
                log_opts["max-file"] = str(count)
            if log_opts:
                config["log-opts"] = log_opts

    pools = _list(settings, "default_address_pools", prefix)
    for pool in pools:
        if not isinstance(pool, dict) or set(pool) != {"base", "size"}:
            _fail("default_address_pools", pool, "entries need exactly the keys base and size", prefix)
        try:
            network = ipaddress.ip_network(pool["base"], strict=True)
        except (TypeError, ValueError):
            _fail("default_address_pools", pool, "has a base that is not a CIDR network", prefix)
        size = pool["size"]
        if not isinstance(size, int) or isinstance(size, bool) or not network.prefixlen <= size <= network.max_prefixlen:
            _fail("default_address_pools", pool,
                  "has a size outside %d-%d" % (network.prefixlen, network.max_prefixlen), prefix)
    if pools:
        config["default-address-pools"] = pools

    runtimes = settings.get("runtimes") or {}
    if not isinstance(runtimes, dict):
        _fail("runtimes", runtimes, "must be a dict of name -> {path, runtimeArgs}", prefix)
    for name, runtime in runtimes.items():
        if not isinstance(runtime, dict) or not runtime.get("path"):
            _fail("runtimes", {name: runtime}, "needs a path", prefix)
    if runtimes:
        config["runtimes"] = runtimes

    default_runtime = settings.get("default_runtime") or ""
    if default_runtime:
        if default_runtime not in runtimes and default_runtime not in BUILTIN_RUNTIMES:
            _fail("default_runtime", default_runtime,
                  "is neither a built-in runtime nor a key of %s_runtimes" % prefix, prefix)
        config["default-runtime"] = default_runtime

    live_restore = settings.get("live_restore")
    if live_restore is not None:
        if not isinstance(live_restore, bool):
            _fail("live_restore", live_restore, "must be true or false", prefix)
        if live_restore:
            config["live-restore"] = True

    extra = settings.get("daemon_options") or {}
    if not isinstance(extra, dict):
        _fail("daemon_options", extra, "must be a dict", prefix)
    merged = _merge(config, extra)
    _Checker(merged, extra, prefix).check()
    return merged


def inner_daemon_config(settings=None, prefix="runtime_container"):
    """daemon.json of the runtime container's inner engine (dind), checked by the same rules as the host's.

    Settings: registry_mirrors, insecure_registries, default_address_pools (empty: INNER_ADDRESS_POOLS),
    log_max_size and log_max_file (empty: INNER_LOG_ROTATION), daemon_options (merged last, over INNER_DAEMON_OPTIONS)
    and storage_driver (auto or a driver name; checked, not written). Always cgroupfs (no systemd inside) and
    json-file logs; the storage driver, data-root and sockets are the entrypoint's.
    """
    settings = dict(settings or {})
    unknown = sorted(set(settings) - {"registry_mirrors", "insecure_registries", "default_address_pools",
                                      "log_max_size", "log_max_file", "daemon_options", "storage_driver"})
    if unknown:
        raise AnsibleFilterError("inner_daemon_config: unknown settings %s" % ", ".join(unknown))
    # Checked here (a driver dockerd does not know would only fail in the container, after a recreate) but not
    # written: the entrypoint passes it to dockerd, or chooses one for auto.
    storage = settings.pop("storage_driver", None) or "auto"
    if storage != "auto" and storage not in STORAGE_DRIVERS:
        _fail("storage_driver", storage, "is neither auto nor one of %s" % ", ".join(STORAGE_DRIVERS), prefix)
    extra = settings.get("daemon_options") or {}
    if isinstance(extra, dict):
        for key, owner in sorted(INNER_RESERVED.items()):
            if key in extra:
                raise AnsibleFilterError(
                    "%s_daemon_options: %s=%s is not an option of the inner daemon.json: the runtime image's "
                    "entrypoint sets it (see %s_%s)" % (prefix, key, _show(extra[key]), prefix, owner))
    inner = dict(INNER_LOG_ROTATION, cgroup_driver="cgroupfs", log_driver="json-file",
                 default_address_pools=[dict(pool) for pool in INNER_ADDRESS_POOLS])
    inner.update((key, value) for key, value in settings.items() if value not in (None, "", [], {}))
    if isinstance(extra, dict):
        inner["daemon_options"] = dict(INNER_DAEMON_OPTIONS, **extra)
    return docker_daemon_config(inner, prefix=prefix)


def registry_ca_files(cas, contents=None, certs_dir="/etc/docker/certs.d", current=None):
    """Where each registry's CA goes (<certs_dir>/<host[:port]>/ca.crt) and whether the host holds it as given.

    cas: registry host[:port] -> CA file on the controller; contents: the files' contents in the same order (None: only
    the destinations); current: docker_engine_state's ``files`` (path -> exists, checksum, mode, uid, gid).
    Returns one dict per registry, sorted: registry, src, dest, content, differs.
    """
    if not isinstance(cas, dict):
        raise AnsibleFilterError("docker_engine_registry_ca_certificates must be a mapping of host[:port] to a CA file, "
                                 "got %r" % (cas,))
    if contents is not None and len(contents) != len(cas):
        raise AnsibleFilterError("registry_ca_files: %d contents for %d CA files" % (len(contents), len(cas)))
    current = current or {}
    files = []
    for index, (registry, src) in enumerate(cas.items()):
        problem = registry_host_problem(registry)
        if problem:
            _fail("registry_ca_certificates", registry, problem + " (the certs.d directory name)")
        entry = {"registry": registry, "src": src, "dest": posixpath.join(certs_dir, registry, "ca.crt"), "content": None,
                 "differs": True}
        if contents is not None:
            if "-----BEGIN CERTIFICATE-----" not in contents[index]:
                _fail("registry_ca_certificates", {registry: src}, "is not a PEM certificate file")
            entry["content"] = contents[index]
            held = current.get(entry["dest"]) or {}
            entry["differs"] = not (held.get("exists") and held.get("mode") == "0644" and held.get("uid") == 0
                                    and held.get("gid") == 0
                                    and held.get("checksum") == hashlib.sha1(contents[index].encode("utf-8")).hexdigest())
        files.append(entry)
    return sorted(files, key=lambda entry: entry["registry"])
