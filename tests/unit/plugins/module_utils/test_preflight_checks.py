# -*- coding: utf-8 -*-
"""Pure check logic of plugins/module_utils/_preflight.py."""

import os
import sys
from pathlib import Path

import pytest

COLLECTIONS = Path(__file__).resolve().parents[4] / ".cache" / "collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _preflight as pf  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _registry as registry  # noqa: E402

GIB = 1024 ** 3


def test_commands_reports_missing_ones_in_order():
    outcome = pf.check_commands(["tar", "nope", "apt-get", "gone"], {"tar": "/usr/bin/tar", "apt-get": "/usr/bin/apt-get"})
    assert outcome["status"] == pf.FAIL
    assert outcome["details"]["missing"] == ["nope", "gone"]
    assert outcome["reason"] == "missing: nope, gone"
    assert pf.check_commands(["tar"], {"tar": "/usr/bin/tar"})["status"] == pf.PASS
    assert pf.check_commands([], {})["status"] == pf.SKIP


@pytest.mark.parametrize("machine, supported, status, platform", [
    ("x86_64", ["x86_64", "aarch64"], pf.PASS, "linux/amd64"),
    ("aarch64", ["x86_64", "aarch64"], pf.PASS, "linux/arm64"),
    ("aarch64", ["amd64", "arm64"], pf.PASS, "linux/arm64"),  # Docker spellings are accepted
    ("arm64", ["aarch64"], pf.PASS, "linux/arm64"),
    ("ppc64le", ["x86_64", "aarch64"], pf.FAIL, "linux/ppc64le"),
    ("ppc64le", [], pf.PASS, "linux/ppc64le"),
    ("mips64", [], pf.FAIL, None),
])
def test_architecture_is_mapped_and_checked(machine, supported, status, platform):
    outcome = pf.check_architecture(machine, supported)
    assert outcome["status"] == status
    assert outcome["details"]["platform"] == platform


def test_unknown_architecture_names_the_known_ones():
    outcome = pf.check_architecture("mips64", ["x86_64"])
    assert "unknown architecture 'mips64'" in outcome["reason"]
    assert "aarch64" in outcome["reason"]


OS_RELEASE_DEBIAN_13 = """PRETTY_NAME="Debian GNU/Linux 13 (trixie)"
NAME="Debian GNU/Linux"
VERSION_ID="13"
VERSION="13 (trixie)"
VERSION_CODENAME=trixie
ID=debian
HOME_URL="https://www.debian.org/"
"""

OS_RELEASE_UBUNTU = """# comment
NAME='Ubuntu'
VERSION_ID="24.04"
ID=ubuntu
ID_LIKE=debian
"""


def test_parse_os_release_handles_quotes_and_comments():
    parsed = pf.parse_os_release(OS_RELEASE_DEBIAN_13)
    assert parsed["ID"] == "debian"
    assert parsed["VERSION_ID"] == "13"
    assert parsed["PRETTY_NAME"] == "Debian GNU/Linux 13 (trixie)"
    assert pf.parse_os_release(OS_RELEASE_UBUNTU)["NAME"] == "Ubuntu"
    assert pf.os_release_key(pf.parse_os_release(OS_RELEASE_UBUNTU)) == "ubuntu-24.04"
    assert pf.os_release_key({"ID": "debian"}) == "debian"  # testing/sid have no VERSION_ID


@pytest.mark.parametrize("release, supported, status", [
    ({"ID": "debian", "VERSION_ID": "13"}, ["debian-12", "debian-13"], pf.PASS),
    ({"ID": "debian", "VERSION_ID": "11"}, ["debian-12", "debian-13"], pf.FAIL),
    ({"ID": "debian", "VERSION_ID": "12.5"}, ["debian-12"], pf.PASS),
    ({"ID": "debian", "VERSION_ID": "120"}, ["debian-12"], pf.FAIL),
    ({"ID": "ubuntu", "VERSION_ID": "24.04"}, ["ubuntu-24.04"], pf.PASS),
    ({"ID": "ubuntu", "VERSION_ID": "24.10"}, ["ubuntu-24.04"], pf.FAIL),
    ({"ID": "ubuntu", "VERSION_ID": "25.04"}, ["ubuntu"], pf.PASS),
    ({"ID": "rocky", "VERSION_ID": "9.4"}, ["debian-12"], pf.FAIL),
    ({"ID": "rocky", "VERSION_ID": "9.4"}, [], pf.PASS),
    ({}, ["debian-12"], pf.FAIL),
])
def test_os_release_against_the_supported_list(release, supported, status):
    assert pf.check_os_release(release, supported)["status"] == status


