"""`make ee`, second half: dra.gpu's playbooks inside the execution environment, against an API-server lab.

Run by hand (`make ee`, after tests/ee/build-image.sh), never by `make test`: it starts two
fresh labs, runs seven playbooks and builds two more images (about 8 minutes:
docs/execution-environment.md has the figures). The file
name keeps it out of `make units`, which collects tests/ee/test_*.py.

The same scenario runs twice, each on a fresh lab: outside (ansible-playbook with dra.gpu
installed from the same tarball the image has) and inside (ansible-navigator, the image,
pulling nothing): site.yml, migrate_workloads.yml on a Deployment that still asks for
nvidia.com/gpu, report.yml. The recaps and the cluster's objects must be the same; inside, a
second site.yml changes nothing and report.yml writes its page into a mounted directory.

The kubeconfig reaches the container as AWX hands a credential to a job: a file (the lab's
kubeconfig made self-contained, as a user pastes it into the credential) mounted into the
container and K8S_AUTH_KUBECONFIG and KUBECONFIG naming it; nothing of it is in the image.
The lab's API server listens on 127.0.0.1, so the container shares the host's network.

Environment (the Makefile's `ee` target sets it): EE_IMAGE, EE_WORK (tests/ee/build-image.sh's),
LAB_STATE_DIR, LAB_PORT_BASE, LAB_DRIVER_MODE, LAB_K8S_VERSION (the lab's).
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
IMAGE = os.environ.get("EE_IMAGE", "localhost/dra-gpu-ee:test")
WORK = pathlib.Path(os.environ.get("EE_WORK", ROOT / "build" / "ee" / IMAGE.rsplit(":", 1)[-1]))
INVENTORY = "playbooks/inventory/lab.yml"
CONTAINERS_CONF = str(ROOT / "tests" / "ee" / "containers.conf")
# Where the credential's file is mounted: AWX writes a credential's file injector into the job's
# private data directory's env/ (mode 0600) and names it by its path in the container,
# /runner/env/tmpXXXXXXXX; ansible-navigator's private data directory is its own, so the file
# goes next to it under a fixed name.
CREDENTIAL_IN_CONTAINER = "/var/run/dra-gpu/kubeconfig"
# The stand-in charts and the report's directory, mounted under paths of their own (ansible-navigator
# also mounts the project directory, where they are on the host: their own paths prove the mounts).
CHARTS_IN_CONTAINER = "/var/run/dra-gpu/charts"
REPORT_IN_CONTAINER = "/var/run/dra-gpu/report"
MIGRATION_NAMESPACE = "ee-migration"
RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)"
                   r"\s+rescued=(\d+)\s+ignored=(\d+)", re.M)
# Kinds whose objects come and go while the lab runs, or carry names made up at run time
# without generateName: pods (terminating ones linger), events, leases (the API servers'
# identity leases are named per start), endpoints; the objects that own them (Deployments,
# DaemonSets, ReplicaSets by template hash) are compared instead.
NOT_COMPARED = {"pods", "events", "events.events.k8s.io", "leases.coordination.k8s.io",
                "endpointslices.discovery.k8s.io", "endpoints", "componentstatuses",
                "tokenreviews.authentication.k8s.io"}


# ansible-runner's event markers (base64 between erase-line escapes) in navigator's stdout when
# it is not a terminal; left out of the logs kept.
EVENT_MARKERS = re.compile(r"\x1b\[K[A-Za-z0-9+/=]*\x1b\[\d+D|\x1b\[K")


def log(message):
    print("ee: " + message, file=sys.stderr, flush=True)


def run(args, env=None, timeout=1200, check=True, cwd=ROOT):
    started = time.monotonic()
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    took = time.monotonic() - started
    if check and proc.returncode != 0:
        command = " ".join(map(str, args))
        tail = proc.stdout[-6000:] + "\n" + proc.stderr[-6000:]
        pytest.fail("%s failed (%d) after %.0fs:\n%s" % (command, proc.returncode, took, tail))
    return proc, took


def lab(*args):
    # Never the demo's lab (.lab/default) nor the test suite's by accident: `make ee` names its own.
    missing = [name for name in ("LAB_STATE_DIR", "LAB_PORT_BASE") if not os.environ.get(name)]
    assert not missing, "set %s (the Makefile's ee target does)" % " and ".join(missing)
    return run([str(BIN / "python"), str(ROOT / "lab" / "lab.py"), *args], timeout=900)[0].stdout


def lab_env():
    """`lab.py env`: KUBECONFIG and a PATH with the lab's kubectl and helm."""
    env = dict(os.environ)
    for line in lab("env", "--venv-bin", str(BIN)).splitlines():
        key, _sep, value = line.removeprefix("export ").partition("=")
        env[key] = value.strip("'")
    # Outside runs the very tarball the image was built from (tests/ee/build-image.sh installed it).
    env["ANSIBLE_COLLECTIONS_PATH"] = str(WORK / "installed")
    env["ANSIBLE_FORCE_COLOR"] = "0"
    return env


