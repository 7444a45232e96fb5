"""The baked agent toolchain contract (plugins/module_utils/_agent_toolchains.py) and the builder's pure parts.
Its pure tests: tests/unit/plugins/module_utils/test_agent_toolchains.py."""
import json
import os
import sys

import pytest

from test_agent_toolchains import builder


# --- the builder (runs inside the toolchain build; its pure parts here) ---------------------------------------


def test_package_index_credentials_reach_the_installers_by_environment_and_are_masked_in_every_line(tmp_path, capsys):
    """The builder's own lines and its commands' output (the build log, which a failed build's message carries) never
    show a credential of the indexes file; pip and uv get the indexes through their environment, not argv."""
    module = builder()
    indexes = tmp_path / "package-indexes.json"
    indexes.write_text(json.dumps({"pip_index_url": "https://bench:pip-canary-1@pypi.corp/simple",
                                   "pip_extra_index_urls": ["https://tok-canary-2@extra.corp/simple"],
                                   "npm_registry": "https://npm:npm-canary-3@npm.corp/"}))
    env = module.pip_index_env(module.read_indexes(str(indexes)))
    assert env["UV_INDEX_URL"] == env["PIP_INDEX_URL"] == "https://bench:pip-canary-1@pypi.corp/simple"
    assert env["UV_EXTRA_INDEX_URL"] == "https://tok-canary-2@extra.corp/simple"
    echo = "import os, sys; print(os.environ['PIP_INDEX_URL']); print('npm-canary-3 at https://a:b@c/', file=sys.stderr)"
    module.run([sys.executable, "-c", echo], env=dict(os.environ, **env))
    with pytest.raises(SystemExit) as failed:
        module.run([sys.executable, "-c", "import sys; print('pip-canary-1'); sys.exit(3)"])
    out = capsys.readouterr().out + str(failed.value)
    assert "https://***@pypi.corp/simple" in out and "*** at https://***@c/" in out and "exited with status 3" in out
    for canary in ("pip-canary-1", "tok-canary-2", "npm-canary-3", "a:b@"):
        assert canary not in out
