"""plugin_utils/_action.py: what the four action plugins share, run through the real ActionModule classes."""

from types import SimpleNamespace

import pytest
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task

from ansible_collections.aisbench.agent_runtime.plugins.action import file_bundle, fleet_report, fleet_shard_plan, task_sync
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._action import CollectionAction


def action(plugin, args, check_mode=False):
    task = Task()
    task.args = dict(args)
    context = PlayContext()
    context.check_mode = check_mode
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))  # nothing on a target is reached
    return plugin.ActionModule(task, connection, context, None, None, None)


@pytest.mark.parametrize("plugin, name", [(file_bundle, "file_bundle"), (task_sync, "task_sync"),
                                          (fleet_report, "fleet_report"), (fleet_shard_plan, "fleet_shard_plan")])
def test_every_action_plugin_is_a_collection_action(plugin, name):
    assert issubclass(plugin.ActionModule, CollectionAction)
    assert plugin.ActionModule.NAME == name
    assert plugin.ActionModule._supports_check_mode is True


def test_unknown_options_are_named_with_the_known_ones():
    unknown = CollectionAction._unknown_options
    assert unknown({"src": 1, "dest": 2}, ["src", "dest", "mode"]) is None
    assert unknown({"src": 1, "owner": 2, "force": 3}, ["src", "dest", "mode"]) == \
        "unknown options force, owner (src, dest and mode only)"
    assert unknown({"x": 1}, ["src", "dest"]) == "unknown options x (src and dest only)"
    assert unknown({"x": 1}, ["src"]) == "unknown options x (src only)"


def test_fail_says_nothing_was_changed():
    result = action(task_sync, {})._fail({"changed": True}, "src is required")
    assert result == {"failed": True, "changed": False, "msg": "task_sync: src is required; nothing was changed"}


def test_a_refusal_on_the_controller_fails_the_task_without_a_change(tmp_path):
    result = action(fleet_shard_plan, {"report_dir": str(tmp_path), "night": "bad night", "job_base": "nightly",
                                       "listings": {}}).run(task_vars={})
    assert result["failed"] is True and "changed" not in result
    assert result["msg"].startswith("night 'bad night' refused: ")
    report_dir = tmp_path / "reports"
    report_dir.write_text("a file, not a directory")
    result = action(fleet_report, {"report_dir": str(report_dir), "night": "2026-12-02"}).run(task_vars={})
    assert result["failed"] is True and "changed" not in result
    assert str(report_dir) in result["msg"]
    assert list(tmp_path.iterdir()) == [report_dir]


def test_a_bad_argument_is_refused_by_the_argument_spec(tmp_path):
    with pytest.raises(Exception, match="history"):
        action(fleet_shard_plan, {"report_dir": str(tmp_path), "night": "n1", "job_base": "j", "listings": {},
                                  "history": "many"}).run(task_vars={})
