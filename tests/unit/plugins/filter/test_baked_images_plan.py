# -*- coding: utf-8 -*-
"""plugins/filter/baked_images.py: the L1 plan the baked_images role loops over (names, actions, failures)."""

import os
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.filter import baked_images  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.filter.baked_images import FilterModule  # noqa: E402

FILTERS = FilterModule().filters()
DEFAULTS = {"registry": "", "repositories": {"default": "swebench/sweb.eval.x86_64."},
            "case_replace": {"__": "_1776_"}, "tag": "latest"}


def plan(cases, **options):
    return FILTERS["baked_images_plan"](cases, **dict(DEFAULTS, **options))


def test_the_filters_are_registered():
    assert set(FILTERS) == {"baked_images_plan", "baked_images_actions", "baked_images_upstream_failures",
                            "baked_images_build_failures"}


def test_plan_follows_the_naming_rule():
    assert plan([{"dataset": "swebench-verified", "id": "django__django-11099"}]) == [{
        "dataset": "swebench-verified", "id": "django__django-11099",
        "upstream": "swebench/sweb.eval.x86_64.django_1776_django-11099:latest",
        "archive": "", "archive_remote": False,
        "base": "swebench/swebench-verified-django__django-11099-base:latest",
        "prefix": "swebench/swebench-verified-django__django-11099"}]


def test_plan_local_names_are_lowercased_and_cleaned_and_dataset_names_map_them():
    entry, mapped = plan([{"dataset": "SWE Bench!", "id": 42}, {"dataset": "Weird/DS", "id": "Foo Bar"}],
                         dataset_names={"Weird/DS": "weird"})
    assert entry["base"] == "swebench/swe-bench--42-base:latest" and entry["id"] == "42"
    assert mapped["prefix"] == "swebench/weird-foo-bar"


def test_plan_upstream_from_registry_repository_replacements_and_tag():
    entry, other = plan([{"dataset": "swebench-verified", "id": "Foo__Bar-X"}, {"dataset": "mine", "id": "a__b"}],
                        registry="mirror.example.com:5000/", repositories={"mine": "me/task-", "default": "d/"},
                        case_replace={"__": "_1776_", "X": "y"}, tag="v1")
    # Replacements first (in order, case-sensitive), then lowercase.
    assert entry["upstream"] == "mirror.example.com:5000/d/foo_1776_bar-y:v1"
    assert other["upstream"] == "mirror.example.com:5000/me/task-a_1776_b:v1"
    assert plan([{"dataset": "x", "id": "y"}], repositories={})[0]["upstream"] == "y:latest"


@pytest.mark.parametrize("image, upstream", [
    ("reg:5000/x/y", "reg:5000/x/y:latest"),  # a registry port is not a tag
    ("x/y:1", "x/y:1"),
    ("x/y@sha256:00", "x/y@sha256:00"),
    ("", "swebench/sweb.eval.x86_64.c:latest"),  # empty: the naming rule
    (None, "swebench/sweb.eval.x86_64.c:latest"),
])
def test_plan_takes_the_case_image_and_adds_latest_without_tag_or_digest(image, upstream):
    assert plan([{"dataset": "d", "id": "c", "image": image}])[0]["upstream"] == upstream


def test_plan_refuses_a_case_whose_tag_is_not_a_docker_reference():
    with pytest.raises(AnsibleFilterError, match="case x/1 gives the tag swebench/Bad..Name-1-base:latest that is not a"
                                                 " valid Docker reference; map the dataset with baked_images_dataset_names"):
        plan([{"dataset": "x", "id": "1"}], dataset_names={"x": "Bad..Name"})


def test_plan_keeps_archive_and_reads_archive_remote_as_a_boolean():
    entry, = plan([{"dataset": "d", "id": "c", "archive": "/a.tar", "archive_remote": "yes"}])
    assert entry["archive"] == "/a.tar" and entry["archive_remote"] is True


@pytest.mark.parametrize("cases", ["abc", [{"dataset": "d"}], ["x"]])
def test_plan_refuses_what_is_not_a_list_of_cases(cases):
    with pytest.raises(AnsibleFilterError, match="baked_images_plan"):
        plan(cases)


CASES = [{"dataset": "d", "id": "built"}, {"dataset": "d", "id": "new", "archive": "/n.tar"},
         {"dataset": "d", "id": "shared1", "image": "same/img:1"}, {"dataset": "d", "id": "shared2", "image": "same/img:1"},
         {"dataset": "d", "id": "digest", "image": "x/y@sha256:00"}]
IMAGES = [{"RepoTags": ["swebench/d-built-base:latest"], "RepoDigests": None},
          {"RepoTags": None, "RepoDigests": ["x/y@sha256:00"]}]


def actions(rebuild=False, images=None):
    return FILTERS["baked_images_actions"](plan(CASES), IMAGES if images is None else images, rebuild=rebuild,
                                           template="/t/base.Dockerfile.j2")


