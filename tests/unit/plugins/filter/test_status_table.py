"""The status_table filter: direct calls and through Ansible's templating.
Its tests that start a process: tests/integration/plays/test_status_table_play.py."""
import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.filter.status_table import status_table

FULL = {
    "host": "gpu01",
    "container_state": "running",
    "restart_policy": "unless-stopped",
    "engine_version": "26.1.5+dfsg1",
    "storage_driver": "vfs",
    "storage_reason": "auto: /var/lib/docker is on overlayfs: overlay2 cannot stack",
    "inner_disk": "img 1.2GB ctr 0B vol 812MB cache 0B free 40G",
    "platform": "linux/amd64",
    "mounts_ok": True,
    "api_key_present": False,
    "jobs_total": 112,
    "jobs_finished": 110,
    "jobs_running": 2,
    "latest_jobs": ["nightly-2026-12-02", "nightly-2026-12-01", "nightly-2026-11-30", "nightly-2026-11-29"],
    "harbor_version": "0.25.0",
}


def test_full_row_and_a_row_with_missing_keys():
    table = status_table([FULL, {"host": "arm01", "jobs_total": 7, "container_state": None, "platform": ""}])
    lines = table.splitlines()
    assert lines[0].split() == ["host", "container", "restart", "engine", "storage", "storage", "why", "inner", "disk",
                                "platform", "mounts", "api",
                                "key", "jobs", "finished", "running", "latest", "jobs", "damaged", "harbor"]
    assert set(lines[1]) == {"-", " "}
    assert lines[2].split("  ")[0] == "gpu01"
    assert "yes" in lines[2] and " no " in lines[2]
    assert "nightly-2026-12-02, nightly-2026-12-01, nightly-2026-11-30 +1" in lines[2]
    # Missing, None and empty values are "-".
    assert lines[3].split() == ["arm01", "-", "-", "-", "-", "-", "-", "-", "-", "-", "7", "-", "-", "-", "-", "-"]
    assert "auto: /var/lib/docker is on overlayfs: overlay2 cannot stack" in lines[2]
    assert "img 1.2GB ctr 0B vol 812MB cache 0B free 40G" in lines[2]
    # Fixed width: every column starts at the same offset on every line.
    starts = [i for i, ch in enumerate(lines[1]) if ch == "-" and (i == 0 or lines[1][i - 1] == " ")]
    for line in (lines[0], lines[2], lines[3]):
        for start in starts[1:]:
            assert line[start - 1] == " " or line[start - 2:start] == "  "
    assert not any(line != line.rstrip() for line in lines)
    assert not table.endswith("\n")


def test_numbers_right_aligned_text_left_aligned():
    table = status_table([{"host": "a", "jobs_total": 5}, {"host": "long-host-name", "jobs_total": 1234}],
                         columns=["host", "jobs_total"])
    assert table.splitlines() == [
        "host            jobs",
        "--------------  ----",
        "a                  5",
        "long-host-name  1234",
    ]


def test_chosen_columns_titles_and_unknown_keys():
    table = status_table([FULL], columns=["host", "jobs_running", "gpu_count"], titles={"jobs_running": "busy"})
    assert table.splitlines() == [
        "host   busy  gpu_count",
        "-----  ----  ---------",
        "gpu01     2  -",
    ]


def test_values_are_kept_on_one_line_and_cut():
    rows = [{"host": "x\ny\tz", "harbor_version": "v" * 100, "latest_jobs": [], "mounts_ok": {"jobs": True, "tasks": False}}]
    table = status_table(rows, columns=["host", "harbor_version", "latest_jobs", "mounts_ok"], max_width=10)
    lines = table.splitlines()
    assert len(lines) == 3
    assert lines[2].split("  ")[:3] == ["x y z", "vvvvvvv...", "-"]
    assert lines[2].endswith("jobs=ye...")
    wide = status_table(rows, columns=["harbor_version"], max_width=0)
    assert wide.splitlines()[2] == "v" * 100


def test_list_limit_and_missing_text():
    table = status_table([FULL], columns=["latest_jobs", "container_state"], list_limit=1, missing="n/a")
    assert table.splitlines()[2].startswith("nightly-2026-12-02 +3")
    table = status_table([{}], columns=["container_state"], missing="n/a")
    assert table.splitlines()[2] == "n/a"
    table = status_table([FULL], columns=["latest_jobs"], list_limit=0, max_width=0)
    assert table.splitlines()[2].count("nightly-") == 4


def test_empty_list_gives_the_header_only():
    assert status_table([], columns=["host"]).splitlines() == ["host", "----"]


@pytest.mark.parametrize("rows, kwargs, message", [
    ("gpu01", {}, "expects a list of dicts"),
    ([FULL, "gpu02"], {}, "item 1 is a str"),
    ([FULL], {"columns": "host"}, "columns must be a non-empty list"),
    ([FULL], {"columns": []}, "columns must be a non-empty list"),
    ([FULL], {"titles": ["a"]}, "titles must be a dict"),
    ([FULL], {"max_width": -1}, "max_width must be an integer >= 0"),
    ([FULL], {"max_width": 2}, "max_width must be 0 (no limit) or at least 4"),
    ([FULL], {"list_limit": "3"}, "list_limit must be an integer >= 0"),
    ([FULL], {"columns": ["host", "jobs_total"], "titles": {"jobs_total": "host"}}, "two columns have the same title"),
])
def test_bad_input_is_refused(rows, kwargs, message):
    with pytest.raises(AnsibleFilterError) as exc:
        status_table(rows, **kwargs)
    assert message in str(exc.value)