def test_python_versions_compare_numerically():
    assert pf.check_python((3, 13, 5), "3.9", "/usr/bin/python3")["status"] == pf.PASS
    assert pf.check_python((3, 10, 0), "3.9", "/usr/bin/python3")["status"] == pf.PASS
    failed = pf.check_python((3, 8, 10), "3.9", "/usr/bin/python3")
    assert failed["status"] == pf.FAIL
    assert failed["reason"] == "/usr/bin/python3 is Python 3.8.10, need >= 3.9"
    assert pf.check_python((3, 12, 1), "3.12.2", "py")["status"] == pf.FAIL
    with pytest.raises(ValueError):
        pf.parse_version("3.x")


def test_nearest_existing_path_walks_up_real_directories(tmp_path):
    (tmp_path / "var" / "lib").mkdir(parents=True)
    assert pf.nearest_existing_path(str(tmp_path / "var" / "lib" / "docker" / "overlay2")) == str(tmp_path / "var" / "lib")
    assert pf.nearest_existing_path(str(tmp_path / "var" / "lib")) == str(tmp_path / "var" / "lib")
    assert pf.nearest_existing_path("/nonexistent-aisbench/docker") == "/"


def test_disk_threshold_and_reason():
    passed = pf.check_disk("/var/lib/docker", "/var/lib/docker", 50 * GIB, 100 * GIB, 20)
    assert passed["status"] == pf.PASS
    assert passed["details"]["free_gb"] == 50.0
    failed = pf.check_disk("/data/docker", "/data", 5 * GIB, 100 * GIB, 20)
    assert failed["status"] == pf.FAIL
    assert failed["reason"] == "/data/docker (not there yet; measured at /data): 5.0 GiB free of 100.0 GiB, need >= 20 GiB"
    assert pf.check_disk("/d", "/d", int(2.5 * GIB), 10 * GIB, 2.5)["status"] == pf.PASS  # boundary is inclusive


def test_probe_disk_measures_a_real_parent(tmp_path):
    probed, free, total = pf.probe_disk(str(tmp_path / "not" / "yet"))
    assert probed == str(tmp_path)
    stats = os.statvfs(str(tmp_path))
    assert total == stats.f_blocks * stats.f_frsize
    assert 0 < free <= total


@pytest.mark.parametrize("filesystems, mounted, module, status, words", [
    ("nodev\tsysfs\nnodev\tbinfmt_misc\n", True, None, pf.PASS, "mounted"),
    ("nodev\tsysfs\nnodev\tbinfmt_misc\n", False, None, pf.PASS, "not mounted"),
    ("nodev\tsysfs\n", False, "module (lib/modules/6.1.0/kernel/fs)", pf.PASS, "loads on first mount"),
    ("nodev\tsysfs\n", False, None, pf.FAIL, "has no binfmt_misc"),
])
def test_binfmt_outcomes(filesystems, mounted, module, status, words):
    outcome = pf.check_binfmt(filesystems, mounted, module, "6.1.0")
    assert outcome["status"] == status
    assert words in outcome["reason"]


