"""docs/architecture.md's table "Where each module's logic lives" stays true: every module has a
row, and each file a row names is one the module imports (issue 32: a module's helper could
not be guessed from its name).

Runs in `make units` (no lab)."""

import ast
import glob
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PREFIX = "ansible_collections.dra.gpu.plugins.module_utils"
MODULES = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py")))


def _table():
    with open(os.path.join(ROOT, "docs", "architecture.md")) as handle:
        text = handle.read()
    section = text.split("\n## Where each module's logic lives\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = re.findall(r"`([\w/]+)`", cells[1])
    return rows


def _imported_files(module):
    """'dra/slices' for `from ...module_utils.dra import slices` and `from ...module_utils.dra.slices import X`."""
    with open(os.path.join(ROOT, "plugins", "modules", module + ".py")) as handle:
        tree = ast.parse(handle.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PREFIX + "."):
            path = node.module[len(PREFIX) + 1:].replace(".", "/")
            if os.path.isdir(os.path.join(ROOT, "plugins", "module_utils", path)):
                found.update(path + "/" + alias.name for alias in node.names)
            else:
                found.add(path)
    return found


def test_every_module_has_a_row_and_no_row_names_a_module_that_is_gone():
    assert sorted(_table()) == MODULES


def test_each_row_names_files_the_module_imports():
    wrong = {}
    for module, files in _table().items():
        missing = [f for f in files if f not in _imported_files(module)]
        if missing or not files:
            wrong[module] = missing or "no file named"
    assert wrong == {}