def test_actions_skip_existing_tags_and_build_the_others_from_their_upstream():
    result = actions()
    assert result["skipped"] == ["swebench/d-built-base:latest"]
    assert [build["ref"] for build in result["l1"]] == [
        "swebench/d-new-base:latest", "swebench/d-shared1-base:latest", "swebench/d-shared2-base:latest",
        "swebench/d-digest-base:latest"]
    first = result["l1"][0]
    assert first == {"ref": "swebench/d-new-base:latest", "case": plan(CASES)[1], "agent": "",
                     "from": "swebench/sweb.eval.x86_64.new:latest", "template": "/t/base.Dockerfile.j2",
                     "dockerfile": "swebench_d-new-base.Dockerfile"}


def test_actions_list_each_missing_upstream_once_and_not_the_present_ones():
    # same/img:1 is needed twice, x/y@sha256:00 is on the engine by digest.
    assert [case["upstream"] for case in actions()["upstream"]] == [
        "swebench/sweb.eval.x86_64.new:latest", "same/img:1"]


def test_actions_rebuild_builds_existing_tags_but_needs_no_present_upstream():
    result = actions(rebuild="true", images=IMAGES + [{"RepoTags": ["swebench/sweb.eval.x86_64.built:latest"]}])
    assert result["skipped"] == [] and len(result["l1"]) == 5
    assert "swebench/sweb.eval.x86_64.built:latest" not in [case["upstream"] for case in result["upstream"]]


def test_actions_of_an_empty_plan():
    assert FILTERS["baked_images_actions"]([], []) == {"l1": [], "upstream": [], "skipped": []}


def test_upstream_failures_name_the_builds_that_needed_the_image():
    result = actions()
    loads = [{"item": {"upstream": "swebench/sweb.eval.x86_64.new:latest"}, "msg": "archive holds other/img"}]
    pulls = [{"item": {"upstream": "same/img:1"}, "image": {"Id": "sha256:1"}}]
    assert FILTERS["baked_images_upstream_failures"](result["l1"], loads + pulls, missing=result["upstream"]) == [{
        "image": "swebench/d-new-base:latest", "log": [],
        "error": "upstream image swebench/sweb.eval.x86_64.new:latest unavailable: archive holds other/img"}]


def test_upstream_failures_without_message_and_without_pull():
    result = actions()
    failures = FILTERS["baked_images_upstream_failures"](
        result["l1"], [{"item": {"upstream": "swebench/sweb.eval.x86_64.new:latest"}}], missing=result["upstream"],
        pull=False)
    assert [(failure["image"], failure["error"].rsplit(": ", 1)[1]) for failure in failures] == [
        ("swebench/d-new-base:latest", "failed"),
        ("swebench/d-shared1-base:latest", "missing and baked_images_pull is false"),
        ("swebench/d-shared2-base:latest", "missing and baked_images_pull is false")]


def job(ref, **result):
    return dict(result, item={"item": {"ref": ref}})


def test_build_failures_keep_the_last_log_lines_and_drop_them_from_the_error():
    message = ("Error building a - code: None, message: boom, logs: ['Step 1/3', '  ', \"it's \\\"q\\\"\", "
               "'l\\'4', 'e5\\n', 'last']")
    failures = FILTERS["baked_images_build_failures"]([job("a:1", finished=1, msg=message)], 3600, log_lines=3)
    assert failures == [{"image": "a:1", "error": "Error building a - code: None, message: boom",
                         "log": ["l\\'4", "e5\\n", "last"]}]
    every = FILTERS["baked_images_build_failures"]([job("a:1", finished=1, msg=message)], 3600, log_lines="15")
    assert every[0]["log"] == ["Step 1/3", "it's \\\"q\\\"", "l\\'4", "e5\\n", "last"]


def test_build_failures_timeouts_plain_messages_and_successes():
    results = [job("ok:1", finished=1, image={"Id": "sha256:2"}), job("slow:1", finished=0),
               job("plain:1", finished=1, msg="no logs here"), job("none:1", finished=1, image=None, msg="x")]
    assert FILTERS["baked_images_build_failures"](results, 60) == [
        {"image": "slow:1", "error": "timed out after 60 s", "log": []},
        {"image": "plain:1", "error": "no logs here", "log": []}]


def test_build_failure_errors_are_cut_at_500_characters_on_a_word():
    error = FILTERS["baked_images_build_failures"]([job("a:1", finished=1, msg="word " * 150 + ", logs: []")], 60)[0]
    assert len(error["error"]) <= 500 and error["error"].endswith("word...")
    assert baked_images._truncate("x" * 505) == "x" * 505  # Jinja's leeway: at most 5 over is kept


def test_build_log_of_a_message_without_logs():
    assert baked_images.build_log("failed") == []
    assert baked_images.build_log("failed, logs: []") == []