def test_probe_binfmt_reads_a_kernel_tree(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "filesystems").write_text("nodev\tsysfs\n\text4\n")
    modules = tmp_path / "lib" / "modules" / "6.1.0-28-arm64" / "kernel" / "fs"
    modules.mkdir(parents=True)
    assert pf.probe_binfmt(str(tmp_path), "6.1.0-28-arm64")[2] is None
    (tmp_path / "boot").mkdir()
    (tmp_path / "boot" / "config-6.1.0-28-arm64").write_text("# CONFIG_FOO is not set\nCONFIG_BINFMT_MISC=m\n")
    assert pf.probe_binfmt(str(tmp_path), "6.1.0-28-arm64")[2] == "module (boot/config-6.1.0-28-arm64)"
    (modules / "binfmt_misc.ko.xz").write_bytes(b"")
    assert pf.probe_binfmt(str(tmp_path), "6.1.0-28-arm64")[2] == "module (lib/modules/6.1.0-28-arm64/kernel/fs)"
    (modules.parent.parent / "modules.builtin").write_text("kernel/fs/binfmt_misc.ko\n")
    filesystems, mounted, source, release = pf.probe_binfmt(str(tmp_path), "6.1.0-28-arm64")
    assert source == "builtin (modules.builtin)"
    assert mounted is False
    assert pf.check_binfmt(filesystems, mounted, source, release)["status"] == pf.PASS


def test_docker_expected_or_not():
    up = {"docker_host": "unix:///var/run/docker.sock", "reachable": True, "version": "26.1.5", "api_version": "1.45", "error": None}
    down = {"docker_host": "unix:///var/run/docker.sock", "reachable": False, "version": None, "api_version": None,
            "error": "No such file or directory"}
    assert pf.check_docker(False, up)["status"] == pf.PASS
    assert pf.check_docker(True, up)["reason"] == "engine 26.1.5 (API 1.45) answers at unix:///var/run/docker.sock"
    assert pf.check_docker(False, down)["status"] == pf.SKIP
    failed = pf.check_docker(True, down)
    assert failed["status"] == pf.FAIL
    assert "No such file or directory" in failed["reason"]


@pytest.mark.parametrize("status, reachable", [(200, True), (401, True), (404, False), (403, False), (502, False)])
def test_registry_status_classification(status, reachable):
    observed = {"url": "https://mirror.example", "status": status, "api_version": "registry/2.0", "error": None}
    assert registry.verdict(observed)[0] is reachable


def test_registry_mirrors_aggregate():
    probes = [
        {"url": "https://mirror-a.example", "status": 401, "api_version": "registry/2.0", "error": None},
        {"url": "http://mirror-b.example:5000", "status": None, "api_version": None, "error": "connection refused"},
        {"url": "https://proxy.example", "status": 200, "api_version": None, "error": None},
    ]
    outcome = pf.check_registry_mirrors(probes)
    assert outcome["status"] == pf.FAIL
    assert outcome["details"]["unreachable"] == ["http://mirror-b.example:5000"]
    assert outcome["details"]["problems"] == ["mirror http://mirror-b.example:5000: not reachable: connection refused"]
    assert outcome["reason"].startswith("2/3 reachable; mirror https://mirror-a.example: 401 auth required; ")
    assert "mirror https://proxy.example: 200, no Docker-Distribution-API-Version header" in outcome["reason"]
    assert pf.check_registry_mirrors(probes[:1])["status"] == pf.PASS
    assert pf.check_registry_mirrors([])["status"] == pf.SKIP


NVIDIA_SMI_CSV = "0, NVIDIA A100-SXM4-80GB, 81920, 550.54.15\n1, NVIDIA A100-SXM4-80GB, 81920, 550.54.15\n"


def test_parse_smi_csv():
    gpus = pf.parse_smi_csv(NVIDIA_SMI_CSV + "\nNo devices were found\n")
    assert [gpu["index"] for gpu in gpus] == [0, 1]
    assert gpus[0]["name"] == "NVIDIA A100-SXM4-80GB"
    assert gpus[0]["memory_mib"] == 81920


def _observed(pci=0, driver=0, nodes=0, version=None, smi=None):
    return {"pci_gpus": [{"address": "0000:%02x:00.0" % i} for i in range(pci)],
            "driver_gpus": ["0000:%02x:00.0" % i for i in range(driver)],
            "device_nodes": ["/dev/nvidia%d" % i for i in range(nodes)], "driver_version": version, "smi": smi}


def test_gpu_none_expected_none_found_is_skip():
    outcome = pf.check_gpu(0, _observed())
    assert outcome["status"] == pf.SKIP
    assert outcome["details"]["present"] is False


