"""Command line of the dra.gpu lab: build, up, down, status, env."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from labctl.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
