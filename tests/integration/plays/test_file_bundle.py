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
    - name: Check mode, every file in place
      aisbench.agent_runtime.file_bundle: {{src: ["{one}", "{two}"], dest: "{dest}"}}
      check_mode: true
      register: checked
    - name: Check mode again
      aisbench.agent_runtime.file_bundle: {{src: ["{one}", "{two}"], dest: "{dest}"}}
      check_mode: true
      register: checked_again
    - name: Change one file's content and the other's mode on the target
      ansible.builtin.shell: echo changed > "{dest}/{two_name}" && chmod 0600 "{dest}/{one_name}"
      changed_when: true
    - name: Check mode, one file differs and one has another mode
      aisbench.agent_runtime.file_bundle: {{src: ["{one}", "{two}"], dest: "{dest}"}}
      check_mode: true
      register: checked_differs
    - name: Check mode into a directory that is not there yet (an earlier task of the check run would make it)
      aisbench.agent_runtime.file_bundle: {{src: ["{one}"], dest: "{dest}/later"}}
      check_mode: true
      register: checked_no_dest
    - name: Put both right
      aisbench.agent_runtime.file_bundle: {{src: ["{one}", "{two}"], dest: "{dest}"}}
      register: repaired
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
    results = run_tasks(tmp_path, TASKS.format(one=one, two=two, same_name=same_name, dest=dest, one_name=one.name,
                                               two_name=two.name),
                        ["first", "second", "checked", "checked_again", "checked_differs", "checked_no_dest", "repaired",
                         "clash", "no_dest"])

    assert results["first"]["changed"] and sorted(results["first"]["written"]) == [one.name, two.name]
    assert results["first"]["sent_bytes"] > 300000
    assert results["second"]["changed"] is False and results["second"]["written"] == []
    # Check mode tells the truth: nothing to write on an unchanged target (twice), exactly what differs otherwise,
    # and it sends nothing.
    for name in ("checked", "checked_again"):
        assert results[name]["changed"] is False and results[name]["written"] == [], results[name]
        assert results[name]["files"] == [one.name, two.name] and "sent_bytes" not in results[name]
    assert results["checked_differs"]["changed"] is True
    assert results["checked_differs"]["written"] == [one.name, two.name], results["checked_differs"]
    assert results["checked_no_dest"]["changed"] is True and results["checked_no_dest"]["written"] == [one.name]
    assert results["repaired"]["changed"] is True and sorted(results["repaired"]["written"]) == [one.name, two.name]
    assert results["clash"]["failed"] and "base names in src repeat: %s" % one.name in results["clash"]["msg"]
    assert results["no_dest"]["failed"] and "is not a directory on the target" in results["no_dest"]["msg"]
    assert (dest / one.name).read_bytes() == one.read_bytes() and (dest / two.name).read_bytes() == b"two\n"
    assert stat.S_IMODE(os.stat(str(dest / one.name)).st_mode) == 0o644
    # Nothing half-written is left beside the files.
    assert sorted(os.listdir(str(dest))) == sorted([one.name, two.name])
