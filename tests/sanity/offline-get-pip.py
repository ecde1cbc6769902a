"""Stand-in for ansible-test's pip bootstrap script (get-pip.py), for machines that reach
PyPI but not the host ansible-test downloads get-pip.py from.

ansible-test runs its cached get-pip script inside each fresh sanity virtualenv with
pip-install arguments (e.g. ``--disable-pip-version-check pip==24.2 --no-setuptools``).
This does the same with the standard library's ensurepip, then lets that pip install the
requested version from PyPI. `tests/ansible-test.sh` copies it into ansible-test's cache.
"""

import subprocess
import sys

GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}


def main():
    args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
    subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"],
                          stdout=subprocess.DEVNULL)
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet"] + args)


if __name__ == "__main__":
    main()
