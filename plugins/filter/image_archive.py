# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""image_archive_id: the image ID a docker save archive holds for a reference, from its manifest.json."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._image_archive import archive_state, image_id_for


def image_archive_id(archive, ref, strict=True):
    """The ID of the image tagged ref (or of the only image) in archive: a path on the controller, or the state the
    docker_engine_state module returned for a path on the target (its archives option).

    strict: a missing or unreadable archive, or one without such an image, is an error naming the path; else ''.
    """
    state = archive_state(archive) if isinstance(archive, str) else dict(archive or {})
    path = state.get("path", "")
    problem = None
    if not state.get("exists"):
        problem = "image archive %s: no such file" % path
    elif state.get("error"):
        problem = "image archive %s is not a docker save archive: %s" % (path, state["error"])
    else:
        image_id = image_id_for(state.get("images") or [], ref)
        if image_id:
            return image_id
        problem = "image archive %s holds no image tagged %s (and more than one image)" % (path, ref)
    if strict:
        raise AnsibleFilterError(problem)
    return ""


class FilterModule(object):
    def filters(self):
        return {"image_archive_id": image_archive_id}
