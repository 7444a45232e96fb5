# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The baked_images role's L1 plan: case image names, what to load, pull, build or skip, and the failures.

Pure functions of their inputs (the role's options and registered module results); the role's tasks loop over
what they return. Documented in baked_images_plan.yml, baked_images_actions.yml, baked_images_upstream_failures.yml
and baked_images_build_failures.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

_LOCAL_NAME = re.compile(r"[^a-z0-9._-]+")
_LOGS = re.compile(r"logs: \[(.*)\]\s*$")
_LOGS_TAIL = re.compile(r",? logs: \[.*$")
# One quoted item of the log list community.docker appends to a failed build's message ('...' or "...").
_LOG_ITEM = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")
ERROR_LENGTH = 500
# A Docker reference with a tag (distribution's reference grammar, lowercase repository components).
_DOCKER_REF = re.compile(r"^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*"
                         r":[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z")


def _local_name(value):
    return _LOCAL_NAME.sub("-", str(value).lower())


def _truncate(text, length=ERROR_LENGTH, end="...", leeway=5):
    """Jinja's truncate(length): whole words, '...' appended, unless the text is at most leeway characters over."""
    if len(text) <= length + leeway:
        return text
    return text[:length - len(end)].rsplit(" ", 1)[0] + end


def upstream_ref(case, registry="", repositories=None, case_replace=None, tag="latest"):
    """The upstream image of a case: its image, else <registry><repository of the dataset><case id>:<tag>.

    The case id gets case_replace's replacements (in order) and is lowercased; a reference without tag or digest
    gets :latest.
    """
    repositories = repositories or {}
    mangled = str(case["id"])
    for old, new in (case_replace or {}).items():
        mangled = mangled.replace(str(old), str(new))
    repository = repositories[case["dataset"]] if case["dataset"] in repositories else repositories.get("default", "")
    upstream = case.get("image") or "%s%s%s:%s" % (registry, repository, mangled.lower(), tag)
    upstream = str(upstream)
    if "@" not in upstream and ":" not in re.sub(r"^.*/", "", upstream):
        upstream += ":latest"
    return upstream


def baked_images_plan(cases, dataset_names=None, registry="", repositories=None, case_replace=None, tag="latest"):
    """One entry per case: dataset, id, upstream, archive, archive_remote, base (the L1 tag) and prefix."""
    if not isinstance(cases, list):
        raise AnsibleFilterError("baked_images_plan expects the list baked_images_cases, got %r" % (cases,))
    dataset_names = dataset_names or {}
    plan = []
    for case in cases:
        if not isinstance(case, dict) or "dataset" not in case or "id" not in case:
            raise AnsibleFilterError("baked_images_plan: a case needs dataset and id, got %r" % (case,))
        dataset = case["dataset"]
        local_dataset = dataset_names[dataset] if dataset in dataset_names else _local_name(dataset)
        prefix = "swebench/%s-%s" % (local_dataset, _local_name(case["id"]))
        if not _DOCKER_REF.match(prefix + "-base:latest"):
            raise AnsibleFilterError(
                "baked_images: case %s/%s gives the tag %s-base:latest that is not a valid Docker reference; map the"
                " dataset with baked_images_dataset_names" % (dataset, case["id"], prefix))
        plan.append({
            "dataset": dataset, "id": str(case["id"]),
            "upstream": upstream_ref(case, registry, repositories, case_replace, tag),
            "archive": case.get("archive", ""), "archive_remote": boolean(case.get("archive_remote", False), strict=False),
            "base": prefix + "-base:latest", "prefix": prefix,
        })
    return plan


def existing_refs(images):
    """Every tag and digest reference of docker_image_info's images."""
    refs = set()
    for image in images or []:
        refs.update(image.get("RepoTags") or [])
        refs.update(image.get("RepoDigests") or [])
    return refs


def baked_images_actions(plan, images, rebuild=False, template=""):
    """What to do for the planned cases, given the images the engine has (docker_image_info's images).

    Returns l1 (the builds: ref, case, agent, from, template, dockerfile), upstream (the cases whose upstream image
    is missing, once per image) and skipped (L1 tags that exist and are kept).
    """
    existing = existing_refs(images)
    rebuild = boolean(rebuild, strict=False)
    builds, missing, skipped = [], [], []
    for case in plan or []:
        if case["base"] in existing and not rebuild:
            skipped.append(case["base"])
            continue
        builds.append({"ref": case["base"], "case": case, "agent": "", "from": case["upstream"], "template": template,
                       "dockerfile": re.sub(r"[/:]", "_", case["prefix"]) + "-base.Dockerfile"})
        if case["upstream"] not in existing and case["upstream"] not in [item["upstream"] for item in missing]:
            missing.append(case)
    return {"l1": builds, "upstream": missing, "skipped": skipped}


def baked_images_upstream_failures(builds, results, missing=None, pull=True):
    """Failure records (image, error, log) of the builds whose upstream image did not load or pull.

    results: the looped docker_image (load) and docker_image_pull results; one without an image failed. With
    pull false, every missing upstream image without an archive is a failure.
    """
    unavailable = {}
    for result in results or []:
        if "image" not in result:
            unavailable[result["item"]["upstream"]] = result.get("msg", "failed")
    if not boolean(pull, strict=False):
        for case in missing or []:
            if not case["archive"]:
                unavailable[case["upstream"]] = "missing and baked_images_pull is false"
    return [{"image": build["ref"], "error": "upstream image %s unavailable: %s" % (build["from"], unavailable[build["from"]]),
             "log": []} for build in builds or [] if build["from"] in unavailable]


def build_log(message):
    """The log lines community.docker's docker_image appends to a failed build's message (``..., logs: [...]``)."""
    found = _LOGS.search(message)
    if not found:
        return []
    lines = ["".join(groups).strip() for groups in _LOG_ITEM.findall(found.group(1))]
    return [line for line in lines if line]


def baked_images_build_failures(results, timeout, log_lines=15):
    """Failure records (image, error, log) of the async_status results of a batch of builds.

    A build failed unless it finished with an image. error is the module's message without its logs (or the
    timeout), at most 500 characters; log the last log_lines lines of the build log.
    """
    failures = []
    for result in results or []:
        if result.get("finished") and "image" in result:
            continue
        message = str(result["msg"]) if "msg" in result else "timed out after %s s" % timeout
        failures.append({"image": result["item"]["item"]["ref"], "error": _truncate(_LOGS_TAIL.sub("", message)),
                         "log": build_log(message)[-int(log_lines):]})
    return failures


class FilterModule(object):
    def filters(self):
        return {
            "baked_images_plan": baked_images_plan,
            "baked_images_actions": baked_images_actions,
            "baked_images_upstream_failures": baked_images_upstream_failures,
            "baked_images_build_failures": baked_images_build_failures,
        }
