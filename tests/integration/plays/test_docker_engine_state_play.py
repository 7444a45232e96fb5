"""docker_engine_state: whether the kernel enforces AppArmor (the two files dockerd reads); the docker group's members
(option group), which the docker_engine role's no-change decision reads instead of running the user module for every
docker_engine_users entry on every run; and what a read covered
(return read), which runtime_image checks before it decides from docker_engine's read instead of a read of its own.

Its pure tests: tests/unit/plugins/modules/test_docker_engine_state.py.
"""
import grp
import os
import pwd
from local_play import run_tasks


TASKS = """
    - name: Read with the group of this process
      aisbench.agent_runtime.docker_engine_state: {{group: "{group}", engine_info: false, daemon_json_path: "{missing}"}}
      register: with_group
    - name: Read with a group that does not exist, in check mode
      aisbench.agent_runtime.docker_engine_state: {{group: aisbench-no-such-group, engine_info: false, daemon_json_path: "{missing}"}}
      check_mode: true
      register: without_group
    - name: Read without a group
      aisbench.agent_runtime.docker_engine_state: {{engine_info: false, daemon_json_path: "{missing}"}}
      register: not_asked
    - name: Read more for a later task (a package, an image and an archive that do not exist, another engine)
      aisbench.agent_runtime.docker_engine_state:
        engine_info: false
        daemon_json_path: "{missing}"
        packages: [aisbench-no-such-package]
        images: ["aisbench/no-such-image:1"]
        archives: ["{missing_tar}"]
        docker_host: unix:///nonexistent/docker.sock
      register: more
"""


def test_group_members_for_real_over_the_local_connection(tmp_path):
    group = grp.getgrgid(os.getgid())
    me = pwd.getpwuid(os.getuid()).pw_name
    missing_tar = str(tmp_path / "no-such-archive.tar")
    results = run_tasks(tmp_path, TASKS.format(group=group.gr_name, missing=tmp_path / "etc" / "daemon.json",
                                               missing_tar=missing_tar),
                        ["with_group", "without_group", "not_asked", "more"])

    members = results["with_group"]["group_members"]
    assert me in members and members == sorted(set(members))  # my primary group lists me
    assert results["with_group"]["changed"] is False
    assert results["without_group"]["group_members"] is None and results["without_group"]["check_mode"] is True
    assert results["not_asked"]["group_members"] is None
    assert results["with_group"]["daemon_json"]["exists"] is False and results["with_group"]["info"] is None

    # What each read covered, as asked (docker_host empty: the CLI's default engine).
    assert results["not_asked"]["read"] == {"packages": [], "images": [], "archives": [], "docker_host": ""}
    more = results["more"]
    assert more["read"] == {"packages": ["aisbench-no-such-package"], "images": ["aisbench/no-such-image:1"],
                            "archives": [missing_tar], "docker_host": "unix:///nonexistent/docker.sock"}
    assert more["packages"] == {} and more["images"] == {"aisbench/no-such-image:1": None}
    assert more["archives"][missing_tar]["exists"] is False
