# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Preflight checks for agent-benchmark hosts (standard library only).

Two kinds of functions live here:
- ``check_*`` and ``summarize``: pure functions from observations to a result
  ``{"name", "status", "reason", "details"}``; they never touch the host.
- ``probe_*``: read the host (files under a configurable root, sockets, HTTP) and
  return plain observations for the ``check_*`` functions.
The module ``preflight_checks`` wires them together; the action plugin of the same
name recomputes the clock check with the controller's time around the round trip.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys

try:
    import http.client as http_client
except ImportError:  # pragma: no cover - Python 2 is not supported on targets
    http_client = None

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _engine_api as engine_api
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _registry as registry
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._engine_api import parse_docker_host  # noqa: F401
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._validation import (
    docker_host_problem,
    http_url_problem,
    registry_host_problem,
)

PASS = "PASS"
FAIL = "FAIL"
SKIP = "SKIP"

# Order is the order of the summary table.
CHECK_NAMES = (
    "commands",
    "architecture",
    "os_release",
    "python",
    "disk",
    "binfmt_misc",
    "docker",
    "registry_mirrors",
    "registry_logins",
    "gpu",
    "cuda",
    "clock",
)

# uname -m -> Docker/OCI platform.
ARCH_TO_PLATFORM = {
    "x86_64": "linux/amd64",
    "amd64": "linux/amd64",
    "aarch64": "linux/arm64",
    "arm64": "linux/arm64",
    "armv7l": "linux/arm/v7",
    "armv6l": "linux/arm/v6",
    "i386": "linux/386",
    "i686": "linux/386",
    "ppc64le": "linux/ppc64le",
    "s390x": "linux/s390x",
    "riscv64": "linux/riscv64",
}

NVIDIA_PCI_VENDOR = "0x10de"
# PCI classes of display controllers: VGA (0x0300) and 3D (0x0302, data-centre GPUs).
# NVSwitches (0x0680) and the GPUs' HDMI audio functions (0x0403) are not GPUs.
GPU_PCI_CLASSES = ("0x0300", "0x0302")

SBIN_DIRS = ("/usr/local/sbin", "/usr/sbin", "/sbin")
GIB = 1024.0 ** 3


def result(name, status, reason, **details):
    return {"name": name, "status": status, "reason": reason, "details": details}


def skipped(name, reason):
    return result(name, SKIP, reason)


# ---------------------------------------------------------------- pure checks


def check_commands(required, found):
    """required: command names; found: name -> absolute path or None."""
    if not required:
        return skipped("commands", "no commands listed")
    missing = [name for name in required if not found.get(name)]
    paths = dict((name, found.get(name)) for name in required)
    if missing:
        return result("commands", FAIL, "missing: %s" % ", ".join(missing), missing=missing, paths=paths)
    return result("commands", PASS, "all %d present" % len(required), missing=[], paths=paths)


def check_architecture(machine, supported):
    platform = ARCH_TO_PLATFORM.get(machine)
    if platform is None:
        return result("architecture", FAIL, "unknown architecture %r (known: %s)" % (machine, ", ".join(sorted(ARCH_TO_PLATFORM))),
                      machine=machine, platform=None)
    if supported and machine not in supported and not _same_platform(machine, supported):
        return result("architecture", FAIL, "%s (%s) is not in the supported list %s" % (machine, platform, ", ".join(supported)),
                      machine=machine, platform=platform)
    return result("architecture", PASS, "%s (%s)" % (machine, platform), machine=machine, platform=platform)


def _same_platform(machine, supported):
    """amd64 and x86_64 name the same thing: accept either spelling in the supported list."""
    platform = ARCH_TO_PLATFORM.get(machine)
    return any(ARCH_TO_PLATFORM.get(entry) == platform for entry in supported)


