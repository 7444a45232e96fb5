"""Task sync benchmark (part of `make bench`, bench/run.py): a SWE-bench-sized tree of small task files put on a
target with aisbench.agent_runtime.task_sync and with the file-by-file ansible.builtin.copy nightly.yml used before,
first time and unchanged rerun, side by side (bench/task_sync.yml).

The target is a plain container (aisbench-bench-task-sync, Python 3 only, no systemd) reached with
community.docker.docker like every bench target; it is removed at the end.
"""

import os
import random
import shutil

TARGET_IMAGE = "aisbench-test/debian-systemd:13"
TARGET = "aisbench-bench-task-sync"
FILES_PER_TASK = 6  # task.toml, instruction.md, environment/Dockerfile, solution/solve.sh, tests/test.sh, tests/config.json


def make_tree(root, files):
    """`files` small files in task directories shaped like Harbor tasks (0.2-4 KiB each, fixed seed)."""
    if os.path.isdir(root):
        shutil.rmtree(root)
    rng = random.Random(15)
    names = ["task.toml", "instruction.md", "environment/Dockerfile", "solution/solve.sh", "tests/test.sh",
             "tests/config.json"]
    written = 0
    task = 0
    while written < files:
        for name in names[:files - written]:
            path = os.path.join(root, "task-%04d" % task, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write(("%s of task %d\n" % (name, task)) * rng.randint(8, 160))
            if name.endswith(".sh"):
                os.chmod(path, 0o755)
            written += 1
        task += 1
    return task


def write_inventory(path):
    with open(path, "w") as handle:
        handle.write("all:\n  hosts:\n    %s:\n      ansible_connection: community.docker.docker\n"
                     "      ansible_python_interpreter: /usr/bin/python3\n" % TARGET)
    return path


def run_benchmark(workdir, files, copy_files, run_playbook, docker, log):
    """{'task_sync': {...}, 'copy': {...}} with first and rerun wall times for `files` (copy: `copy_files`)."""
    os.makedirs(workdir, exist_ok=True)
    inventory = write_inventory(os.path.join(workdir, "task-sync.yml"))
    docker("rm", "-f", TARGET, check=False)
    docker("run", "-d", "--name", TARGET, "--entrypoint", "sleep", TARGET_IMAGE, "infinity")
    try:
        extra = ["-e", "bench_method=ping", "-e", "bench_src=", "-e", "bench_dest="]
        rows = {"ping": run_playbook("task-sync-ping", "bench/task_sync.yml", inventory, extra, 1)}
        for method, count in (("task_sync", files), ("copy", copy_files)):
            if count <= 0:
                continue
            src = os.path.join(workdir, "tasks-%d" % count)
            tasks = make_tree(src, count)
            log("task sync: %s, %d files in %d task directories" % (method, count, tasks))
            extra = ["-e", "bench_method=%s" % method, "-e", "bench_src=%s" % src,
                     "-e", "bench_dest=/opt/bench/%s/tasks" % method]
            first = run_playbook("task-sync-%s-first" % method, "bench/task_sync.yml", inventory, extra, 1)
            rerun = run_playbook("task-sync-%s-rerun" % method, "bench/task_sync.yml", inventory, extra, 1)
            listed = docker("exec", TARGET, "sh", "-c", "find /opt/bench/%s/tasks -type f | wc -l" % method).stdout
            if int(listed.strip()) != count or rerun["changed"] != 0 or first["changed"] == 0:
                raise RuntimeError("task sync %s: %s files on the target (want %d), first changed=%d, rerun changed=%d"
                                   % (method, listed.strip(), count, first["changed"], rerun["changed"]))
            rows[method] = {"files": count, "tasks": tasks, "first": first, "rerun": rerun}
        return rows
    finally:
        docker("rm", "-f", TARGET, check=False)


def markdown(section):
    out = ["| method | files | first time | per file | unchanged rerun | rerun changed |",
           "|---|---:|---:|---:|---:|---:|"]
    for method, title in (("task_sync", "`task_sync` (one archive)"), ("copy", "`ansible.builtin.copy` (file by file)")):
        row = section.get(method)
        if row:
            out.append("| %s | %d | %.1f s | %.1f ms | %.1f s | %d |" % (
                title, row["files"], row["first"]["seconds"], 1000.0 * row["first"]["seconds"] / row["files"],
                row["rerun"]["seconds"], row["rerun"]["changed"]))
    if section.get("ping"):
        out.append("| baseline: one `ansible.builtin.ping` | - | %.1f s | - | - | 0 |" % section["ping"]["seconds"])
    return "\n".join(out)