def test_gpu_count_and_names():
    smi = {"error": None, "gpus": pf.parse_smi_csv(NVIDIA_SMI_CSV)}
    outcome = pf.check_gpu(2, _observed(pci=2, driver=2, nodes=2, version="550.54.15", smi=smi))
    assert outcome["status"] == pf.PASS
    assert outcome["reason"] == "2 usable NVIDIA GPU(s) (NVIDIA A100-SXM4-80GB) (>= 2), driver 550.54.15"
    assert pf.check_gpu(0, _observed(pci=2, driver=2, version="550.54.15"))["status"] == pf.PASS


def test_gpu_without_driver_is_not_usable():
    outcome = pf.check_gpu(1, _observed(pci=8))
    assert outcome["status"] == pf.FAIL
    assert outcome["details"]["count"] == 0
    assert "no NVIDIA driver loaded, 8 on PCI" in outcome["reason"]
    # Present but not required: reported, not failed.
    assert pf.check_gpu(0, _observed(pci=8))["status"] == pf.PASS


def test_gpu_lost_by_the_driver_shows():
    outcome = pf.check_gpu(8, _observed(pci=8, driver=7, nodes=7, version="550.54.15"))
    assert outcome["status"] == pf.FAIL
    assert "7 usable" in outcome["reason"]
    assert "but 8 on PCI" in outcome["reason"]


