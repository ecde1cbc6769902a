"""The collection's hand-kept lists agree with its modules: each module that takes
kubernetes.core's connection options (it extends kubernetes.core.k8s_auth_options) is in the
``k8s`` action group of meta/runtime.yml, so ``module_defaults: {group/dra.gpu.k8s: ...}`` reaches
it; the group names only modules that exist; and docs/modules.md has a section for each module.
gpu_usage_info and gpu_packing_check were missing from the group, and a play's connection did not
reach the usage report (issue 32): these tests fail on such a drift.

Runs in `make units` (no lab).
"""

import ast
import glob
import os
import re

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONNECTION_FRAGMENT = "kubernetes.core.k8s_auth_options"


def module_docs():
    """Module name -> its DOCUMENTATION, read without importing the module."""
    docs = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))):
        sidecar = path[:-3] + ".yml"
        if os.path.exists(sidecar):
            # ansible-core's sidecar documentation (gpu_operator_plan.yml)
            with open(sidecar) as handle:
                docs[os.path.basename(path)[:-3]] = yaml.safe_load(handle)["DOCUMENTATION"]
            continue
        with open(path) as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
                docs[os.path.basename(path)[:-3]] = yaml.safe_load(node.value.value)
    return docs


def k8s_group():
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        group = yaml.safe_load(handle)["action_groups"]["k8s"]
    return set(entry for entry in group if isinstance(entry, str))


def test_every_module_has_its_documentation():
    modules = [os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))]
    docs = module_docs()
    assert sorted(modules) == sorted(docs)
    assert all(doc["module"] == name for name, doc in docs.items())


def test_modules_with_connection_options_are_in_the_k8s_action_group():
    connecting = set(name for name, doc in module_docs().items()
                     if CONNECTION_FRAGMENT in (doc.get("extends_documentation_fragment") or []))
    group = k8s_group()
    assert connecting, "no module extends %s: the test reads the wrong thing" % CONNECTION_FRAGMENT
    assert not connecting - group, "add to action_groups.k8s in meta/runtime.yml: %s" % sorted(connecting - group)
    assert not group - connecting, "in action_groups.k8s without the connection options: %s" % sorted(group - connecting)


def test_every_module_has_a_section_in_docs_modules_md():
    with open(os.path.join(ROOT, "docs", "modules.md")) as handle:
        sections = set(re.findall(r"^## dra\.gpu\.(\w+)$", handle.read(), re.MULTILINE))
    modules = set(module_docs())
    assert not modules - sections, "docs/modules.md has no '## dra.gpu.NAME' section for: %s" % sorted(modules - sections)
    assert not sections - modules - {"api_transient"}, "docs/modules.md has sections for no module: %s" % (
        sorted(sections - modules))
