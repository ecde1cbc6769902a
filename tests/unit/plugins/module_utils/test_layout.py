"""The floor plan of plugins/module_utils holds (issue 32): folders by domain a newcomer can scan,
files short enough to read whole, and a unit-test tree that mirrors it, so the test of a file is
found by its path."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import glob
import os

import ansible_collections.dra.gpu.plugins.module_utils as package

HERE = os.path.dirname(package.__file__)
TESTS = os.path.dirname(os.path.abspath(__file__))
MAX_FILES_PER_FOLDER = 12
MAX_LINES_PER_FILE = 400


def _sources():
    """Paths relative to module_utils, without __init__.py: 'k8s/client.py', 'dra/cel/cel.py'."""
    found = glob.glob(os.path.join(HERE, "**", "*.py"), recursive=True)
    return sorted(os.path.relpath(p, HERE) for p in found if os.path.basename(p) != "__init__.py")


def test_no_file_sits_at_the_top_every_file_in_a_domain_folder():
    assert [p for p in _sources() if os.sep not in p] == []


def test_no_folder_holds_more_than_a_dozen_files():
    counts = {}
    for path in _sources():
        counts[os.path.dirname(path)] = counts.get(os.path.dirname(path), 0) + 1
    crowded = {folder: n for folder, n in counts.items() if n > MAX_FILES_PER_FOLDER}
    assert crowded == {}, "split these folders by job: %s" % crowded


def test_no_file_is_longer_than_a_read():
    long_files = {}
    for path in _sources():
        with open(os.path.join(HERE, path)) as handle:
            lines = sum(1 for _line in handle)
        if lines > MAX_LINES_PER_FILE:
            long_files[path] = lines
    assert long_files == {}, "split these files by job (at most %d lines): %s" % (MAX_LINES_PER_FILE, long_files)


CLIENT = "ansible_collections.dra.gpu.plugins.module_utils.k8s.client"


def imported_modules(source):
    """Every module ``source`` imports, by its full name (``from a.b import c`` gives a.b and a.b.c:
    c may be a module or a name in a.b)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update("%s.%s" % (node.module, alias.name) for alias in node.names)
    return found


def _talks_to_the_cluster(path):
    # Files that import the client do the cluster I/O; tests/integration tests them against the lab.
    with open(os.path.join(HERE, path)) as handle:
        return CLIENT in imported_modules(handle.read())


def test_an_import_of_the_client_is_seen_however_it_is_written():
    for source in ("from %s import Kube" % CLIENT, "from %s import client" % CLIENT.rsplit(".", 1)[0],
                   "import %s as client" % CLIENT):
        assert CLIENT in imported_modules(source), source
    assert CLIENT not in imported_modules("from %s import watch  # client" % CLIENT.rsplit(".", 1)[0])


def test_every_file_has_its_test_file_at_the_mirrored_path():
    untested = []
    for path in _sources():
        folder, name = os.path.split(path)
        if _talks_to_the_cluster(path):
            continue
        if not glob.glob(os.path.join(TESTS, folder, "test_%s.py" % name[:-3])):
            untested.append(path)
    assert untested == [], "add tests/unit/plugins/module_utils/<folder>/test_<file>.py for: %s" % untested


def test_every_test_file_names_a_file_at_the_mirrored_path():
    # test_gpu_operator_values_images.py tests gpu_operator_values.py's images: a test file may add a topic
    # after the name.
    sources = set(p[:-3] for p in _sources())
    orphans = []
    for test in glob.glob(os.path.join(TESTS, "*", "**", "test_*.py"), recursive=True):
        folder, name = os.path.split(os.path.relpath(test, TESTS))
        stem = name[len("test_"):-3]
        parts = stem.split("_")
        if not any(os.path.join(folder, "_".join(parts[:n])) in sources for n in range(len(parts), 0, -1)):
            orphans.append(os.path.relpath(test, TESTS))
    assert orphans == [], "these tests name no module_utils file at their path: %s" % orphans
