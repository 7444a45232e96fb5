# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""What the collection's action plugins share (controller only): refusing bad task arguments with nothing
changed, running a controller-side computation under an argument spec, and sending one file to the target."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shutil

from ansible.plugins.action import ActionBase


def _spelled(names):
    names = list(names)
    return names[0] if len(names) == 1 else "%s and %s" % (", ".join(names[:-1]), names[-1])


class CollectionAction(ActionBase):
    """Base of the collection's action plugins; NAME starts every refusal."""

    NAME = None
    _supports_check_mode = True
    _supports_async = False

    def _fail(self, result, msg):
        """Refuse the task: failed, not changed, and the message says nothing was changed."""
        result.update(failed=True, changed=False, msg="%s: %s; nothing was changed" % (self.NAME, msg))
        return result

    @staticmethod
    def _unknown_options(args, known):
        """The refusal for task arguments outside known (a list, in the order the message names them), or None."""
        unknown = sorted(set(args) - set(known))
        if not unknown:
            return None
        return "unknown options %s (%s only)" % (", ".join(unknown), _spelled(known))

    def _send_file(self, local_path, remote_name):
        """Copy one controller file into the task's temporary directory on the target; its path there."""
        remote_dir = self._connection._shell.tmpdir or self._make_tmp_path()
        remote_path = self._connection._shell.join_path(remote_dir, remote_name)
        self._transfer_file(local_path, remote_path)
        self._fixup_perms2((remote_dir, remote_path))
        return remote_path

    def _clean_up(self, local_dir=None):
        """Remove the controller's scratch directory (if any) and the task's temporary directory on the target."""
        if local_dir:
            shutil.rmtree(local_dir, ignore_errors=True)
        self._remove_tmp_path(self._connection._shell.tmpdir)

    def _run_on_controller(self, task_vars, argument_spec, compute, errors):
        """Validate the task's arguments, then result.update(compute(params, check_mode=...)).

        An exception of the errors types fails the task with its message and whatever it carries in exc.result
        (what was found before the failure), never reporting a change.
        """
        result = super(CollectionAction, self).run(task_vars=task_vars)
        params = self.validate_argument_spec(argument_spec=argument_spec)[1]
        try:
            result.update(compute(params, check_mode=self._play_context.check_mode))
        except errors as exc:
            result.update(getattr(exc, "result", None) or {})
            result.pop("changed", None)
            result.update(failed=True, msg=str(exc))
        return result
