"""nightly_schedule's units and argument specs, rendered by Ansible's templating engine.
Its tests that start a process: tests/integration/scripts/test_nightly_schedule_wrapper.py."""
from pathlib import Path
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = Path(__file__).resolve().parents[3] / "roles" / "nightly_schedule"


def render(name, **overrides):
    loader = DataLoader()
    variables = {}
    for path in (ROLE / "defaults" / "main.yml", ROLE / "vars" / "main.yml"):
        # Role files are trusted templates: the templated defaults (lock file, log dir) resolve.
        for key, value in yaml.safe_load(path.read_text()).items():
            variables[key] = trust_as_template(value) if isinstance(value, str) else value
    variables.update(ansible_managed="Ansible managed")
    variables.update(overrides)
    templar = Templar(loader=loader, variables=variables)
    return templar.template(trust_as_template((ROLE / "templates" / name).read_text()))


def test_units():
    variables = dict(nightly_schedule_playbook="/srv/aisbench/playbooks/nightly.yml", nightly_schedule_user="bench",
                     nightly_schedule_on_calendar="Mon..Fri *-*-* 01:30:00", nightly_schedule_name="aisbench-nightly",
                     nightly_schedule_bin_dir="/opt/bin")
    service = render("nightly.service.j2", **variables).splitlines()
    timer = render("nightly.timer.j2", **variables).splitlines()
    assert "Type=oneshot" in service and "User=bench" in service
    assert "ExecStart=/opt/bin/aisbench-nightly" in service
    assert "OnCalendar=Mon..Fri *-*-* 01:30:00" in timer and "Persistent=true" in timer
    assert "Unit=aisbench-nightly.service" in timer and "WantedBy=timers.target" in timer
    wrapper = render("nightly-wrapper.sh.j2", **variables)
    assert "readonly LOCK_FILE=/run/lock/aisbench-nightly.lock" in wrapper
    assert "readonly LOG_DIR=/var/log/aisbench-nightly" in wrapper


def test_argument_specs_match_defaults():
    specs = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    assert set(specs) == set(defaults)
    for name, spec in specs.items():
        assert spec.get("default") == defaults[name], name