def recap(output):
    found = {m.group(1): tuple(int(n) for n in m.groups()[1:]) for m in RECAP.finditer(output)}
    assert found, "no PLAY RECAP in:\n" + output[-3000:]
    return {host: dict(zip(("ok", "changed", "unreachable", "failed", "skipped", "rescued", "ignored"), counts))
            for host, counts in found.items()}


def snapshot(env):
    """What is in the cluster: kind/namespace/name of every listable object (but NOT_COMPARED), node labels."""
    resources = run(["kubectl", "api-resources", "--verbs=list", "-o", "name"], env=env)[0].stdout.split()
    wanted = sorted(set(resources) - NOT_COMPARED)
    items = json.loads(run(["kubectl", "get", ",".join(wanted), "-A", "-o", "json"], env=env)[0].stdout)["items"]
    objects = sorted("%s %s/%s" % (item["kind"], item["metadata"].get("namespace", ""), stable_name(item["metadata"]))
                     for item in items)
    labels = {item["metadata"]["name"]: item["metadata"].get("labels", {}) for item in items if item["kind"] == "Node"}
    classes = {item["metadata"]["name"]: item["spec"] for item in items if item["kind"] == "DeviceClass"}
    return {"objects": objects, "node_labels": labels, "device_classes": classes}


def stable_name(meta):
    """A name that is the same in two runs: a pod's claim by the claim it stands for, an object
    named from generateName (ResourceSlices, endpoint slices) by that prefix."""
    if any(owner["kind"] == "Pod" for owner in meta.get("ownerReferences", [])):
        return "(a pod's) " + meta.get("annotations", {}).get("resource.kubernetes.io/pod-claim-name", "?")
    if meta.get("generateName"):
        return meta["generateName"] + "*"
    return meta["name"]


def self_contained_kubeconfig(env, dest):
    """The lab's kubeconfig with its CA inlined: what a user pastes into the AWX credential."""
    text = run(["kubectl", "config", "view", "--raw", "--flatten", "--minify"], env=env)[0].stdout
    dest.write_text(text)
    dest.chmod(0o600)
    return dest


