"""Every module_utils file imports on its own, first, in a fresh interpreter (a cycle between
them fails here), and none imports another of the collection's files inside a function, the
way a cycle used to be dodged (cluster_identity imported client's ApiException late; issue 32)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import glob
import os
import subprocess
import sys

import pytest

import ansible_collections.dra.gpu.plugins.module_utils as package

HERE = os.path.dirname(package.__file__)
# Dotted names below module_utils: "k8s.client", "dra.cel.cel".
NAMES = sorted(os.path.relpath(p, HERE)[:-3].replace(os.sep, ".")
               for p in glob.glob(os.path.join(HERE, "**", "*.py"), recursive=True) if not p.endswith("__init__.py"))
PREFIX = "ansible_collections.dra.gpu.plugins.module_utils"


def test_there_are_files_to_check():
    assert len(NAMES) > 20 and "k8s.client" in NAMES


def test_each_file_imports_alone_in_a_fresh_interpreter():
    # One interpreter per file would take a second each; one that forgets the collection's
    # modules between files checks the same thing: each file is the first one imported.
    script = "\n".join([
        "import importlib, sys",
        "failed = []",
        "for name in %r:" % (NAMES,),
        "    for loaded in [m for m in sys.modules if m.startswith(%r)]:" % (PREFIX + ".",),
        "        del sys.modules[loaded]",
        "    try:",
        "        importlib.import_module(%r + '.' + name)" % PREFIX,
        "    except Exception as exc:",
        "        failed.append('%s: %s: %s' % (name, type(exc).__name__, exc))",
        "print('\\n'.join(failed))",
        "sys.exit(1 if failed else 0)"])
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", NAMES)
def test_no_import_of_the_collection_inside_a_function(name):
    with open(os.path.join(HERE, *name.split(".")) + ".py") as handle:
        tree = ast.parse(handle.read())
    late = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ansible_collections.dra."):
                    late.append("%s() line %d: from %s import ..." % (function.name, node.lineno, node.module))
                elif isinstance(node, ast.Import) and any(a.name.startswith("ansible_collections.dra.") for a in node.names):
                    late.append("%s() line %d" % (function.name, node.lineno))
    assert not late, "import at the top of %s.py instead: %s" % (name, late)
