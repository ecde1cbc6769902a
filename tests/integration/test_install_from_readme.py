"""The README's install, word for word, and the one example inventory, as a new user meets them.

The README's offline install block (between its ``install-offline`` markers) runs line by line in
an empty directory with an empty HOME and nothing else on the collections path: not the checkout's
build/collections, not the virtualenv's bundled collections (ANSIBLE_COLLECTIONS_SCAN_SYS_PATH
off), not the checkout's ansible.cfg. It ends with ``ansible-playbook dra.gpu.site --syntax-check``
on the copied example inventory. Then every documented playbook takes that inventory, and site.yml
runs in check mode against the test lab from the installed copy, changing nothing.

Galaxy cannot be reached here, so the two tarballs the block installs are made first: dra.gpu's
with ``ansible-galaxy collection build`` (what ``make collection`` does), kubernetes.core's from
the copy the pinned ``ansible`` package ships (what ``ansible-galaxy collection download`` gives on
a machine that reaches Galaxy). The lab has no hosts to log into, so the check-mode run adds one
inventory of its own: the SSH hosts reached locally with the cgroup v2 file system a current host
reports, and the stand-in charts as an air-gapped site would point the role at its own chart copies.
"""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from kubernetes import client, config

from test_site_leaves_nothing_after_demo import cluster_objects

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENV_BIN = os.path.dirname(sys.executable)
PLAYBOOKS = ("site", "upgrade", "etcd_restore", "migrate_workloads", "report", "gpu_maintenance")
CHART_REPO = os.path.join(ROOT, "tests", "fixtures", "charts", "chart_repo.py")


def readme_block(marker):
    """The command lines of the README's fenced block between <!-- marker:begin/end -->."""
    with open(os.path.join(ROOT, "README.md")) as handle:
        text = handle.read()
    found = re.search(r"<!-- %s:begin -->\s*```[a-z]*\n(.*?)```\s*<!-- %s:end -->" % (marker, marker), text, re.S)
    assert found, "README.md has no fenced block between <!-- %s:begin --> and <!-- %s:end -->" % (marker, marker)
    return [line for line in found.group(1).splitlines() if line.strip() and not line.startswith("#")]


def kubernetes_core_tarball(dest):
    """kubernetes.core's release tarball, built from the copy the virtualenv's ansible package ships."""
    import ansible
    source = os.path.join(os.path.dirname(os.path.dirname(ansible.__file__)), "ansible_collections", "kubernetes", "core")
    work = os.path.join(str(dest), "kubernetes.core-source")
    shutil.copytree(source, work, ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(work, "MANIFEST.json")) as handle:
        info = json.load(handle)["collection_info"]
    keys = ("namespace", "name", "version", "readme", "authors", "description", "license_file", "tags",
            "dependencies", "repository", "issues")
    with open(os.path.join(work, "galaxy.yml"), "w") as handle:
        yaml.safe_dump(dict((k, info[k]) for k in keys if info.get(k) not in (None, "")), handle)
    for name in ("MANIFEST.json", "FILES.json"):
        os.unlink(os.path.join(work, name))
    galaxy(["collection", "build", "--output-path", str(dest), work], cwd=str(dest))
    return "kubernetes-core-%s.tar.gz" % info["version"]


def galaxy(args, cwd):
    subprocess.run([os.path.join(VENV_BIN, "ansible-galaxy")] + args, cwd=cwd, check=True, capture_output=True)


