"""Stand-in for pip's get-pip.py, which ansible-test downloads from ci-files.testing.ansible.com.

That host is not reachable here (only PyPI is), so the empty sanity virtualenvs ansible-test creates get pip from the
interpreter's own ensurepip, then the pip version ansible-test asks for (and any other arguments) from the index.
tools/sanity.sh copies this file to the name ansible-test looks for in its cache.
"""

import subprocess
import sys

# get-pip.py options that `pip install` does not know: ensurepip brings setuptools on Python < 3.12; it is harmless.
GET_PIP_ONLY_OPTIONS = ('--no-setuptools', '--no-wheel')

subprocess.check_call([sys.executable, '-m', 'ensurepip', '--upgrade'], stdout=subprocess.DEVNULL)
pip_arguments = [argument for argument in sys.argv[1:] if argument not in GET_PIP_ONLY_OPTIONS]
sys.exit(subprocess.call([sys.executable, '-m', 'pip', 'install', *pip_arguments]))