def parse_os_release(text):
    """Parse /etc/os-release (shell-style KEY=value lines) into a dict."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _unused, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key.strip()] = value.replace('\\"', '"').replace("\\$", "$").replace("\\\\", "\\")
    return values


def os_release_key(os_release):
    """debian-13, ubuntu-24.04; just the ID when there is no VERSION_ID (testing/sid)."""
    os_id = os_release.get("ID", "").lower()
    version = os_release.get("VERSION_ID", "")
    return "%s-%s" % (os_id, version) if version else os_id


def check_os_release(os_release, supported):
    if not os_release:
        return result("os_release", FAIL, "no /etc/os-release", key=None)
    key = os_release_key(os_release)
    pretty = os_release.get("PRETTY_NAME") or key
    if not supported:
        return result("os_release", PASS, "%s (no supported list)" % pretty, key=key)
    os_id = os_release.get("ID", "").lower()
    version = os_release.get("VERSION_ID", "")
    for entry in supported:
        entry_id, _unused, entry_version = entry.lower().partition("-")
        if entry_id != os_id:
            continue
        # "debian" accepts every release; "debian-12" accepts 12 and 12.x; "ubuntu-24.04" only 24.04.
        if not entry_version or version == entry_version or version.startswith(entry_version + "."):
            return result("os_release", PASS, "%s (%s)" % (pretty, key), key=key)
    return result("os_release", FAIL, "%s (%s) is not in the supported list %s" % (pretty, key, ", ".join(supported)), key=key)


def parse_version(text):
    """'3.11' -> (3, 11); raises ValueError on anything that is not dotted integers."""
    parts = str(text).strip().split(".")
    if not parts or not all(part.isdigit() for part in parts):
        raise ValueError("%r is not a dotted version like 3.9" % (text,))
    return tuple(int(part) for part in parts)


def check_python(version_info, minimum, executable):
    have = tuple(version_info[:3])
    have_text = ".".join(str(part) for part in have)
    need = parse_version(minimum)
    if have[:len(need)] < need:
        return result("python", FAIL, "%s is Python %s, need >= %s" % (executable, have_text, minimum),
                      version=have_text, executable=executable)
    return result("python", PASS, "%s %s (>= %s)" % (executable, have_text, minimum), version=have_text, executable=executable)


def nearest_existing_path(path, exists=os.path.exists):
    """The path itself when it exists, else its nearest existing parent (the data-root may not exist yet)."""
    path = os.path.normpath(path)
    while not exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def check_disk(path, probed_path, free_bytes, total_bytes, min_free_gb):
    free_gb = free_bytes / GIB
    total_gb = total_bytes / GIB
    where = path if probed_path == path else "%s (not there yet; measured at %s)" % (path, probed_path)
    details = dict(path=path, probed_path=probed_path, free_gb=round(free_gb, 2), total_gb=round(total_gb, 2),
                   min_free_gb=min_free_gb)
    if free_gb < min_free_gb:
        return result("disk", FAIL, "%s: %.1f GiB free of %.1f GiB, need >= %s GiB" % (where, free_gb, total_gb, _num(min_free_gb)),
                      **details)
    return result("disk", PASS, "%s: %.1f GiB free of %.1f GiB (>= %s GiB)" % (where, free_gb, total_gb, _num(min_free_gb)),
                  **details)


def _num(value):
    return ("%d" % value) if float(value).is_integer() else ("%g" % value)


def check_binfmt(filesystems_text, mounted, module_source, kernel_release):
    """filesystems_text: /proc/filesystems; module_source: where the module/builtin was found, or None."""
    registered = any(line.split()[-1:] == ["binfmt_misc"] for line in filesystems_text.splitlines())
    details = dict(registered=registered, mounted=mounted, module_source=module_source, kernel=kernel_release)
    if registered:
        state = "mounted" if mounted else "not mounted (qemu_binfmt mounts it)"
        return result("binfmt_misc", PASS, "filesystem available in the kernel, %s" % state, **details)
    if module_source:
        return result("binfmt_misc", PASS, "not loaded, available as %s (loads on first mount)" % module_source, **details)
    return result("binfmt_misc", FAIL, "kernel %s has no binfmt_misc: not in /proc/filesystems, no module or builtin entry" % kernel_release,
                  **details)


def check_docker(expected, probe):
    """probe: {"reachable", "version", "api_version", "error", "docker_host"}."""
    details = dict(probe)
    if probe.get("reachable"):
        return result("docker", PASS, "engine %s (API %s) answers at %s" % (probe.get("version"), probe.get("api_version"),
                                                                            probe.get("docker_host")), **details)
    why = "%s: %s" % (probe.get("docker_host"), probe.get("error"))
    if not expected:
        return result("docker", SKIP, "not reachable and not expected (docker_expected=false): %s" % why, **details)
    return result("docker", FAIL, "not reachable: %s" % why, **details)


def _registry_check(name, probes, kind, names, nothing):
    """PASS when every registry answered (and took its credentials), else FAIL naming each one that did not."""
    if not probes:
        return skipped(name, nothing)
    names = names or {}
    lines, bad, problems = [], [], []
    for observed in probes:
        ok, line = registry.verdict(observed, kind, names.get("registry_ca_files") or "registry_ca_files",
                                    names.get("registry_logins") or "registry_logins")
        lines.append(line)
        if not ok:
            bad.append(observed["url"])
            problems.append(line)
    reason = "%d/%d %s; %s" % (len(probes) - len(bad), len(probes), "reachable" if name == "registry_mirrors" else "usable",
                               "; ".join(lines))
    return result(name, FAIL if bad else PASS, reason, unreachable=bad, problems=problems, probes=probes)


def check_registry_mirrors(probes, names=None):
    """probes: registry.probe results, one per mirror: each must answer /v2/ (200, or 401: auth required)."""
    return _registry_check("registry_mirrors", probes, "mirror", names, "no mirrors configured")


def check_registry_logins(probes, names=None):
    """probes: registry.probe results with credentials, one per login: each registry must take its credentials."""
    return _registry_check("registry_logins", probes, "registry", names, "no registry logins configured")


def is_nvidia_gpu(vendor, pci_class):
    return vendor.strip().lower() == NVIDIA_PCI_VENDOR and pci_class.strip().lower()[:6] in GPU_PCI_CLASSES


def gpu_summary(observed):
    """observed: {"pci_gpus": [...], "driver_gpus": [...], "device_nodes": [...], "driver_version", "smi"}."""
    pci = len(observed.get("pci_gpus") or [])
    driver = len(observed.get("driver_gpus") or [])
    nodes = len(observed.get("device_nodes") or [])
    # /dev/nvidiaN only exist once the driver is loaded; inside a container they may be all there is.
    driver_loaded = bool(observed.get("driver_version")) or driver > 0 or nodes > 0
    smi = observed.get("smi") or {}
    names = sorted(set(gpu.get("name") for gpu in smi.get("gpus") or [] if gpu.get("name")))
    return dict(count=(driver or nodes) if driver_loaded else 0, pci_count=pci, driver_count=driver, device_node_count=nodes,
                driver_loaded=driver_loaded, driver_version=observed.get("driver_version"), present=pci > 0 or driver_loaded,
                names=names, pci_gpus=observed.get("pci_gpus") or [], smi=observed.get("smi"))


def check_gpu(min_count, observed):
    info = gpu_summary(observed)
    count = info["count"]
    found = "%d usable NVIDIA GPU(s)%s" % (count, (" (%s)" % ", ".join(info["names"])) if info["names"] else "")
    if info["driver_loaded"]:
        driver = "driver %s" % (info["driver_version"] or "loaded")
        if info["pci_count"] > count:
            # A GPU the driver lost ("fallen off the bus") still shows on PCI.
            driver += ", but %d on PCI" % info["pci_count"]
    else:
        driver = "no NVIDIA driver loaded, %d on PCI" % info["pci_count"]
    if min_count <= 0:
        if not info["present"]:
            return result("gpu", SKIP, "no NVIDIA GPU found, none expected (gpu_min_count=0)", **info)
        return result("gpu", PASS, "%s, %s" % (found, driver), **info)
    if count < min_count:
        return result("gpu", FAIL, "%s, need >= %d; %s" % (found, min_count, driver), **info)
    return result("gpu", PASS, "%s (>= %d), %s" % (found, min_count, driver), **info)


def check_cuda(asked, outcome):
    """outcome: parsed output of CUDA_PROBE ({"error"} or {"driver_version", "devices"})."""
    if not asked:
        return skipped("cuda", "not asked (cuda_check=false)")
    if outcome.get("error"):
        return result("cuda", FAIL, outcome["error"], **outcome)
    devices = outcome.get("devices") or []
    broken = [device for device in devices if not device.get("ok")]
    version = outcome.get("driver_version") or 0
    api = "%d.%d" % (version // 1000, (version % 1000) // 10)
    if not devices:
        return result("cuda", FAIL, "CUDA %s initialised but reports no device" % api, **outcome)
    if broken:
        return result("cuda", FAIL, "CUDA %s: %s" % (api, "; ".join("GPU %s %s: %s" % (d.get("index"), d.get("name"), d.get("error"))
                                                                    for d in broken)), **outcome)
    return result("cuda", PASS, "CUDA %s: %d device(s) passed a memory round trip (%s)" % (
        api, len(devices), ", ".join(sorted(set(d.get("name") or "?" for d in devices)))), **outcome)


def check_clock(max_skew, target_time, controller_before=None, controller_after=None):
    """Offset of the target's clock from the controller's.

    The controller read its clock at controller_before (task start) and controller_after (result back, minus
    the module's own run time). The target read its clock in between, so the controller's clock at that moment
    lies in [before, after]: the offset is measured against the middle, give or take half the window.
    """
    if controller_before is None:
        return skipped("clock", "no controller time given (run the module through its action plugin)")
    if controller_after is None or controller_after < controller_before:
        controller_after = controller_before
    middle = (controller_before + controller_after) / 2.0
    offset = target_time - middle
    uncertainty = (controller_after - controller_before) / 2.0
    direction = "ahead of" if offset >= 0 else "behind"
    reason = "target is %.2f s %s the controller (+/- %.2f s), max %s s" % (abs(offset), direction, uncertainty, _num(max_skew))
    details = dict(offset_seconds=round(offset, 3), uncertainty_seconds=round(uncertainty, 3), max_skew_seconds=max_skew)
    return result("clock", FAIL if abs(offset) > max_skew else PASS, reason, **details)


def summarize(results, required):
    """Mark required checks; return (results, failed_required names, table lines)."""
    marked = []
    for item in results:
        item = dict(item)
        item["required"] = item["name"] in required
        marked.append(item)
    failed_required = [item["name"] for item in marked if item["required"] and item["status"] == FAIL]
    return marked, failed_required, format_table(marked)


def replace_check(results, new):
    """Swap in a recomputed check (keeping its required flag); return (results, failed_required, table lines)."""
    replaced = []
    for item in results:
        if item["name"] == new["name"]:
            item = dict(new, required=item.get("required", False))
        replaced.append(item)
    failed_required = [item["name"] for item in replaced if item.get("required") and item["status"] == FAIL]
    return replaced, failed_required, format_table(replaced)


def format_table(results):
    headers = ("CHECK", "STATUS", "REQUIRED", "REASON")
    rows = [(item["name"], item["status"], "yes" if item.get("required") else "no", item["reason"]) for item in results]
    widths = [max([len(headers[col])] + [len(row[col]) for row in rows]) for col in range(3)]
    lines = []
    for row in [headers] + rows:
        lines.append("%s  %s  %s  %s" % (row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2].ljust(widths[2]), row[3]))
    counts = dict((status, sum(1 for item in results if item["status"] == status)) for status in (PASS, FAIL, SKIP))
    lines.append("%d PASS, %d FAIL, %d SKIP" % (counts[PASS], counts[FAIL], counts[SKIP]))
    return lines


# ---------------------------------------------------------------- input checks

# The module's options: the module and the action plugin (which checks the input before the round trip) share them.
ARGUMENT_SPEC = dict(
    checks=dict(type="list", elements="str", choices=list(CHECK_NAMES), default=list(CHECK_NAMES)),
    required=dict(type="list", elements="str", choices=list(CHECK_NAMES), default=[]),
    commands=dict(type="list", elements="str", default=[]),
    supported_architectures=dict(type="list", elements="str", default=["x86_64", "aarch64"]),
    supported_os=dict(type="list", elements="str", default=["debian-12", "debian-13", "ubuntu-22.04", "ubuntu-24.04"]),
    python_min_version=dict(type="str", default="3.9"),
    disk_path=dict(type="path", default="/var/lib/docker"),
    disk_min_free_gb=dict(type="float", default=20),
    docker_host=dict(type="str", default="unix:///var/run/docker.sock"),
    docker_expected=dict(type="bool", default=False),
    docker_timeout=dict(type="float", default=5),
    registry_mirrors=dict(type="list", elements="str", default=[]),
    registry_logins=registry.LOGINS_ARGUMENT_SPEC,
    # Controller paths, read by the action plugin into registry_ca_certificates (host[:port] -> PEM) for the module.
    registry_ca_files=dict(type="dict", default={}),
    registry_ca_certificates=dict(type="dict", default={}),
    registry_timeout=dict(type="float", default=5),
    registry_validate_certs=dict(type="bool", default=True),
    gpu_min_count=dict(type="int", default=0),
    cuda_check=dict(type="bool", default=False),
    cuda_timeout=dict(type="int", default=60),
    nvidia_smi=dict(type="str", default="nvidia-smi"),
    clock_max_skew=dict(type="float", default=5),
    gather_subset=dict(type="list", elements="str", default=[]),
    gather_timeout=dict(type="int", default=10),
    # Read by Ansible's local fact collector (ansible_local), as setup's option of the same name.
    fact_path=dict(type="path", default="/etc/ansible/facts.d"),
    input_names=dict(type="dict", default={}),
    controller_time=dict(type="float"),
)

# What `setup` always collects with the subset `min` (the minimal_gather_subset of ansible/modules/setup.py, which the
# fact collector API takes as an argument; tests/unit/plugins/action/test_preflight_facts.py keeps the two equal).
MINIMAL_GATHER_SUBSET = frozenset(["apparmor", "caps", "cmdline", "date_time", "distribution", "dns", "env", "fips", "local",
                                   "lsb", "pkg_mgr", "platform", "python", "selinux", "service_mgr", "ssh_pub_keys", "user"])

_DOTTED_VERSION = re.compile(r"[0-9]+(\.[0-9]+)*\Z")


def input_problems(params, names=None):
    """What the argument spec cannot catch in the (coerced) options, one '<name>: <value> <why>' each.

    names maps an option to the name the caller knows it by (the role passes its variables' names).
    """
    names = names or {}
    problems = []

    def problem(option, value, why):
        problems.append("%s: %s %s" % (names.get(option) or option, value, why))

    for url in params.get("registry_mirrors") or []:
        why = http_url_problem(url)
        if why:
            problem("registry_mirrors", repr(url), why)
    for login in params.get("registry_logins") or []:
        why = registry_host_problem(login.get("registry"))
        if why:
            problem("registry_logins", "registry %r" % login.get("registry"), why)
        if not str(login.get("username") or "").strip():
            problem("registry_logins", "registry %r" % login.get("registry"), "has no username")
    for where in sorted(set(params.get("registry_ca_files") or {}) | set(params.get("registry_ca_certificates") or {})):
        why = registry_host_problem(where)
        if why:
            problem("registry_ca_files", repr(where), why + " (the certs.d directory name)")
    if docker_host_problem(params["docker_host"], ("unix", "tcp")):
        problem("docker_host", params["docker_host"], "is neither unix:///path nor tcp://host:port")
    if not _DOTTED_VERSION.match(str(params["python_min_version"])):
        problem("python_min_version", params["python_min_version"], "is not a dotted version like 3.9")
    for option, minimum, why in (("disk_min_free_gb", 0, "must be >= 0"), ("gpu_min_count", 0, "must be >= 0")):
        if params[option] < minimum:
            problem(option, params[option], why)
    for option in ("clock_max_skew", "docker_timeout", "registry_timeout", "cuda_timeout", "gather_timeout"):
        if params[option] <= 0:
            problem(option, params[option], "must be > 0")
    return problems


def required_failure(host, results, failed_required, names=None):
    """The message that fails a host whose required checks failed: the checks with their reasons, then the table."""
    by_name = dict((item["name"], item) for item in results)
    return "Required preflight checks failed on %s: %s. Fix the host, or drop the check from %s.\n%s" % (
        host, "; ".join("%s (%s)" % (name, by_name[name]["reason"]) for name in failed_required),
        (names or {}).get("required") or "required", "\n".join(format_table(results)))


# ---------------------------------------------------------------- probes (read the host)


def probe_commands(names, path_env=None):
    # Ansible runs modules with a non-login PATH that may lack the sbin directories.
    search = (path_env if path_env is not None else os.environ.get("PATH", "")).split(os.pathsep)
    search += [entry for entry in SBIN_DIRS if entry not in search]
    path = os.pathsep.join(entry for entry in search if entry)
    return dict((name, shutil.which(name, path=path)) for name in names)


def read_text(path, default=""):
    try:
        with open(path, "r") as handle:
            return handle.read()
    except (IOError, OSError):
        return default


def probe_os_release(root="/"):
    for candidate in ("etc/os-release", "usr/lib/os-release"):
        text = read_text(os.path.join(root, candidate), None)
        if text is not None:
            return parse_os_release(text)
    return {}


def probe_disk(path):
    probed = nearest_existing_path(path)
    stats = os.statvfs(probed)
    # f_bavail: what an unprivileged writer gets, as df shows; the root reserve is not counted on.
    return probed, stats.f_bavail * stats.f_frsize, stats.f_blocks * stats.f_frsize


def probe_binfmt(root="/", kernel_release=None):
    kernel_release = kernel_release or os.uname()[2]
    filesystems = read_text(os.path.join(root, "proc/filesystems"))
    mounted = os.path.exists(os.path.join(root, "proc/sys/fs/binfmt_misc/status"))
    module_source = None
    modules_dir = os.path.join(root, "lib/modules", kernel_release)
    if re.search(r"(^|/)binfmt_misc\.ko", read_text(os.path.join(modules_dir, "modules.builtin")), re.M):
        module_source = "builtin (modules.builtin)"
    elif glob.glob(os.path.join(modules_dir, "kernel", "fs", "binfmt_misc.ko*")):
        module_source = "module (lib/modules/%s/kernel/fs)" % kernel_release
    else:
        match = re.search(r"^CONFIG_BINFMT_MISC=([ym])", read_text(os.path.join(root, "boot", "config-" + kernel_release)), re.M)
        if match:
            module_source = "%s (boot/config-%s)" % ("builtin" if match.group(1) == "y" else "module", kernel_release)
    return filesystems, mounted, module_source, kernel_release


def probe_docker(docker_host, timeout=5.0):
    """GET /_ping and /version on the engine API: read-only, needs no docker CLI or SDK."""
    observed = dict(docker_host=docker_host, reachable=False, version=None, api_version=None, error=None)
    try:
        parse_docker_host(docker_host)
    except ValueError as exc:
        observed["error"] = str(exc)
        return observed
    try:
        for request in ("/_ping", "/version"):
            status, body = engine_api.get(docker_host, request, timeout)
            if status != 200:
                observed["error"] = "GET %s answered HTTP %d" % (request, status)
                return observed
            if request == "/version":
                info = json.loads(body.decode("utf-8"))
                observed["version"] = info.get("Version")
                observed["api_version"] = info.get("ApiVersion")
    except (OSError, ValueError, http_client.HTTPException) as exc:
        observed["error"] = _describe_error(exc)
        return observed
    observed["reachable"] = True
    return observed


def _describe_error(exc):
    reason = getattr(exc, "reason", None)
    if reason is not None and not isinstance(reason, str):
        exc = reason
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    if isinstance(exc, socket.timeout) or "timed out" in text:
        return "timed out"
    return text


def probe_nvidia(root="/", run_smi=None):
    """What the kernel shows of NVIDIA GPUs: PCI functions, the driver's /proc entries and /dev nodes."""
    pci_gpus = []
    for device in sorted(glob.glob(os.path.join(root, "sys/bus/pci/devices/*"))):
        vendor = read_text(os.path.join(device, "vendor"))
        pci_class = read_text(os.path.join(device, "class"))
        if is_nvidia_gpu(vendor, pci_class):
            pci_gpus.append(dict(address=os.path.basename(device), device_id=read_text(os.path.join(device, "device")).strip()))
    version_text = read_text(os.path.join(root, "proc/driver/nvidia/version"))
    match = re.search(r"Kernel Module(?: for [^ ]+)?\s+([0-9][0-9.]+)", version_text)
    driver_version = match.group(1) if match else (version_text.splitlines()[0].strip() if version_text.strip() else None)
    driver_gpus = sorted(os.path.basename(entry) for entry in glob.glob(os.path.join(root, "proc/driver/nvidia/gpus/*")))
    device_nodes = sorted(node for node in glob.glob(os.path.join(root, "dev/nvidia*")) if re.search(r"/nvidia[0-9]+$", node))
    observed = dict(pci_gpus=pci_gpus, driver_version=driver_version, driver_gpus=driver_gpus, device_nodes=device_nodes, smi=None)
    if run_smi is not None and (driver_gpus or device_nodes):
        observed["smi"] = run_smi()
    return observed


def parse_smi_csv(text):
    """nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader,nounits"""
    gpus = []
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) >= 4 and fields[0].isdigit():
            gpus.append(dict(index=int(fields[0]), name=fields[1], memory_mib=int(fields[2]) if fields[2].isdigit() else None,
                             driver_version=fields[3]))
    return gpus


def run_nvidia_smi(executable, timeout=20):
    try:
        completed = subprocess.run([executable, "--query-gpu=index,name,memory.total,driver_version", "--format=csv,noheader,nounits"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return dict(error=_describe_error(exc), gpus=[])
    if completed.returncode != 0:
        return dict(error=(completed.stderr or completed.stdout).decode("utf-8", "replace").strip() or "exit %d" % completed.returncode,
                    gpus=[])
    return dict(error=None, gpus=parse_smi_csv(completed.stdout.decode("utf-8", "replace")))


# Runs in a child interpreter so a hung or crashing driver cannot take the module down. Uses the CUDA
# driver API through ctypes (no toolkit needed): init, then per device a context and a 1 MiB copy to the
# device and back, compared byte for byte.
CUDA_PROBE = r"""
import ctypes, json, sys
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as exc:
    print(json.dumps({"error": "libcuda.so.1 cannot be loaded (no NVIDIA driver userspace?): %s" % exc}))
    sys.exit(0)

def err(code):
    text = ctypes.c_char_p()
    try:
        if cuda.cuGetErrorName(code, ctypes.byref(text)) == 0 and text.value:
            return text.value.decode()
    except AttributeError:
        pass
    return "CUDA error %d" % code

code = cuda.cuInit(0)
if code:
    print(json.dumps({"error": "cuInit failed: %s" % err(code)}))
    sys.exit(0)
version = ctypes.c_int()
cuda.cuDriverGetVersion(ctypes.byref(version))
count = ctypes.c_int()
code = cuda.cuDeviceGetCount(ctypes.byref(count))
if code:
    print(json.dumps({"error": "cuDeviceGetCount failed: %s" % err(code), "driver_version": version.value}))
    sys.exit(0)
size = 1 << 20
pattern = bytes(bytearray(i % 251 for i in range(size)))
devices = []
for index in range(count.value):
    entry = {"index": index, "ok": False, "name": None, "error": None}
    devices.append(entry)
    device = ctypes.c_int()
    context = ctypes.c_void_p()
    pointer = ctypes.c_uint64()
    try:
        code = cuda.cuDeviceGet(ctypes.byref(device), index)
        if code:
            entry["error"] = "cuDeviceGet: " + err(code)
            continue
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, device)
        entry["name"] = name.value.decode(errors="replace")
        code = cuda.cuCtxCreate_v2(ctypes.byref(context), 0, device)
        if code:
            entry["error"] = "cuCtxCreate: " + err(code)
            continue
        code = cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(size))
        if code:
            entry["error"] = "cuMemAlloc: " + err(code)
            continue
        back = ctypes.create_string_buffer(size)
        code = cuda.cuMemcpyHtoD_v2(pointer, ctypes.c_char_p(pattern), ctypes.c_size_t(size)) or \
            cuda.cuMemcpyDtoH_v2(back, pointer, ctypes.c_size_t(size))
        if code:
            entry["error"] = "cuMemcpy: " + err(code)
        elif back.raw != pattern:
            entry["error"] = "data copied to the GPU came back different"
        else:
            entry["ok"] = True
    finally:
        if pointer.value:
            cuda.cuMemFree_v2(pointer)
        if context.value:
            cuda.cuCtxDestroy_v2(context)
print(json.dumps({"driver_version": version.value, "devices": devices}))
"""


def probe_cuda(timeout=60, python=None):
    try:
        completed = subprocess.run([python or sys.executable, "-c", CUDA_PROBE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": "CUDA probe did not finish within %d s (hung driver?)" % timeout}
    except OSError as exc:
        return {"error": "cannot start the CUDA probe: %s" % exc}
    return parse_cuda_probe(completed.returncode, completed.stdout.decode("utf-8", "replace"),
                            completed.stderr.decode("utf-8", "replace"))


def parse_cuda_probe(returncode, stdout, stderr):
    lines = [line for line in stdout.splitlines() if line.strip()]
    if returncode == 0 and lines:
        try:
            return json.loads(lines[-1])
        except ValueError:
            pass
    tail = (stderr.strip().splitlines() or ["no output"])[-1]
    if returncode < 0:
        return {"error": "CUDA probe killed by signal %d (driver crash?): %s" % (-returncode, tail)}
    return {"error": "CUDA probe exited %d: %s" % (returncode, tail)}