def user_env(home):
    """A new user's shell: the virtualenv's tools first, an empty HOME, no collections path but the
    one the README's block exports, no ansible.cfg of the checkout's."""
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_"))
    env.update(HOME=str(home), PATH=VENV_BIN + os.pathsep + env["PATH"], ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false",
               ANSIBLE_FORCE_COLOR="0", NO_COLOR="1")
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The README's block run in an empty directory; (directory, environment after the block)."""
    work = tmp_path_factory.mktemp("new-user")
    home = tmp_path_factory.mktemp("home")
    galaxy(["collection", "build", "--output-path", str(work), ROOT], cwd=str(work))
    kubernetes_core = kubernetes_core_tarball(work)
    script = "set -euo pipefail\n" + "\n".join(readme_block("install-offline")) + "\nenv -0 > .env-after\n"
    assert kubernetes_core in script, "the README's block installs %s, not the version the test has" % kubernetes_core
    proc = subprocess.run(["bash", "-c", script], cwd=str(work), env=user_env(home), capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, "the README's install block failed:\n%s\n%s" % (proc.stdout[-3000:], proc.stderr[-3000:])
    with open(os.path.join(str(work), ".env-after")) as handle:
        env = dict(item.split("=", 1) for item in handle.read().split("\0") if "=" in item)
    return work, env, proc.stdout


def test_the_readme_block_installs_dra_gpu_and_its_dependency_alone(installed):
    work, env, stdout = installed
    site = os.path.join(str(work), "collections", "ansible_collections", "dra", "gpu", "playbooks", "site.yml")
    assert "playbook: " + site in stdout
    listed = subprocess.run([os.path.join(VENV_BIN, "ansible-galaxy"), "collection", "list", "--format", "json"],
                            cwd=str(work), env=env, capture_output=True, text=True, check=True)
    # ansible-core's own internal collection is always there; everything else must be the block's.
    found = dict((path, sorted(collections)) for path, collections in json.loads(listed.stdout).items()
                 if os.sep.join(("ansible", "_internal")) not in path)
    assert found == {os.path.join(str(work), "collections", "ansible_collections"): ["dra.gpu", "kubernetes.core"]}


def test_every_documented_playbook_takes_the_example_inventory(installed):
    work, env, _stdout = installed
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "inventory.yml", "--syntax-check"]
                          + ["dra.gpu." + name for name in PLAYBOOKS], cwd=str(work), env=env, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checked = re.findall(r"^playbook: .*/ansible_collections/dra/gpu/playbooks/(\w+)\.yml$", proc.stdout, re.M)
    assert checked == list(PLAYBOOKS)


def test_site_in_check_mode_with_the_example_inventory_changes_nothing(installed, tmp_path):
    work, env, _stdout = installed
    charts = os.path.join(str(tmp_path), "charts")
    subprocess.run([sys.executable, CHART_REPO, "build", charts], check=True, capture_output=True)
    lab_only = {"all": {
        "vars": {"gpu_operator_chart_source": "local", "gpu_operator_chart_dir": charts},
        "children": {"cluster_hosts": {"vars": {
            "ansible_connection": "local", "ansible_become": False, "ansible_python_interpreter": sys.executable,
            # What host_facts would read on a host booted with cgroup v2; run locally it would read
            # this machine's file system, which says nothing of the lab's simulated nodes.
            "host_facts_cgroup_fs": "cgroup2fs"}}}}}
    with open(os.path.join(str(tmp_path), "lab-only.yml"), "w") as handle:
        yaml.safe_dump(lab_only, handle)
    api = config.new_client_from_config(os.environ["KUBECONFIG"])
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    before = (cluster_objects(core, custom), node_labels(core), device_classes(custom))
    env = dict(env, KUBECONFIG=os.environ["KUBECONFIG"], PATH=os.environ["PATH"])
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "inventory.yml",
                           "-i", os.path.join(str(tmp_path), "lab-only.yml"), "dra.gpu.site", "--check"],
                          cwd=str(work), env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "node-a" in proc.stdout
    assert (cluster_objects(core, custom), node_labels(core), device_classes(custom)) == before


def node_labels(core):
    return dict((n.metadata.name, n.metadata.labels) for n in core.list_node().items)


def device_classes(custom):
    return sorted(c["metadata"]["name"] for c in custom.list_cluster_custom_object(
        "resource.k8s.io", "v1", "deviceclasses")["items"])
