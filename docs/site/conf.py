"""Sphinx configuration of the docs site `make docs` builds (docs/site/build.sh).

The module, plugin and role pages come from the collection's own DOCUMENTATION blocks and
meta/argument_specs.yml, rendered to reStructuredText by antsibull-docs; this file only styles
them and says where references outside this site go.
"""

import re

from docutils import nodes

project = "dra.gpu"
copyright = "dra.gpu developers"  # pylint: disable=redefined-builtin
title = "dra.gpu collection documentation"
html_short_title = "dra.gpu"
html_title = title

extensions = ["sphinx_antsibull_ext"]
pygments_style = "ansible"
highlight_language = "YAML+Jinja"
html_theme = "sphinx_ansible_theme"
html_show_sphinx = False
html_use_smartypants = True
html_use_modindex = False
html_use_index = False
html_copy_source = False
default_role = "any"
# Every reference must resolve: a wrong M(), O() or RV() in a DOCUMENTATION block fails the build.
nitpicky = True

# The Ansible documentation the generated pages refer to. Sphinx would learn its labels through
# intersphinx, which downloads objects.inv from docs.ansible.com: the build would depend on the
# network (and warn, failing -W, without it). Instead, a reference this site cannot resolve is
# linked here when it is one of the Ansible docsite's own labels that antsibull-docs' templates
# use, or a plugin or role page of another collection (kubernetes.core, ansible.builtin, and
# community.okd, which kubernetes.core's auth options mention). Anything else, a reference into
# dra.gpu above all, stays unresolved and fails the build.
ANSIBLE_DOCS = "https://docs.ansible.com/projects/ansible/latest/"
ANSIBLE_LABELS = {
    "common_return_values": "reference_appendices/common_return_values.html",
    "ansible_configuration_settings": "reference_appendices/config.html",
}
OTHER_COLLECTION = re.compile(
    r"^ansible_collections\.(?P<ns>[a-z0-9_]+)\.(?P<coll>[a-z0-9_]+)\.(?P<page>[a-z0-9]+(?:_[a-z0-9]+)*)(?P<anchor>__.*)?$")
THIS_COLLECTION = ("dra", "gpu")


def external_url(target):
    if target in ANSIBLE_LABELS:
        return ANSIBLE_DOCS + ANSIBLE_LABELS[target]
    match = OTHER_COLLECTION.match(target)
    if not match or (match["ns"], match["coll"]) == THIS_COLLECTION:
        return None
    url = "%scollections/%s/%s/%s.html" % (ANSIBLE_DOCS, match["ns"], match["coll"], match["page"])
    return url + ("#" + nodes.make_id(target) if match["anchor"] else "")


def link_ansible_docs(app, env, node, contnode):  # pylint: disable=unused-argument
    if node.get("refdomain") != "std" or node.get("reftype") != "ref":
        return None
    url = external_url(node.get("reftarget", ""))
    if url is None:
        return None
    reference = nodes.reference("", "", internal=False, refuri=url)
    reference += contnode
    return reference


def setup(app):
    app.connect("missing-reference", link_ansible_docs)
