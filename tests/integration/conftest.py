"""Integration tests share helpers and fixtures with the unit tests of the same code (`from test_harbor_job import
base`): every directory of tests/unit is importable here too, after this test's own (test module names are unique
across tests/unit and tests/integration, as pytest's import mode needs)."""
import os
import sys

UNIT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit")

for directory, subdirs, _files in os.walk(UNIT):
    subdirs[:] = sorted(name for name in subdirs if name != "__pycache__")
    if directory not in sys.path:
        sys.path.append(directory)
