"""file_bundle: the action plugin and module for real with ansible-playbook over the local connection (the
docker_engine scenario sends its offline .deb files with it over community.docker.docker)."""

import os
import stat

from local_play import run_tasks


TASKS = """
    - name: Send two files from two directories
      aisbench.agent_runtime.file_bundle: {{src: ["{one}", "{two}"], dest: "{dest}"}}
      register: first
    - name: Send them again (same content)
      aisbench.agent_runtime.file_bundle: {{src: ["{one}", "{two}"], dest: "{dest}"}}
      register: second
    - name: Check mode
      aisbench.agent_runtime.file_bundle: {{src: ["{one}"], dest: "{dest}"}}
      check_mode: true
      register: checked
    - name: Two files with one base name
      aisbench.agent_runtime.file_bundle: {{src: ["{one}", "{same_name}"], dest: "{dest}"}}
      register: clash
      ignore_errors: true
    - name: A destination that is not a directory
      aisbench.agent_runtime.file_bundle: {{src: ["{one}"], dest: "{dest}/missing"}}
      register: no_dest
      ignore_errors: true
"""


def test_file_bundle_for_real_over_the_local_connection(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = tmp_path / "a" / "one_1.0_all.deb"
    two = tmp_path / "b" / "two_2.0_all.deb"
    one.write_bytes(os.urandom(300000))
    two.write_bytes(b"two\n")
    same_name = tmp_path / "b" / one.name
    same_name.write_bytes(b"other\n")
    dest = tmp_path / "dest"
    dest.mkdir()
    results = run_tasks(tmp_path, TASKS.format(one=one, two=two, same_name=same_name, dest=dest),
                        ["first", "second", "checked", "clash", "no_dest"])

    assert results["first"]["changed"] and sorted(results["first"]["written"]) == [one.name, two.name]
    assert results["first"]["sent_bytes"] > 300000
    assert results["second"]["changed"] is False and results["second"]["written"] == []
    assert results["checked"]["changed"] and results["checked"]["files"] == [one.name]
    assert results["clash"]["failed"] and "base names in src repeat: %s" % one.name in results["clash"]["msg"]
    assert results["no_dest"]["failed"] and "is not a directory on the target" in results["no_dest"]["msg"]
    assert (dest / one.name).read_bytes() == one.read_bytes() and (dest / two.name).read_bytes() == b"two\n"
    assert stat.S_IMODE(os.stat(str(dest / one.name)).st_mode) == 0o644
    # Nothing half-written is left beside the files.
    assert sorted(os.listdir(str(dest))) == sorted([one.name, two.name])