def workload(env):
    """A Deployment that still asks for nvidia.com/gpu, for migrate_workloads.yml (as in demo.yml)."""
    manifest = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": MIGRATION_NAMESPACE}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "inference", "namespace": MIGRATION_NAMESPACE},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "inference"}},
                  "template": {"metadata": {"labels": {"app": "inference"}},
                               "spec": {"terminationGracePeriodSeconds": 1, "containers": [
                                   {"name": "server", "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}},
    ]
    proc = subprocess.run(["kubectl", "apply", "-f", "-"], env=env, input=yaml.safe_dump_all(manifest), text=True,
                          capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr


MIGRATE_VARS = json.dumps({"workload_migration_workloads": [{"namespace": MIGRATION_NAMESPACE, "name": "inference"}],
                           "workload_migration_device_class": "nvidia-gpu", "workload_migration_timeout": 120})


class Outside:
    name = "outside"

    def __init__(self, env, charts, report_dir):
        self.env = dict(env, DRA_GPU_LAB_CHARTS=str(charts))
        self.report_dir = self.report_to = report_dir

    def playbook(self, playbook, *extra, check=True):
        return run([str(BIN / "ansible-playbook"), "-i", INVENTORY, playbook, *extra], env=self.env, check=check)


class Inside:
    """ansible-navigator with the image, the kubeconfig as a mounted credential file, host network."""
    name = "inside"

    def __init__(self, env, charts, report_dir, credential, image=IMAGE):
        # ansible-navigator hands every ANSIBLE_* variable of its caller to the container: an
        # ANSIBLE_COLLECTIONS_PATH (the Makefile exports one: the checkout) would have the job
        # run the collection of the mounted project directory instead of the image's.
        self.env = {key: value for key, value in env.items() if not key.startswith("ANSIBLE_")}
        self.env.update(CONTAINERS_CONF=CONTAINERS_CONF, ANSIBLE_FORCE_COLOR="0")
        self.charts, self.report_dir, self.credential, self.image = charts, report_dir, credential, image
        self.report_to = REPORT_IN_CONTAINER

    def exec(self, *command):
        return run([str(BIN / "ansible-navigator"), "exec", "--mode", "stdout", *self.settings(), "--", *command],
                   env=self.env)[0].stdout

    def settings(self):
        return ["--execution-environment", "true", "--execution-environment-image", self.image,
                "--pull-policy", "never", "--container-engine", "podman",
                "--container-options=--network=host",
                "--execution-environment-volume-mounts", "%s:%s:ro" % (self.credential, CREDENTIAL_IN_CONTAINER),
                "--execution-environment-volume-mounts", "%s:%s:ro" % (self.charts, CHARTS_IN_CONTAINER),
                "--execution-environment-volume-mounts", "%s:%s" % (self.report_dir, self.report_to),
                "--set-environment-variable", "K8S_AUTH_KUBECONFIG=" + CREDENTIAL_IN_CONTAINER,
                "--set-environment-variable", "KUBECONFIG=" + CREDENTIAL_IN_CONTAINER,
                "--set-environment-variable", "DRA_GPU_LAB_CHARTS=" + CHARTS_IN_CONTAINER,
                "--log-file", str(WORK / "navigator.log")]

    def playbook(self, playbook, *extra, check=True):
        args = [str(BIN / "ansible-navigator"), "run", playbook, "-i", INVENTORY, "--mode", "stdout",
                *self.settings(), "--playbook-artifact-enable", "false", *extra]
        return run(args, env=self.env, check=check)


def scenario(runner, env, second_site=False):
    """site.yml (twice inside), migrate_workloads.yml, report.yml on a fresh lab; recaps, times, objects."""
    out = {"recaps": {}, "times": {}}

    def play(key, playbook, *extra):
        proc, took = runner.playbook(playbook, *extra)
        out["recaps"][key] = recap(proc.stdout)["localhost"]
        out["times"][key] = round(took)
        (WORK / ("%s-%s.log" % (runner.name, key))).write_text(EVENT_MARKERS.sub("", proc.stdout + proc.stderr))
        log("%s %s: %s in %.0fs" % (runner.name, key, out["recaps"][key], took))
        return proc

    play("site", "playbooks/site.yml")
    if second_site:
        play("site-again", "playbooks/site.yml")
    workload(env)
    play("migrate", "playbooks/migrate_workloads.yml", "-e", MIGRATE_VARS)
    play("report", "playbooks/report.yml", "-e", "report_dir=%s" % runner.report_to, "-e", "report_cluster_name=lab")
    out["snapshot"] = snapshot(env)
    return out


@pytest.fixture(scope="module")
def charts():
    dest = WORK / "charts"
    env = lab_env()
    run([str(BIN / "python"), "tests/fixtures/charts/chart_repo.py", "build", str(dest)], env=env)
    return dest


def fresh_lab():
    lab("down")
    lab("up")
    return lab_env()


@pytest.fixture(scope="module")
def outside(charts):
    env = fresh_lab()
    report_dir = WORK / "report-outside"
    shutil.rmtree(report_dir, ignore_errors=True)
    report_dir.mkdir(parents=True)  # as the one mounted inside is: the same task results
    return scenario(Outside(env, charts, report_dir), env)


@pytest.fixture(scope="module")
def inside(outside, charts):
    env = fresh_lab()
    report_dir = WORK / "report-inside"
    shutil.rmtree(report_dir, ignore_errors=True)
    report_dir.mkdir(parents=True)
    credential = self_contained_kubeconfig(env, WORK / "credential-kubeconfig")
    result = scenario(Inside(env, charts, report_dir, credential), env, second_site=True)
    result.update(env=env, credential=credential)
    return result


@pytest.fixture(scope="module", autouse=True)
def lab_down_at_the_end():
    # ansible-navigator refuses podman without /dev/mqueue (it mounts it for Python's
    # multiprocessing in the container); Docker gives this machine a /dev without it.
    os.makedirs("/dev/mqueue", exist_ok=True)
    yield
    lab("down")


def test_the_image_is_local_and_holds_no_credential():
    env = dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF)
    run(["podman", "image", "exists", IMAGE], env=env)
    # No kubeconfig variable, no ~/.kube, nothing at the paths the credential is mounted on.
    script = "env | grep -E '^(KUBECONFIG|K8S_AUTH_)' || true; ls -d ~/.kube /root/.kube /var/run/dra-gpu 2>/dev/null || true"
    found = run(["podman", "run", "--rm", "--network", "none", IMAGE, "sh", "-c", script], env=env)[0].stdout
    assert found.strip() == "", found


def test_inside_runs_the_image_collections_not_the_mounted_checkout(inside, charts):
    runner = Inside(inside["env"], charts, WORK / "report-inside", inside["credential"])
    listed = runner.exec("ansible-galaxy", "collection", "list", "dra.gpu")
    assert "# /usr/share/ansible/collections/ansible_collections" in listed, listed
    assert str(ROOT) not in listed, listed


def test_site_migrate_and_report_give_the_same_results_inside(outside, inside):
    for key in ("site", "migrate", "report"):
        assert inside["recaps"][key] == outside["recaps"][key], key
        # On a fresh lab each one changes something (report.yml: its files), and nothing fails.
        assert outside["recaps"][key]["failed"] == 0 and outside["recaps"][key]["changed"] > 0, key
    assert inside["snapshot"]["device_classes"] == outside["snapshot"]["device_classes"]
    assert inside["snapshot"]["node_labels"] == outside["snapshot"]["node_labels"]
    out_objects, in_objects = Counter(outside["snapshot"]["objects"]), Counter(inside["snapshot"]["objects"])
    only_out, only_in = sorted((out_objects - in_objects).elements()), sorted((in_objects - out_objects).elements())
    assert not only_out and not only_in, "outside only: %s\ninside only: %s" % (only_out, only_in)
    summary = {"outside": {k: outside[k] for k in ("recaps", "times")},
               "inside": {k: inside[k] for k in ("recaps", "times")},
               "objects": len(inside["snapshot"]["objects"])}
    (WORK / "summary.json").write_text(json.dumps(summary, indent=2))
    log("summary: " + json.dumps(summary))


def test_a_second_site_run_inside_changes_nothing(inside):
    again = inside["recaps"]["site-again"]
    assert again["changed"] == 0 and again["failed"] == 0, again


def test_report_writes_its_page_into_the_mounted_directory(inside):
    report_dir = WORK / "report-inside"
    html = (report_dir / "gpu-usage.html").read_text()
    markdown = (report_dir / "gpu-usage.md").read_text()
    assert "<svg" in html and "gpu.nvidia.com" in markdown + html
    # The same page as outside, but for the time it was made and what depends on the node the
    # scheduler picked for the migrated pod: the per-node bars and tables, the free-per-node column.
    outside_md = (WORK / "report-outside" / "gpu-usage.md").read_text()

    def summary(page):
        sections = re.split(r"\n(?=## )", re.sub(r"\d{4}-\d\d-\d\dT[\d:]+Z", "TIME", page))
        kept = [section for section in sections
                if not section.startswith(("## Devices per node", "## Nodes", "## Free devices", "### "))]
        # Per class: how many devices it matches and how many are free, not which node's or their memory.
        free = next(section for section in sections if section.startswith("## Free devices"))
        kept.append("\n".join("|".join(line.split("|")[:4]) for line in free.splitlines()))
        return "\n".join(kept)
    assert "ee-migration | 1 | 1 | 1 |" in summary(markdown)
    assert summary(markdown) == summary(outside_md)


def test_awx_credential_injector_layout_through_ansible_runner(inside, charts):
    """A job as AWX runs it: a private data directory with the credential's file in env/ (0600,
    a mkstemp name) and env/envvars naming it by its path in the container (/runner/env/...),
    the project in project/, ansible-runner starting the image with the directory at /runner."""
    private = pathlib.Path(tempfile.mkdtemp(prefix="awx-job-", dir=WORK))
    (private / "env").mkdir()
    handle, path = tempfile.mkstemp(dir=private / "env")
    with os.fdopen(handle, "w") as out:
        out.write(inside["credential"].read_text())
    os.chmod(path, 0o600)
    in_container = "/runner/env/" + os.path.basename(path)
    envvars = {"K8S_AUTH_KUBECONFIG": in_container, "KUBECONFIG": in_container}
    (private / "env" / "envvars").write_text(yaml.safe_dump(envvars))
    shutil.copytree(ROOT / "playbooks", private / "project")
    (private / "inventory").mkdir()
    shutil.copy(ROOT / INVENTORY, private / "inventory" / "hosts.yml")
    (private / "env" / "extravars").write_text(yaml.safe_dump({"report_dir": "/runner/artifacts/report",
                                                               "report_cluster_name": "lab"}))
    env = dict(inside["env"], CONTAINERS_CONF=CONTAINERS_CONF)
    proc, took = run([str(BIN / "ansible-runner"), "run", str(private), "-p", "report.yml", "--process-isolation",
                      "--process-isolation-executable", "podman", "--container-image", IMAGE,
                      "--container-option=--network=host", "--container-option=--pull=never",
                      # The job runs as the owner of its private data directory (root here), as
                      # AWX's rootless podman (--userns=keep-id) or its Kubernetes pod has it.
                      "--container-option=--user=0", "-j"],
                     env=env, check=False)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    stats = [e for e in events if e.get("event") == "playbook_on_stats"]
    assert proc.returncode == 0 and stats, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert stats[-1]["event_data"]["failures"] == {}, stats[-1]["event_data"]
    log("ansible-runner report.yml: rc=0 in %.0fs, %s" % (took, stats[-1]["event_data"]["ok"]))
    assert any(private.glob("artifacts/**/gpu-usage.html")), "no report under %s/artifacts" % private


def test_a_removed_python_requirement_fails_the_run_naming_the_import(inside, charts, tmp_path):
    """The same image without the kubernetes client (as if requirements.txt had lost it and no
    check had stopped the build): the job fails, and says which library it could not import."""
    broken = IMAGE.rsplit(":", 1)[0] + ":without-kubernetes"
    env = dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF)
    (tmp_path / "Containerfile").write_text(
        "FROM %s\nUSER root\nRUN python3 -m pip uninstall -y kubernetes\nUSER 1000\n" % IMAGE)
    run(["podman", "build", "--network", "none", "-t", broken, str(tmp_path)], env=env)
    try:
        (tmp_path / "report").mkdir()
        runner = Inside(inside["env"], charts, tmp_path / "report", inside["credential"], image=broken)
        proc = runner.playbook("playbooks/report.yml", "-e", "report_dir=" + REPORT_IN_CONTAINER, check=False)[0]
        assert proc.returncode != 0
        assert "Failed to import the required Python library (kubernetes)" in proc.stdout + proc.stderr, \
            proc.stdout[-4000:]
        log("without kubernetes: " + next(line.strip() for line in EVENT_MARKERS.sub("", proc.stdout).splitlines()
                                          if "required Python library" in line)[:300])
    finally:
        subprocess.run(["podman", "rmi", "-f", broken], env=env, capture_output=True, check=False)


def test_incomplete_requirement_files_fail_the_build(tmp_path):
    """A tarball whose requirements.txt lacks cel-python and whose bindep.txt lacks the SSH
    client: ansible-builder build fails, naming both and the file each belongs in."""
    source = tmp_path / "collection"
    files = run(["git", "ls-files"], cwd=ROOT)[0].stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    requirements = (source / "requirements.txt").read_text()
    assert "cel-python" in requirements
    (source / "requirements.txt").write_text(re.sub(r"(?m)^cel-python.*\n", "", requirements))
    bindep = (source / "bindep.txt").read_text()
    (source / "bindep.txt").write_text(re.sub(r"(?m)^openssh-client.*\n", "", bindep))
    run([str(BIN / "ansible-galaxy"), "collection", "build", str(source), "--output-path", str(tmp_path / "dist")])
    tarball = next((tmp_path / "dist").glob("dra-gpu-*.tar.gz"))
    image = IMAGE.rsplit(":", 1)[0] + ":incomplete"
    env = dict(os.environ, EE_IMAGE=image, EE_COLLECTION_TARBALL=str(tarball), EE_WORK=str(WORK.parent / "incomplete"))
    proc, took = run([str(ROOT / "tests" / "ee" / "build-image.sh")], env=env, check=False)
    subprocess.run(["podman", "rmi", "-f", image], capture_output=True, check=False,
                   env=dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF))
    assert proc.returncode != 0, "the build passed without cel-python and the SSH client"
    err = proc.stderr
    assert "Python module 'celpy'" in err and "requirements.txt" in err, err[-4000:]
    assert "command 'ssh'" in err and "bindep.txt" in err, err[-4000:]
    log("incomplete build failed in %.0fs as it should:\n%s" % (
        took, "\n".join(line for line in err.splitlines() if line.startswith(("  - ", "check_image")))))