def test_gpu_inside_a_container_counts_device_nodes():
    # --gpus all shows /dev/nvidiaN but usually not /proc/driver/nvidia/gpus.
    outcome = pf.check_gpu(1, _observed(nodes=2))
    assert outcome["status"] == pf.PASS
    assert outcome["details"]["count"] == 2


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_probe_nvidia_reads_sysfs_proc_and_dev(tmp_path):
    devices = tmp_path / "sys" / "bus" / "pci" / "devices"
    for address, vendor, pci_class in [
        ("0000:00:00.0", "0x8086", "0x060000"),   # host bridge
        ("0000:07:00.0", "0x10de", "0x030200"),   # A100 (3D controller)
        ("0000:07:00.1", "0x10de", "0x040300"),   # HDMI audio function
        ("0000:0f:00.0", "0x10de", "0x030000"),   # VGA GPU
        ("0000:c1:00.0", "0x10de", "0x068000"),   # NVSwitch
    ]:
        _write(devices / address / "vendor", vendor + "\n")
        _write(devices / address / "class", pci_class + "\n")
        _write(devices / address / "device", "0x20b2\n")
    observed = pf.probe_nvidia(str(tmp_path))
    assert [gpu["address"] for gpu in observed["pci_gpus"]] == ["0000:07:00.0", "0000:0f:00.0"]
    assert observed["driver_version"] is None
    assert pf.check_gpu(1, observed)["status"] == pf.FAIL

    _write(tmp_path / "proc" / "driver" / "nvidia" / "version",
           "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  (dvs-builder@U16)  Fri Aug 16 2024\n"
           "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    for address in ("0000:07:00.0", "0000:0f:00.0"):
        (tmp_path / "proc" / "driver" / "nvidia" / "gpus" / address).mkdir(parents=True)
    for node in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-modeset"):
        _write(tmp_path / "dev" / node, "")
    calls = []
    observed = pf.probe_nvidia(str(tmp_path), run_smi=lambda: calls.append(1) or {"error": None, "gpus": []})
    assert observed["driver_version"] == "560.35.03"
    assert observed["device_nodes"] == [str(tmp_path / "dev" / "nvidia0"), str(tmp_path / "dev" / "nvidia1")]
    assert calls == [1]
    assert pf.check_gpu(2, observed)["reason"].endswith("driver 560.35.03")


def test_driver_version_of_the_proprietary_module(tmp_path):
    _write(tmp_path / "proc" / "driver" / "nvidia" / "version",
           "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n")
    assert pf.probe_nvidia(str(tmp_path))["driver_version"] == "550.54.15"


def test_cuda_outcomes():
    assert pf.check_cuda(False, {})["status"] == pf.SKIP
    assert pf.check_cuda(True, {"error": "cuInit failed: CUDA_ERROR_NO_DEVICE"})["reason"] == "cuInit failed: CUDA_ERROR_NO_DEVICE"
    good = {"driver_version": 12040, "devices": [{"index": 0, "ok": True, "name": "NVIDIA H100 80GB HBM3", "error": None}]}
    passed = pf.check_cuda(True, good)
    assert passed["status"] == pf.PASS
    assert passed["reason"] == "CUDA 12.4: 1 device(s) passed a memory round trip (NVIDIA H100 80GB HBM3)"
    broken = {"driver_version": 12020, "devices": [good["devices"][0],
                                                   {"index": 1, "ok": False, "name": "NVIDIA H100 80GB HBM3", "error": "cuMemAlloc: X"}]}
    assert pf.check_cuda(True, broken)["reason"] == "CUDA 12.2: GPU 1 NVIDIA H100 80GB HBM3: cuMemAlloc: X"
    assert pf.check_cuda(True, {"driver_version": 12040, "devices": []})["status"] == pf.FAIL


def test_parse_cuda_probe_failures():
    assert pf.parse_cuda_probe(0, '{"driver_version": 12040, "devices": []}\n', "")["driver_version"] == 12040
    assert pf.parse_cuda_probe(-11, "", "")["error"].startswith("CUDA probe killed by signal 11")
    assert pf.parse_cuda_probe(1, "", "Traceback...\nOSError: boom\n")["error"] == "CUDA probe exited 1: OSError: boom"


@pytest.mark.parametrize("target, before, after, status, offset", [
    (1000.0, 999.0, 1001.0, pf.PASS, 0.0),
    (1010.0, 1000.0, 1000.4, pf.FAIL, 9.8),
    (990.0, 1000.0, 1000.0, pf.FAIL, -10.0),
    (1004.0, 1000.0, 1000.0, pf.PASS, 4.0),
    (1000.0, 1000.0, 999.0, pf.PASS, 0.0),  # a negative window (clock stepped) counts as none
])
def test_clock_offset_against_the_middle_of_the_window(target, before, after, status, offset):
    outcome = pf.check_clock(5, target, before, after)
    assert outcome["status"] == status
    assert outcome["details"]["offset_seconds"] == pytest.approx(offset)


def test_clock_reason_and_missing_controller_time():
    assert pf.check_clock(5, 1000.0, 1010.0, 1012.0)["reason"] == "target is 11.00 s behind the controller (+/- 1.00 s), max 5 s"
    assert pf.check_clock(5, 1000.0)["status"] == pf.SKIP


def test_summary_table_and_required_failures():
    results = [pf.result("commands", pf.PASS, "all 5 present"), pf.result("disk", pf.FAIL, "too small"),
               pf.result("registry_mirrors", pf.FAIL, "0/1 reachable"), pf.skipped("gpu", "none")]
    marked, failed_required, table = pf.summarize(results, ["commands", "disk"])
    assert failed_required == ["disk"]
    assert [item["required"] for item in marked] == [True, True, False, False]
    assert table[0].split() == ["CHECK", "STATUS", "REQUIRED", "REASON"]
    assert table[2] == "disk              FAIL    yes       too small"
    assert table[-1] == "1 PASS, 2 FAIL, 1 SKIP"
    # Columns line up: the name column is as wide as the longest name.
    assert [line[18:22] for line in table[1:-1]] == ["PASS", "FAIL", "FAIL", "SKIP"]


def test_replace_check_keeps_required_and_recounts():
    marked, _unused, _unused = pf.summarize([pf.result("disk", pf.PASS, "ok"), pf.result("clock", pf.PASS, "fine")], ["clock"])
    replaced, failed_required, table = pf.replace_check(marked, pf.result("clock", pf.FAIL, "12 s ahead"))
    assert replaced[1]["required"] is True
    assert failed_required == ["clock"]
    assert table[-1] == "1 PASS, 1 FAIL, 0 SKIP"


def test_parse_docker_host():
    assert pf.parse_docker_host("unix:///var/run/docker.sock") == ("unix", "/var/run/docker.sock")
    assert pf.parse_docker_host("tcp://10.0.0.5:2376") == ("tcp", "10.0.0.5", 2376)
    assert pf.parse_docker_host("tcp://engine") == ("tcp", "engine", 2375)
    for bad in ("unix://relative.sock", "https://engine:2376", "ssh://user@engine", "tcp://:2375"):
        with pytest.raises(ValueError):
            pf.parse_docker_host(bad)
