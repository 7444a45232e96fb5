"""The runtime image's entrypoint (roles/runtime_image/files/aisbench-entrypoint), run by bash.

Each test sources the real script and calls its functions, with the paths it touches under /etc,
/proc and /usr redirected into a temporary directory through its AIS_BENCH_* variables.

Its pure tests: tests/unit/roles/test_runtime_image_entrypoint_source.py.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

ENTRYPOINT = Path(__file__).resolve().parents[3] / "roles/runtime_image/files/aisbench-entrypoint"
HEALTHCHECK = ENTRYPOINT.with_name("aisbench-healthcheck")


@pytest.fixture
def env(tmp_path):
    """Environment that keeps the script inside tmp_path."""
    root = tmp_path / "swebench"
    values = {
        "PATH": os.environ["PATH"],
        "AIS_BENCH_ROOT": str(root),
        "AIS_BENCH_DAEMON_JSON": str(tmp_path / "etc/docker/daemon.json"),
        "AIS_BENCH_STATE_DIR": str(tmp_path / "run/aisbench"),
        "AIS_BENCH_BINFMT_DIR": str(tmp_path / "binfmt_misc"),
        "AIS_BENCH_PROFILE_FILE": str(tmp_path / "etc/profile.d/aisbench-platform.sh"),
        "AIS_BENCH_ENVIRONMENT_FILE": str(tmp_path / "etc/environment"),
        "AIS_BENCH_MOUNTINFO": str(tmp_path / "mountinfo"),
        "AIS_BENCH_HARBOR_AGENTS_DIR": str(tmp_path / "harbor/agents/installed"),
        "AIS_BENCH_RUN_DIR": str(tmp_path / "var/run"),
    }
    (tmp_path / "mountinfo").write_text(
        "22 1 0:21 / / rw,relatime - overlay overlay rw\n"
        "23 22 0:22 / /proc rw,nosuid - proc proc rw\n"
    )
    return values


def run(env, snippet, check=True):
    """Source the entrypoint and run a bash snippet; returns the CompletedProcess."""
    result = subprocess.run(
        ["bash", "-c", f'set -euo pipefail; source "{ENTRYPOINT}"; {snippet}'],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_script_is_valid_bash_and_executable():
    assert os.access(ENTRYPOINT, os.X_OK) and os.access(HEALTHCHECK, os.X_OK)
    subprocess.run(["bash", "-n", str(ENTRYPOINT)], check=True)
    subprocess.run(["sh", "-n", str(HEALTHCHECK)], check=True)


@pytest.mark.parametrize(
    ("machine", "expected"),
    [("x86_64", "amd64"), ("amd64", "amd64"), ("aarch64", "arm64"), ("arm64", "arm64"), ("riscv64", "riscv64")],
)
def test_arch_names(env, machine, expected):
    assert run(env, f"aisbench_arch {machine}").stdout.strip() == expected


def test_inner_daemon_json_is_installed_as_given(env, tmp_path):
    config = {"exec-opts": ["native.cgroupdriver=cgroupfs"], "registry-mirrors": ["https://m.example"]}
    out = run(dict(env, AIS_BENCH_DOCKERD_CONFIG=json.dumps(config)), "aisbench_inner_daemon_json").stdout
    assert json.loads(out) == config


def test_inner_daemon_json_defaults_to_the_image_file(env, tmp_path):
    default = tmp_path / "etc/aisbench/daemon.json"
    default.parent.mkdir(parents=True)
    default.write_text('{"default-address-pools": [{"base": "172.24.0.0/13", "size": 24}]}\n')
    env = dict(env, AIS_BENCH_DEFAULT_DAEMON_JSON=str(default))
    assert json.loads(run(env, "aisbench_inner_daemon_json").stdout)["default-address-pools"][0]["size"] == 24
    assert run(dict(env, AIS_BENCH_DEFAULT_DAEMON_JSON=str(tmp_path / "none")), "aisbench_inner_daemon_json").stdout == "{}\n"


@pytest.mark.parametrize("config", ["not json", "[1, 2]", '{"a": '])
def test_inner_daemon_json_refuses_what_is_not_a_json_object(env, config):
    result = run(dict(env, AIS_BENCH_DOCKERD_CONFIG=config), "aisbench_inner_daemon_json", check=False)
    assert result.returncode == 2 and "AIS_BENCH_DOCKERD_CONFIG is not a JSON object" in result.stderr


def test_forced_storage_driver(env, tmp_path):
    out = run(env, f"aisbench_choose_storage_driver vfs '{tmp_path}/docker'").stdout
    assert out == "vfs\tforced (AIS_BENCH_AGENT_STORAGE_DRIVER=vfs)\n"
    result = run(env, f"aisbench_choose_storage_driver 'vfs;x' '{tmp_path}/docker'", check=False)
    assert result.returncode == 2 and "'vfs;x' is not auto or a storage driver name" in result.stderr


ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="mounting an overlay needs root")


@ROOT_ONLY
def test_auto_picks_overlay2_on_a_plain_filesystem(env, tmp_path):
    """tmp_path is on the host's own filesystem (ext4 here), as a named volume is in the runtime container."""
    driver, reason = run(env, f"aisbench_choose_storage_driver auto '{tmp_path}/docker'").stdout.rstrip("\n").split("\t")
    assert driver == "overlay2"
    assert reason.startswith(f"auto: {tmp_path}/docker is on ") and reason.endswith(", overlay mount test passed")
    assert os.listdir(tmp_path / "docker") == []


