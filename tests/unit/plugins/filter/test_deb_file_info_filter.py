"""deb_file_info: which offline packages docker_engine still has to install."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.aisbench.agent_runtime.plugins.filter.deb_files import deb_file_info


def test_name_version_arch_and_epoch():
    info = deb_file_info([
        "/srv/debs/docker.io_20.10.24+dfsg1-1+deb12u1+b1_amd64.deb",
        "/srv/debs/iptables_1.8.9-2_amd64.deb",
        "debs/perl-modules-5.36_5.36.0-7+deb12u3_all.deb",
        "/x/libgpg-error0_1%3a1.46-1_arm64.deb",
    ])
    assert [i["spec"] for i in info] == [
        "docker.io=20.10.24+dfsg1-1+deb12u1+b1",
        "iptables=1.8.9-2",
        "perl-modules-5.36=5.36.0-7+deb12u3",
        "libgpg-error0=1:1.46-1",
    ]
    assert info[0]["file"] == "docker.io_20.10.24+dfsg1-1+deb12u1+b1_amd64.deb"
    assert info[3]["arch"] == "arm64"
    assert info[1]["src"] == "/srv/debs/iptables_1.8.9-2_amd64.deb"


def test_renamed_file_is_never_taken_as_installed():
    (info,) = deb_file_info(["/tmp/docker-latest.deb"])
    assert info["package"] is None
    assert info["spec"].startswith("?unparsed:")


@pytest.mark.parametrize("bad", ["/tmp/docker.tar", 42, None])
def test_not_a_deb_path(bad):
    with pytest.raises(AnsibleFilterError, match="is not a .deb file path"):
        deb_file_info([bad])


def test_not_a_list():
    with pytest.raises(AnsibleFilterError, match="expects a list"):
        deb_file_info("/tmp/a.deb")