@ROOT_ONLY
def test_auto_falls_back_to_vfs_on_an_overlay(env, tmp_path):
    """A data-root that is itself an overlay (a container's root without a volume) cannot hold overlay2."""
    for sub in ("lower", "upper", "work", "merged"):
        (tmp_path / sub).mkdir()
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                    f"lowerdir={tmp_path}/lower,upperdir={tmp_path}/upper,workdir={tmp_path}/work",
                    str(tmp_path / "merged")], check=True)
    try:
        out = run(env, f"aisbench_choose_storage_driver auto '{tmp_path}/merged/docker'").stdout
    finally:
        subprocess.run(["umount", str(tmp_path / "merged")], check=True)
    assert out == f"vfs\tauto: {tmp_path}/merged/docker is on overlayfs: overlay2 cannot stack\n"


def test_auto_falls_back_to_vfs_when_the_mount_test_fails(env, tmp_path):
    """A mount that fails (here: a mount command that always fails) gives vfs and says why."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "mount").write_text("#!/bin/sh\necho 'mount: wrong fs type, bad option' >&2\nexit 32\n")
    (fake / "mount").chmod(0o755)
    env = dict(env, PATH=f"{fake}:{env['PATH']}")
    driver, reason = run(env, f"aisbench_choose_storage_driver auto '{tmp_path}/docker'").stdout.rstrip("\n").split("\t")
    assert driver == "vfs"
    assert reason.endswith("failed: mount: wrong fs type, bad option")
    assert os.listdir(tmp_path / "docker") == []


def test_storage_flags_record_the_driver_and_the_reason(env, tmp_path):
    daemon_json = tmp_path / "etc/docker/daemon.json"
    daemon_json.parent.mkdir(parents=True)
    daemon_json.write_text("{}\n")
    (tmp_path / "run/aisbench").mkdir(parents=True)
    env = dict(env, AIS_BENCH_DATA_ROOT=str(tmp_path / "docker"), AIS_BENCH_AGENT_STORAGE_DRIVER="vfs")
    result = run(env, "aisbench_storage_flags")
    assert result.stdout.splitlines() == ["--storage-driver", "vfs"]
    assert (tmp_path / "run/aisbench/storage-driver").read_text() == "vfs\nforced (AIS_BENCH_AGENT_STORAGE_DRIVER=vfs)\n"
    assert "storage driver vfs: forced" in result.stderr
    daemon_json.write_text('{"storage-driver": "overlay2"}\n')
    assert run(env, "aisbench_storage_flags").stdout == ""
    assert (tmp_path / "run/aisbench/storage-driver").read_text() == "overlay2\nset in the inner daemon.json\n"


def test_another_drivers_layers_are_removed_and_volumes_kept(env, tmp_path):
    root = tmp_path / "docker"
    for path in ("image/vfs/imagedb", "vfs/dir/abc/usr", "image/overlay2/imagedb", "overlay2/l", "volumes/aisbench-agent-x/_data"):
        (root / path).mkdir(parents=True)
    (root / "vfs/dir/abc/usr/big").write_text("x" * 1000)
    out = run(env, f"aisbench_remove_other_driver_data overlay2 '{root}'; wait").stdout
    assert out.strip() == (f"removing the vfs layers of an earlier start from {root} "
                           "(images of the overlay2 engine are rebuilt by baked_images)")
    for _attempt in range(50):
        if sorted(os.listdir(root)) == ["image", "overlay2", "volumes"]:
            break
        time.sleep(0.1)
    assert sorted(os.listdir(root)) == ["image", "overlay2", "volumes"]
    assert os.listdir(root / "image") == ["overlay2"]
    assert run(env, f"aisbench_remove_other_driver_data overlay2 '{root}'").stdout == ""


def test_an_auto_fallback_to_vfs_keeps_the_overlay2_layers(env, tmp_path):
    root = tmp_path / "docker"
    for path in ("image/overlay2/imagedb", "overlay2/l"):
        (root / path).mkdir(parents=True)
    out = run(env, f"aisbench_remove_other_driver_data vfs '{root}' auto").stdout
    assert out.strip() == (f"keeping the overlay2 layers of an earlier start in {root} "
                           "(auto fell back to vfs; force a driver to remove them)")
    assert sorted(os.listdir(root)) == ["image", "overlay2"]


def test_write_if_changed(env, tmp_path):
    target = tmp_path / "etc/docker/daemon.json"
    assert run(env, f"aisbench_write_if_changed '{target}' 'a'").stdout.strip() == "changed"
    assert run(env, f"aisbench_write_if_changed '{target}' 'a'").stdout.strip() == "unchanged"
    assert run(env, f"aisbench_write_if_changed '{target}' 'b'").stdout.strip() == "changed"
    assert target.read_text() == "b\n"


def test_export_platform_on_arm64(env, tmp_path):
    environment = tmp_path / "etc/environment"
    environment.parent.mkdir(parents=True)
    environment.write_text('PATH="/usr/bin"\nDOCKER_DEFAULT_PLATFORM=linux/arm64\n')
    out = run(env, 'aisbench_export_platform aarch64; echo "$DOCKER_DEFAULT_PLATFORM"').stdout.strip()
    assert out == "linux/amd64"
    assert (tmp_path / "etc/profile.d/aisbench-platform.sh").read_text() == "export DOCKER_DEFAULT_PLATFORM=linux/amd64\n"
    assert environment.read_text() == 'PATH="/usr/bin"\nDOCKER_DEFAULT_PLATFORM=linux/amd64\n'
    before = environment.stat().st_mtime_ns
    run(env, "aisbench_export_platform aarch64")
    assert environment.read_text() == 'PATH="/usr/bin"\nDOCKER_DEFAULT_PLATFORM=linux/amd64\n'
    assert environment.stat().st_mtime_ns == before


def test_export_platform_keeps_the_platform_the_container_was_given(env, tmp_path):
    """runtime_container_task_platform reaches the container as DOCKER_DEFAULT_PLATFORM: shells get the same one."""
    env = dict(env, DOCKER_DEFAULT_PLATFORM="linux/arm/v7")
    out = run(env, 'aisbench_export_platform aarch64; echo "$DOCKER_DEFAULT_PLATFORM"').stdout.strip()
    assert out == "linux/arm/v7"
    assert (tmp_path / "etc/profile.d/aisbench-platform.sh").read_text() == "export DOCKER_DEFAULT_PLATFORM=linux/arm/v7\n"
    assert (tmp_path / "etc/environment").read_text() == "DOCKER_DEFAULT_PLATFORM=linux/arm/v7\n"


def test_export_platform_is_a_no_op_on_amd64(env, tmp_path):
    out = run(env, 'aisbench_export_platform x86_64; echo "${DOCKER_DEFAULT_PLATFORM:-unset}"').stdout.strip()
    assert out == "unset"
    assert not (tmp_path / "etc").exists()


@pytest.fixture
def binfmt(tmp_path):
    """A fake binfmt_misc directory: register is a plain file here, so any write to it would show."""
    (tmp_path / "binfmt_misc").mkdir()
    (tmp_path / "binfmt_misc/register").write_text("")
    (tmp_path / "binfmt_misc/status").write_text("enabled\n")
    return tmp_path / "binfmt_misc"


def test_binfmt_reports_a_missing_amd64_handler_on_arm64_and_writes_nothing(env, binfmt):
    out = run(env, "aisbench_check_binfmt aarch64").stdout
    assert out.strip().startswith("binfmt qemu-x86_64: missing (run the qemu_binfmt role")
    assert (binfmt / "register").read_text() == ""
    assert sorted(path.name for path in binfmt.iterdir()) == ["register", "status"]


def test_binfmt_reports_a_present_handler(env, binfmt):
    (binfmt / "qemu-x86_64").write_text("enabled\n")
    assert run(env, "aisbench_check_binfmt aarch64").stdout.strip() == "binfmt qemu-x86_64: present"
    assert (binfmt / "register").read_text() == ""


def test_binfmt_skips_the_native_arch(env, binfmt):
    env = dict(env, AIS_BENCH_BINFMT_ARCHES="aarch64,x86_64")
    (binfmt / "qemu-x86_64").write_text("enabled\n")
    out = run(env, "aisbench_check_binfmt arm64").stdout.splitlines()
    assert out == ["binfmt qemu-aarch64: skipped (native architecture)", "binfmt qemu-x86_64: present"]


def test_binfmt_not_mounted_is_not_reported_missing(env, tmp_path):
    """A privileged container sees an empty /proc/sys/fs/binfmt_misc (not mounted) while the kernel holds the handler
    (seen on the emulated arm64 host): no false "missing"."""
    (tmp_path / "binfmt_misc").mkdir()
    out = run(env, "aisbench_check_binfmt aarch64").stdout.strip()
    assert out.startswith("binfmt qemu-x86_64: not visible here (binfmt_misc is not mounted"), out


def test_binfmt_does_nothing_on_amd64(env, binfmt):
    assert run(env, "aisbench_check_binfmt x86_64").stdout == ""


def test_patch_agents_counts_and_is_idempotent(env, tmp_path):
    agents = tmp_path / "harbor/agents/installed"
    (agents / "cline").mkdir(parents=True)
    (agents / "aider.py").write_text("original aider\n")
    (agents / "codex.py").write_text("same\n")
    (agents / "cline/cline.py").write_text("original cline\n")
    patches = tmp_path / "swebench/agent-patches"
    (patches / "cline").mkdir(parents=True)
    (patches / "aider.py").write_text("patched aider\n")
    (patches / "codex.py").write_text("same\n")
    (patches / "cline/cline.py").write_text("patched cline\n")
    (patches / "unknown_agent.py").write_text("x\n")
    first = run(env, f"aisbench_patch_agents '{patches}' '{agents}'")
    assert first.stdout.strip() == "agent patches: 2 patched, 2 skipped"
    assert "agent patch unknown_agent.py: skipped, Harbor has no unknown_agent.py" in first.stderr
    assert "agent patch codex.py: skipped, already applied" in first.stderr
    assert (agents / "aider.py").read_text() == "patched aider\n"
    assert (agents / "cline/cline.py").read_text() == "patched cline\n"
    assert not (agents / "unknown_agent.py").exists()
    second = run(env, f"aisbench_patch_agents '{patches}' '{agents}'")
    assert second.stdout.strip() == "agent patches: 0 patched, 4 skipped"


def test_patch_agents_without_a_patch_directory(env, tmp_path):
    out = run(env, f"aisbench_patch_agents '{tmp_path}/none' '{tmp_path}'").stdout.strip()
    assert out == f"agent patches: 0 patched, 0 skipped (no {tmp_path}/none)"


@pytest.mark.parametrize(("value", "mode"), [("1", "inner"), ("true", "inner"), ("0", "host"), ("no", "host")])
def test_docker_mode_from_the_variable(env, value, mode):
    assert run(dict(env, AIS_BENCH_AGENT_INNER_DOCKER=value), "aisbench_docker_mode").stdout.strip() == mode


def test_docker_mode_rejects_other_values(env):
    result = run(dict(env, AIS_BENCH_AGENT_INNER_DOCKER="maybe"), "aisbench_docker_mode", check=False)
    assert result.returncode == 2 and "is not 0, 1 or auto" in result.stderr


def test_docker_mode_detects_a_mounted_socket(env, tmp_path):
    assert run(env, "aisbench_docker_mode").stdout.strip() == "inner"
    with open(tmp_path / "mountinfo", "a", encoding="utf-8") as mountinfo:
        mountinfo.write("700 22 0:5 /docker.sock /run/docker.sock rw,nosuid - tmpfs tmpfs rw\n")
    assert run(env, "aisbench_docker_mode").stdout.strip() == "host"
    assert run(dict(env, AIS_BENCH_AGENT_INNER_DOCKER="1"), "aisbench_docker_mode").stdout.strip() == "inner"


def test_main_in_host_mode_patches_and_execs(env, tmp_path):
    agents = tmp_path / "harbor/agents/installed"
    agents.mkdir(parents=True)
    (agents / "aider.py").write_text("original\n")
    patches = tmp_path / "swebench/agent-patches"
    patches.mkdir(parents=True)
    (patches / "aider.py").write_text("patched\n")
    result = subprocess.run(
        [str(ENTRYPOINT), "sh", "-c", 'echo "exec: $0 $1"', "a", "b"],
        env=dict(env, AIS_BENCH_AGENT_INNER_DOCKER="0"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "exec: a b"
    assert "agent patches: 1 patched, 0 skipped" in result.stderr
    assert "host-socket mode" in result.stderr
    assert (tmp_path / "run/aisbench/docker-mode").read_text() == "host\n"
    for sub in ("jobs", "tasks", "config", "logs", "agent-patches", "run"):
        assert (tmp_path / "swebench" / sub).is_dir()
    assert not (tmp_path / "etc/docker/daemon.json").exists()


def test_main_rejects_a_bad_daemon_json_before_starting_the_engine(env, tmp_path):
    result = subprocess.run(
        [str(ENTRYPOINT), "true"],
        env=dict(env, AIS_BENCH_AGENT_INNER_DOCKER="1", AIS_BENCH_DOCKERD_CONFIG="registry-mirrors=bad"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "AIS_BENCH_DOCKERD_CONFIG is not a JSON object: registry-mirrors=bad" in result.stderr
    assert not (tmp_path / "etc/docker/daemon.json").exists()


def test_stale_pid_files_are_removed(env, tmp_path):
    """After a container restart the old pid may belong to another program (here: this test's bash)."""
    pid_file = tmp_path / "var/run/docker.pid"
    pid_file.parent.mkdir(parents=True)
    result = run(env, f'echo $$ > "{pid_file}"; aisbench_clear_stale_pid "{pid_file}" dockerd')
    assert result.stdout.strip() == f"removed stale {pid_file}"
    assert not pid_file.exists()
    assert run(env, f'aisbench_clear_stale_pid "{pid_file}" dockerd').stdout == ""


def test_live_pid_files_are_kept(env, tmp_path):
    """A pid file naming a running process of the expected name stays (an engine that is starting)."""
    fake = tmp_path / "dockerd"
    fake.symlink_to(subprocess.run(["bash", "-c", "command -v sleep"], capture_output=True, text=True, check=True).stdout.strip())
    process = subprocess.Popen([str(fake), "30"])
    try:
        pid_file = tmp_path / "var/run/docker.pid"
        pid_file.parent.mkdir(parents=True)
        pid_file.write_text(f"{process.pid}\n")
        assert run(env, f'aisbench_clear_stale_pid "{pid_file}" dockerd').stdout == ""
        assert pid_file.exists()
    finally:
        process.kill()
        process.wait()


def healthcheck(env, tmp_path, mode=None, launcher=True, docker_host=None, engine_timeout=None):
    """Run the image's HEALTHCHECK script with its paths in tmp_path; returns (CompletedProcess, seconds)."""
    launcher_path = tmp_path / "opt/harbor/bin/harbor"
    launcher_path.parent.mkdir(parents=True, exist_ok=True)
    if launcher:
        launcher_path.write_text("#!/bin/sh\nexit 0\n")
        launcher_path.chmod(0o755)
    if mode:
        state = Path(env["AIS_BENCH_STATE_DIR"])
        state.mkdir(parents=True, exist_ok=True)
        (state / "docker-mode").write_text(mode + "\n")
    values = dict(env, AIS_BENCH_HARBOR_LAUNCHER=str(launcher_path))
    if docker_host:
        values["DOCKER_HOST"] = docker_host
    if engine_timeout:
        values["AIS_BENCH_HEALTH_ENGINE_TIMEOUT"] = str(engine_timeout)
    start = time.monotonic()
    result = subprocess.run(["sh", str(HEALTHCHECK)], env=values, capture_output=True, text=True, check=False)
    return result, time.monotonic() - start


def test_healthcheck_without_harbor_launcher_is_unhealthy(env, tmp_path):
    result = healthcheck(env, tmp_path, mode="host", launcher=False)[0]
    assert result.returncode == 1
    assert "launcher" in result.stdout and "missing" in result.stdout


def test_healthcheck_in_host_mode_does_not_ask_an_engine(env, tmp_path):
    # host_socket mode: the host's engine is docker_engine's business; a dead socket does not make the container unhealthy.
    result = healthcheck(env, tmp_path, mode="host", docker_host="unix://%s/absent.sock" % tmp_path)[0]
    assert result.returncode == 0 and result.stdout.strip() == "healthy (host engine)"


DOCKER_CLI = pytest.mark.skipif(shutil.which("docker") is None, reason="needs the docker CLI (make setup installs docker.io)")


@DOCKER_CLI
def test_healthcheck_with_no_inner_engine_is_unhealthy(env, tmp_path):
    result = healthcheck(env, tmp_path, mode="inner", docker_host="unix://%s/absent.sock" % tmp_path)[0]
    assert result.returncode == 1 and "inner engine not answering" in result.stdout


@DOCKER_CLI
def test_healthcheck_is_bounded_when_the_engine_hangs(env, tmp_path):
    # An engine that accepts the connection and never answers (an overloaded host): the check ends by itself within
    # its engine timeout, well inside the HEALTHCHECK's 20 s, so the engine never has two checks running at once.
    path = str(tmp_path / "hung.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    try:
        result, seconds = healthcheck(env, tmp_path, mode="inner", docker_host="unix://" + path, engine_timeout=2)
    finally:
        server.close()
    assert result.returncode == 1 and "not answering within 2 s" in result.stdout
    assert 2 <= seconds < 6
    dockerfile = (HEALTHCHECK.parents[1] / "templates/Dockerfile.j2").read_text()
    check_timeout = int(re.search(r"^HEALTHCHECK .*--timeout=(\d+)s", dockerfile, re.M).group(1))
    script = HEALTHCHECK.read_text()
    engine_bound = int(re.search(r"AIS_BENCH_HEALTH_ENGINE_TIMEOUT:-(\d+)", script).group(1))
    kill_after = int(re.search(r"timeout -k (\d+)", script).group(1))
    assert engine_bound + kill_after < check_timeout, "the script's default bound must end before the HEALTHCHECK timeout"


def test_inner_engine_wait_counts_seconds_not_turns(env, tmp_path):
    """On an emulated host every `docker info` takes seconds: the timeout is the clock's, so the container exits (and
    its restart policy tries again) instead of waiting turns x seconds."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text("#!/bin/sh\nsleep 2\nexit 1\n")
    (bin_dir / "dockerd").write_text("#!/bin/sh\nexit 1\n")
    for name in ("docker", "dockerd"):
        (bin_dir / name).chmod(0o755)
    env = dict(env, PATH="%s:%s" % (bin_dir, env["PATH"]), AIS_BENCH_DOCKERD_TIMEOUT="4")
    start = time.monotonic()
    result = run(env, "aisbench_storage_flags() { :; }; aisbench_cgroup_nesting() { :; }; aisbench_start_dockerd", check=False)
    seconds = time.monotonic() - start
    assert result.returncode == 1 and "inner engine not ready after 4s" in result.stderr, result.stderr
    # turns would be 4 x (2 s + 1 s) = 12 s or more
    assert seconds < 10, seconds
