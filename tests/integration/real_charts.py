"""Render NVIDIA's real charts with the values dra.gpu plans, check their images, and run site.yml with them in the lab.

The stand-in charts (tests/fixtures/charts) are what CI installs; users install NVIDIA's. This
script takes NVIDIA's charts from their git repositories (or a directory of charts), packages
them as the role's `gpu_operator_chart_source: local` expects, and

  1. renders every combination the collection supports (operator version x layout x image
     mirror unset/set x sharing off/on) with the values gov.plan() computes, as the role would
     against a 1.35.4 cluster;
  2. collects every image the manifests make a cluster pull: pod specs, the operands the
     operator deploys from its ClusterPolicy / GPUCluster / NVIDIADriver resources, and the
     *_IMAGE variables of the operator's Deployment; with a mirror, every deployed image must
     come from the mirror with NVIDIA's path kept; when the plan lists its images, every
     deployed image must be in that list;
  3. finds planned values that change nothing in the render (a value the chart ignores);
  4. with --lab, runs playbooks/site.yml against the running lab (`lab env` exported) with the
     real charts, and removes the releases again between runs.

    .venv/bin/python tests/integration/real_charts.py --operator-repo DIR --dra-repo DIR [--lab] [--out DIR]
    .venv/bin/python tests/integration/real_charts.py --charts DIR [--lab]

DIR of --operator-repo / --dra-repo: git directories (bare mirrors are fine) of
NVIDIA/gpu-operator and kubernetes-sigs/dra-driver-nvidia-gpu. Nothing from them is written
inside the repository except under the git-ignored .lab/ (default --out .lab/real-charts).
Exit status 1 when a render, an image check or a lab run fails.
"""

import argparse
import copy
import dataclasses
import datetime
import glob
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

import yaml

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO_ROOT, "build", "collections"))
sys.path.insert(0, os.path.join(REPO_ROOT, "lab"))

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog  # noqa: E402
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov  # noqa: E402
from labctl import paths as lab_paths  # noqa: E402
from labctl.apiserver import build as lab_build  # noqa: E402

DEFAULT_OUT = os.path.join(REPO_ROOT, ".lab", "real-charts")
DEFAULT_MIRROR = "mirror.example.com/nv"
# The cluster the role would render against: the lab's version, with DRA's v1 API served
# (v26.7's GPUCluster template looks for the DeviceClass resource, hence its own entry).
KUBE_VERSION = "1.35.4"
API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1/DeviceClass")
# The lab's GPU nodes; offline only their number matters (the plan moves all of them to DRA).
GPU_NODES = ("node-a", "node-b")
OPERATOR_CHART_PATH = "deployments/gpu-operator"
DRA_CHART_PARENT = "deployments/helm"

# Resources whose spec names the operands the operator deploys itself.
OPERAND_KINDS = ("ClusterPolicy", "GPUCluster", "NVIDIADriver")
# ClusterPolicy operands that run only on nodes set up for virtual machines: the operator labels
# nodes for them only with sandboxWorkloads.enabled (gpuStateLabels in controllers/state_manager.go).
SANDBOX_ONLY = ("sandboxDevicePlugin", "kataSandboxDevicePlugin", "vfioManager", "vgpuManager",
                "vgpuDeviceManager", "kataManager", "ccManager")


# ---------------------------------------------------------------- charts


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)


def find_helm(explicit=None):
    """--helm, else the helm the lab built (what `lab env` puts on PATH), else helm on PATH."""
    built = os.path.join(lab_paths.tool_build_dir("helm", lab_build.HELM_VERSION), "bin", "helm")
    for candidate in (explicit, built, shutil.which("helm")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("no helm: pass --helm, or build the lab's with `make lab-build`")


def git_tags(git_dir):
    return set(run(["git", "--git-dir", git_dir, "tag", "--list"]).stdout.split())


def extract(git_dir, tag, path, dest):
    """The directory ``path`` at ``tag``, written under ``dest`` (git archive | tar -x)."""
    os.makedirs(dest, exist_ok=True)
    archive = subprocess.Popen(["git", "--git-dir", git_dir, "archive", tag, path], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", dest], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise RuntimeError("git archive %s %s failed in %s" % (tag, path, git_dir))
    return os.path.join(dest, path)


def set_chart_version(chart_dir, version):
    """Set version and appVersion as NVIDIA's release does: gpu-operator's Chart.yaml in git says
    v1.0.0-devel and the release sets the tag, which the operator's and validator's image tags
    default to (appVersion) and the role asks Helm for; a DRA chart taken from a branch says
    0.5.0-dev, and its image tag defaults to "v" + appVersion."""
    chart_yaml = os.path.join(chart_dir, "Chart.yaml")
    with open(chart_yaml) as handle:
        text = handle.read()
    for key in ("version", "appVersion"):
        text = re.sub(r"(?m)^%s:.*$" % key, '%s: "%s"' % (key, version), text)
    with open(chart_yaml, "w") as handle:
        handle.write(text)


def package(helm, chart_dir, dest):
    out = run([helm, "package", chart_dir, "-d", dest]).stdout
    return out.strip().rsplit(": ", 1)[-1]


def dra_chart_versions():
    """The DRA driver charts the plan pairs with or offers for the supported operator versions
    (spelled 0.4.1)."""
    return sorted({version for info in catalog.OPERATOR_VERSIONS.values() for version in info["dra_drivers"]},
                  key=catalog.parse_version)


# DRA driver releases the stored copy of the driver's repository has no tag for, and the branch
# that has every feature of the release: the copy ends on 2026-08-08, before v0.5.0 (released
# 2026-08-19 with the version bump of PR #1367), and main's chart, 0.5.0-dev, has them all. Used
# only when the tag is missing; the chart is then packaged with the release's version.
UNTAGGED_RELEASES = {"0.5.0": "main"}


def has_ref(git_dir, ref):
    return subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "--verify", "--quiet", ref + "^{commit}"],
                          capture_output=True, check=False).returncode == 0


def dra_ref(dra_repo, version, tags):
    """(git ref, a note on it) for a DRA chart version: its tag, else the branch UNTAGGED_RELEASES
    names for it; (None, why) when the repository has neither."""
    tag = "v" + version
    if tag in tags:
        return tag, ""
    branch = UNTAGGED_RELEASES.get(version)
    if branch and has_ref(dra_repo, branch):
        commit, date = run(["git", "--git-dir", dra_repo, "log", "-1", "--format=%h %cs", branch]).stdout.split()
        return branch, "commit %s of %s, packaged as %s: no tag %s in this copy" % (commit, date, version, tag)
    return None, "%s has no tag %s (DRA driver chart %s %s, which the plan pairs with or offers for an operator " \
        "version)" % (dra_repo, tag, catalog.dra_driver_chart(version), version)


def charts_from_repositories(helm, operator_repo, dra_repo, work, dest):
    """Package the supported operator versions and their DRA charts from git; returns
    [{chart, version, file, source}] plus [messages] for versions the repositories lack."""
    packaged, missing = [], []
    operator_tags, dra_tags = git_tags(operator_repo), git_tags(dra_repo)
    # (repository, git ref, chart path, the version to package it as, a note on the ref)
    wanted = [(operator_repo, version, OPERATOR_CHART_PATH, version, "")
              for version in catalog.supported_operator_versions() if version in operator_tags]
    missing += ["%s has no tag %s (gpu-operator)" % (operator_repo, version)
                for version in catalog.supported_operator_versions() if version not in operator_tags]
    for version in dra_chart_versions():
        ref, note = dra_ref(dra_repo, version, dra_tags)
        if ref is None:
            missing.append(note)
            continue
        wanted.append((dra_repo, ref, "%s/%s" % (DRA_CHART_PARENT, catalog.dra_driver_chart(version)), version, note))
    for repo, ref, path, version, note in sorted(set(wanted)):
        chart_dir = extract(repo, ref, path, os.path.join(work, version))
        # gpu-operator's Chart.yaml says v1.0.0-devel in git, the DRA chart's main 0.5.0-dev.
        if repo == operator_repo or ref != "v" + version:
            set_chart_version(chart_dir, version)
        source = "%s@%s:%s%s" % (repo, ref, path, " (%s)" % note if note else "")
        packaged.append(chart_entry(chart_dir, package(helm, chart_dir, dest), source))
    return packaged, missing


def charts_from_directory(helm, directory, work, dest):
    """Charts already extracted (directories with Chart.yaml) or packaged (.tgz): packaged into ``dest``."""
    packaged = []
    for path in sorted(glob.glob(os.path.join(directory, "*"))):
        if path.endswith(".tgz"):
            target = os.path.join(dest, os.path.basename(path))
            shutil.copyfile(path, target)
            packaged.append(chart_entry(None, target, path))
        elif os.path.isfile(os.path.join(path, "Chart.yaml")):
            copy_dir = os.path.join(work, os.path.basename(path))
            shutil.copytree(path, copy_dir)
            packaged.append(chart_entry(copy_dir, package(helm, copy_dir, dest), path))
    return packaged, []


def chart_entry(chart_dir, tgz, source):
    name, version = re.match(r"^(.*)-(v?\d+\.\d+\.\d+[^/]*)\.tgz$", os.path.basename(tgz)).groups()
    return {"chart": name, "version": version, "file": tgz, "source": source}


def chart_file(chart_dir, chart, version):
    """The packaged chart the role would take for a planned release (versions with or without v)."""
    bare = version.lstrip("v")
    for name in ("%s-%s.tgz" % (chart, bare), "%s-v%s.tgz" % (chart, bare)):
        if os.path.exists(os.path.join(chart_dir, name)):
            return os.path.join(chart_dir, name)
    return None


# ---------------------------------------------------------------- combinations and plans


@dataclasses.dataclass(frozen=True)
class Combination:
    version: str
    layout: str  # standalone, gpucluster or device_plugin (DRA off)
    mirror: str | None
    sharing: bool
    # gpu_operator_dra_driver_version; None: the chart the plan pairs with the operator version.
    dra_driver_version: str | None = None

    @property
    def name(self):
        return "%s-%s-%s-%s%s" % (self.version, self.layout, "mirror" if self.mirror else "nvidia",
                                  "sharing" if self.sharing else "plain",
                                  "-dra" + self.dra_driver_version if self.dra_driver_version else "")

    @property
    def unmirrored(self):
        return dataclasses.replace(self, mirror=None)


def combinations(mirror, chart_dir):
    """Every version x layout it offers (plus DRA off) x mirror unset/set x sharing off/on
    (sharing needs DRA: the plan refuses it with the device plugin). The standalone layout is
    rendered with the DRA chart the plan pairs, and also with each other chart it offers for the
    version that chart_dir has."""
    found = []
    for version in catalog.supported_operator_versions():
        info = catalog.OPERATOR_VERSIONS[catalog.parse_version(version)[:2]]
        dra_versions = [None] + [v for v in info["dra_drivers"][1:] if chart_file(chart_dir, catalog.dra_driver_chart(v), v)]
        for layout in sorted(info["layouts"]) + ["device_plugin"]:
            for dra_version in dra_versions if layout == "standalone" else [None]:
                for registry in (None, mirror):
                    for sharing in ((False,) if layout == "device_plugin" else (False, True)):
                        found.append(Combination(version, layout, registry, sharing, dra_version))
    return found


def plan(combo):
    """gov.plan() called as the gpu_operator_plan module calls it, with the role's defaults
    (driver and toolkit on, no extra values, every GPU node on DRA)."""
    dra_enabled = combo.layout != "device_plugin"
    mode = combo.layout if dra_enabled else "auto"
    extra = {"sharing": combo.sharing}
    # The module passes the GPU nodes' labels for the driver image's OS suffix; without NFD's
    # OS labels the planned tag is the bare driver version, as the chart renders it.
    if "gpu_node_labels" in inspect.signature(gov.plan).parameters:
        extra["gpu_node_labels"] = {node: {} for node in GPU_NODES}
    return gov.plan(combo.version, mode, dra_enabled, True, True, list(GPU_NODES), [], {}, {},
                    combo.dra_driver_version, combo.mirror, **extra)


# ---------------------------------------------------------------- rendering


class Renderer:
    """helm template as the role's Helm would see the cluster; identical requests are answered once."""

    def __init__(self, helm):
        self.helm = helm
        self.cache = {}

    def render(self, release, namespace, chart_path, values):
        key = (release, namespace, chart_path, json.dumps(values, sort_keys=True))
        if key not in self.cache:
            self.cache[key] = self._template(release, namespace, chart_path, values)
        return self.cache[key]

    def _template(self, release, namespace, chart_path, values):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
            yaml.safe_dump(values, handle)
        cmd = [self.helm, "template", release, chart_path, "-n", namespace, "-f", handle.name,
               "--kube-version", KUBE_VERSION]
        for api in API_VERSIONS:
            cmd += ["--api-versions", api]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        finally:
            os.unlink(handle.name)
        if done.returncode != 0:
            return False, (done.stderr or done.stdout).strip()
        return True, done.stdout

    def defaults(self, chart_path):
        key = ("show values", chart_path)
        if key not in self.cache:
            self.cache[key] = yaml.safe_load(run([self.helm, "show", "values", chart_path]).stdout) or {}
        return self.cache[key]


# ---------------------------------------------------------------- images in manifests


@dataclasses.dataclass
class FoundImage:
    release: str
    where: str  # the object and field that names it
    ref: str
    deployed: bool = True
    why_not: str = ""


def _truthy(value):
    return value is True or str(value).lower() == "true"


def images_in_manifests(release, text):
    found = []
    for doc in yaml.safe_load_all(text):
        if not isinstance(doc, dict):
            continue
        label = "%s/%s" % (doc.get("kind"), (doc.get("metadata") or {}).get("name"))
        found += container_images(release, label, doc)
        if doc.get("kind") in OPERAND_KINDS:
            found += operand_images(release, label, doc)
    return found


def container_images(release, label, node):
    """Images of every container (pods, workload templates, hook Jobs), and the *_IMAGE variables
    the operator reads for operands its resources leave unset (e.g. v26.7's VALIDATOR_IMAGE)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers", "ephemeralContainers") and isinstance(value, list):
                for container in value:
                    found += one_container(release, label, container)
            else:
                found += container_images(release, label, value)
    elif isinstance(node, list):
        for item in node:
            found += container_images(release, label, item)
    return found


def one_container(release, label, container):
    where = "%s container %s" % (label, container.get("name"))
    found = [FoundImage(release, where, container["image"])] if container.get("image") else []
    for env in container.get("env") or []:
        if str(env.get("name", "")).endswith("_IMAGE") and env.get("value"):
            found.append(FoundImage(release, "%s env %s" % (where, env["name"]), env["value"]))
    return found


def operand_images(release, label, resource):
    """The images the operator would pull for a ClusterPolicy, GPUCluster or NVIDIADriver, built as
    its imagePath() does: repository/image:version (@ for a sha256 digest), or the image alone."""
    spec = resource.get("spec") or {}
    return list(_walk_operands(release, label, resource.get("kind"), spec, spec, "", True, ""))


def _walk_operands(release, label, kind, spec, node, path, deployed, why_not):
    deployed, why_not = _operand_state(kind, spec, node, path, deployed, why_not)
    # An NVIDIADriver is the driver itself: its image fields sit at the top of its spec.
    if (path or kind == "NVIDIADriver") and isinstance(node.get("image"), str) and node["image"]:
        where = "%s spec%s" % (label, "." + path if path else "")
        yield FoundImage(release, where, operand_ref(node), deployed, why_not)
    for key, child in node.items():
        if isinstance(child, dict):
            yield from _walk_operands(release, label, kind, spec, child, "%s.%s" % (path, key) if path else key,
                                      deployed, why_not)


def _operand_state(kind, spec, node, path, deployed, why_not):
    """Whether the operator would deploy the operand at ``path`` (inherited by its parts)."""
    if not deployed:
        return deployed, why_not
    if "enabled" in node and not _truthy(node["enabled"]):
        return False, "%s.enabled=false" % path
    if kind == "ClusterPolicy" and path in SANDBOX_ONLY and \
            not _truthy((spec.get("sandboxWorkloads") or {}).get("enabled")):
        return False, "only with sandboxWorkloads.enabled"
    if kind == "ClusterPolicy" and path == "driver" and _truthy(node.get("useNvidiaDriverCRD")):
        return False, "driver.useNvidiaDriverCRD=true: an NVIDIADriver deploys it"
    return True, ""


def operand_ref(fields):
    repository, image, version = (str(fields.get(k) or "") for k in ("repository", "image", "version"))
    if not repository and not version:
        return image
    if not (repository and image and version):
        return "(incomplete: repository=%r image=%r version=%r, refused by the operator)" % (repository, image, version)
    return "%s/%s%s%s" % (repository, image, "@" if version.startswith("sha256:") else ":", version)


# ---------------------------------------------------------------- checks


def registry_path(ref):
    """('nvcr.io', 'nvidia/k8s/container-toolkit:v1') for a ref with a registry host, else None."""
    head, _slash, rest = ref.partition("/")
    if rest and ("." in head or ":" in head or head == "localhost"):
        return head, rest
    return None


def mirror_check(found, plain_found, mirror):
    """Deployed images not from the mirror, or from it under another path than NVIDIA's
    (the role's contract: the mirror keeps the paths, only the host changes). Images of
    operands that are off are listed apart: they would matter once someone turns them on."""
    prefix = mirror.rstrip("/") + "/"
    plain_by_place = {(image.release, image.where): image.ref for image in plain_found}
    failing, warnings = [], []
    for image in found:
        problem = None
        if not image.ref.startswith(prefix):
            problem = "not from the mirror"
        else:
            original = registry_path(plain_by_place.get((image.release, image.where), ""))
            if original and image.ref != prefix + original[1]:
                problem = "path changed (NVIDIA's: %s)" % plain_by_place[(image.release, image.where)]
        if problem:
            entry = {"release": image.release, "where": image.where, "ref": image.ref, "problem": problem}
            if image.deployed:
                failing.append(entry)
            else:
                warnings.append(dict(entry, why_not=image.why_not))
    return failing, warnings


def plan_comparison(found, planned):
    """Deployed images the plan does not list (a failure: a mirror built from the plan lacks them),
    and planned images no deployed object names (reported)."""
    if "images" not in planned:
        return None
    planned_refs = {image["ref"] for image in planned["images"]}
    deployed = {image.ref for image in found if image.deployed}
    missing = sorted({(image.release, image.where, image.ref) for image in found
                      if image.deployed and image.ref not in planned_refs})
    return {"not_in_plan": [{"release": r, "where": w, "ref": ref} for r, w, ref in missing],
            "planned_not_rendered": [image for image in planned["images"] if image["ref"] not in deployed]}


def leaves(values, prefix=()):
    """(path, value) of every planned setting; a list is one setting."""
    for key, value in values.items():
        if isinstance(value, dict) and value:
            yield from leaves(value, prefix + (key,))
        else:
            yield prefix + (key,), value


def without(values, path):
    trimmed = copy.deepcopy(values)
    parents = [trimmed]
    for key in path[:-1]:
        parents.append(parents[-1][key])
    del parents[-1][path[-1]]
    for depth in range(len(path) - 1, 0, -1):
        if not parents[depth]:
            del parents[depth - 1][path[depth - 1]]
    return trimmed


def default_at(defaults, path):
    node = defaults
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def values_without_effect(renderer, release, chart_path, values, rendered):
    """Planned values that differ from the chart's default yet leave the render unchanged: the
    chart does not read them (renders are deterministic, so equal text means no effect)."""
    defaults = renderer.defaults(chart_path)
    idle = []
    for path, value in leaves(values):
        if default_at(defaults, path) == value:
            continue
        ok, text = renderer.render(release["name"], release["namespace"], chart_path, without(values, path))
        if ok and text == rendered:
            idle.append({"release": release["name"], "value": ".".join(path), "planned": value,
                         "chart_default": default_at(defaults, path)})
    return idle


# ---------------------------------------------------------------- one combination


def check_combination(renderer, combo, chart_dir, out_dir, plain_images, effect_check):
    """Plan, render, and check one combination; returns its record and the images it found."""
    record = {"combination": combo.name, "version": combo.version, "layout": combo.layout,
              "mirror": combo.mirror, "sharing": combo.sharing, "dra_driver_version": combo.dra_driver_version,
              "releases": [], "failures": []}
    try:
        planned = plan(combo)
    except catalog.PlanError as exc:
        record["failures"].append("plan refused: %s" % exc)
        return record, []
    combo_dir = os.path.join(out_dir, "renders", combo.name)
    os.makedirs(combo_dir, exist_ok=True)
    found = []
    for release in planned["releases"]:
        found += render_release(renderer, release, chart_dir, combo_dir, record, effect_check)
    record["images"] = sorted({image.ref for image in found if image.deployed})
    record["images_off"] = sorted({image.ref for image in found if not image.deployed} - set(record["images"]))
    # What did render is checked against the mirror even when another release did not; the
    # comparison with the plan needs every release, or the plan's list would look too long.
    everything_rendered = not record["failures"]
    if combo.mirror:
        failing, warnings = mirror_check(found, plain_images.get(combo.unmirrored, []), combo.mirror)
        record["mirror_offenders"], record["mirror_offenders_off"] = failing, warnings
        record["failures"] += ["image %s (%s): %s" % (o["ref"], o["where"], o["problem"]) for o in failing]
    comparison = plan_comparison(found, planned) if everything_rendered else None
    record["plan_images"] = comparison
    if comparison:
        record["failures"] += ["image %s (%s) is not in the plan's images" % (m["ref"], m["where"])
                               for m in comparison["not_in_plan"]]
    return record, found


def render_release(renderer, release, chart_dir, combo_dir, record, effect_check):
    entry = {"release": release["name"], "chart": release["chart"], "chart_version": release["chart_version"]}
    record["releases"].append(entry)
    chart_path = chart_file(chart_dir, release["chart"], release["chart_version"])
    values_file = os.path.join(combo_dir, "%s.values.yaml" % release["name"])
    with open(values_file, "w") as handle:
        yaml.safe_dump(release["values"], handle, sort_keys=True)
    entry["values_file"] = os.path.relpath(values_file, REPO_ROOT)
    if chart_path is None:
        entry["rendered"] = False
        record["failures"].append("no chart %s %s in %s" % (release["chart"], release["chart_version"], chart_dir))
        return []
    ok, text = renderer.render(release["name"], release["namespace"], chart_path, release["values"])
    entry["rendered"] = ok
    if not ok:
        entry["error"] = text
        record["failures"].append("helm template %s failed: %s" % (release["name"], text.splitlines()[-1]))
        return []
    manifest = os.path.join(combo_dir, "%s.yaml" % release["name"])
    with open(manifest, "w") as handle:
        handle.write(text)
    if effect_check:
        entry["values_without_effect"] = values_without_effect(renderer, release, chart_path, release["values"], text)
    return images_in_manifests(release["name"], text)


def check_all(helm, chart_dir, out_dir, mirror, effect_check=True):
    renderer = Renderer(helm)
    records, plain_images = [], {}
    # Unmirrored first: the mirrored render is compared with NVIDIA's paths.
    for combo in sorted(combinations(mirror, chart_dir), key=lambda c: (c.mirror is not None, c.name)):
        record, found = check_combination(renderer, combo, chart_dir, out_dir, plain_images, effect_check)
        if combo.mirror is None:
            plain_images[combo] = found
        records.append(record)
    return sorted(records, key=lambda r: (catalog.parse_version(r["version"]), r["layout"], r["dra_driver_version"] or "",
                                          bool(r["mirror"]), r["sharing"]))


# ---------------------------------------------------------------- the lab


@dataclasses.dataclass(frozen=True)
class LabCase:
    version: str
    mode: str
    dra_driver_version: str | None = None  # None: the chart the plan pairs
    # Why this case cannot pass in the lab, when it cannot (it still runs, to show how it fails).
    expected_gap: str = ""

    @property
    def name(self):
        return "%s-%s%s" % (self.version, self.mode, "-dra" + self.dra_driver_version if self.dra_driver_version else "")


GPUCLUSTER_GAP = ("not testable in the lab: no real operator runs there, so nothing reconciles the GPUCluster into "
                  "the DRA driver's DaemonSet and no slices appear")


def lab_cases(chart_dir):
    """Each operator minor's newest version standalone with the DRA chart the plan pairs, and with
    each other chart it offers that chart_dir has; v26.7.0's GPUCluster."""
    newest = {}
    for version in catalog.supported_operator_versions():
        newest[catalog.parse_version(version)[:2]] = version
    cases = []
    for minor in ((26, 3), (26, 7), (25, 10)):
        cases.append(LabCase(newest[minor], "standalone"))
        cases += [LabCase(newest[minor], "standalone", other) for other in catalog.OPERATOR_VERSIONS[minor]["dra_drivers"][1:]
                  if chart_file(chart_dir, catalog.dra_driver_chart(other), other)]
    return cases + [LabCase(newest[(26, 7)], "gpucluster", expected_gap=GPUCLUSTER_GAP)]


REMOVE_PLAYBOOK = """\
- name: Remove what gpu_operator installed (real-chart run)
  hosts: localhost
  gather_facts: false
  roles:
    - role: dra.gpu.gpu_operator
      vars:
        gpu_operator_state: absent
"""
SLICES_TIME = re.compile(r"([0-9.]+)s from the start of the install step to\s+published slices")


def ansible_playbook(playbook, extra_vars, log_path):
    """ansible-playbook with the inventory `make demo` uses; returns (rc, seconds, output)."""
    cmd = ["ansible-playbook", "-i", os.path.join(REPO_ROOT, "playbooks", "inventory", "lab.yml"), playbook,
           "-e", json.dumps(extra_vars)]
    env = dict(os.environ, NO_COLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
    with open(log_path, "w") as handle:
        handle.write("$ %s\n%s%s" % (" ".join(cmd), done.stdout, done.stderr))
    return done.returncode, time.monotonic() - started, done.stdout + done.stderr


def failed_task(output):
    """The task that stopped the playbook and its message (the last failure: earlier ones may have
    been rescued into a clearer one)."""
    lines = output.splitlines()
    task, last = None, None
    for number, line in enumerate(lines):
        header = re.match(r"^TASK \[(.*)\]", line)
        if header:
            task = header.group(1)
        elif line.startswith(("fatal: ", "failed: ")):
            body = line.split("=>", 1)[1].strip() if "=>" in line else ""
            if not body:
                # The project's ansible.cfg prints results as YAML, indented below the line.
                block = []
                for following in lines[number + 1:]:
                    if following.strip() and not following.startswith(" "):
                        break
                    block.append(following)
                body = "\n".join(block)
            last = "%s: %s" % (task, result_message(body))
    return last or (lines or [""])[-1]


def result_message(body):
    """A failed result's msg, on one line, from its JSON or YAML form."""
    try:
        data = json.loads(body)
    except ValueError:
        try:
            data = yaml.safe_load(textwrap.dedent(body))
        except yaml.YAMLError:
            data = None
    text = data.get("msg") if isinstance(data, dict) and data.get("msg") else body
    return " ".join(str(text).split())[:800]


def lab_minor():
    """The running lab's Kubernetes minor, read from its API server (kubectl on the lab's PATH)."""
    answer = json.loads(subprocess.run(["kubectl", "version", "-o", "json"], check=True, capture_output=True,
                                       text=True).stdout)
    return int(answer["serverVersion"]["major"]), int(re.match(r"\d+", answer["serverVersion"]["minor"]).group(0))


def run_lab_case(case, chart_dir, out_dir):
    """site.yml with one case, then the role with state absent, so that the next case starts clean."""
    # The lab's own minor as the upgrade target: site.yml's upgrade step then has nothing to do
    # (the role's default, the newest minor tested, would upgrade the lab, which it cannot).
    extra = {"cluster_upgrade_target": "%d.%d" % lab_minor(),
             "gpu_operator_chart_source": "local", "gpu_operator_chart_dir": chart_dir,
             "gpu_operator_version": case.version, "gpu_operator_dra_mode": case.mode}
    if case.dra_driver_version:
        extra["gpu_operator_dra_driver_version"] = case.dra_driver_version
    if case.expected_gap:
        # No operator reconciles here: wait a minute, not ten, for the DaemonSet it would create
        # (k8s_info's wait on an object that never appears ends without failing) and for slices.
        extra.update(gpu_operator_timeout=60, gpu_operator_slice_timeout=60)
    rc, seconds, output = ansible_playbook(os.path.join(REPO_ROOT, "playbooks", "site.yml"), extra,
                                           os.path.join(out_dir, "lab-%s-site.log" % case.name))
    slices = SLICES_TIME.search(output)
    result = {"case": case.name, "version": case.version, "mode": case.mode, "rc": rc,
              "dra_driver_version": case.dra_driver_version, "wall_s": round(seconds, 1),
              "to_slices_s": float(slices.group(1)) if slices else None,
              "status": "pass" if rc == 0 else ("not testable" if case.expected_gap else "fail")}
    if rc != 0:
        result["error"] = failed_task(output)
        if case.expected_gap:
            result["why"] = case.expected_gap
    remove = os.path.join(out_dir, "remove.yml")
    with open(remove, "w") as handle:
        handle.write(REMOVE_PLAYBOOK)
    rc_absent, _seconds, output = ansible_playbook(remove, extra, os.path.join(out_dir, "lab-%s-absent.log" % case.name))
    result["removed"] = rc_absent == 0
    if rc_absent != 0:
        result["status"] = "fail"
        result["removal_error"] = failed_task(output)
    return result


def run_lab(chart_dir, out_dir):
    if not os.environ.get("KUBECONFIG") or not shutil.which("ansible-playbook"):
        sys.exit("--lab needs the lab's environment: eval \"$(make -s lab-env)\" (KUBECONFIG, helm and "
                 "ansible-playbook on PATH)")
    results = []
    for case in lab_cases(chart_dir):
        print("lab: site.yml with gpu-operator %s ..." % case.name, flush=True)
        results.append(run_lab_case(case, chart_dir, out_dir))
        print("lab:   %s in %.0f s" % (results[-1]["status"], results[-1]["wall_s"]), flush=True)
    return results


# ---------------------------------------------------------------- report


def render_status(record):
    if not record["releases"] or not all(r.get("rendered") for r in record["releases"]):
        return "FAILED"
    return "ok"


def image_status(record):
    """ok (number of deployed images) or FAILED (offenders); "partial" when a release did not render."""
    rendered = [release for release in record["releases"] if release.get("rendered")]
    if not rendered:
        return "-"
    bad = [failure for failure in record["failures"] if failure.startswith("image ")]
    text = "FAILED (%d)" % len(bad) if bad else "ok (%d)" % len(record.get("images", []))
    return text if len(rendered) == len(record["releases"]) else text + " partial"


def plan_status(record):
    comparison = record.get("plan_images")
    if comparison is None:
        return "skipped" if render_status(record) == "ok" else "-"
    return "%d missing, %d extra" % (len(comparison["not_in_plan"]), len(comparison["planned_not_rendered"]))


def idle_values(record):
    return sorted({"%s:%s" % (v["release"], v["value"]) for r in record["releases"]
                   for v in r.get("values_without_effect") or []})


ROW = "| {:<9} | {:<24} | {:<6} | {:<7} | {:<8} | {:<14} | {:<18} | {} |"


def layout_label(record):
    if record["dra_driver_version"]:
        return "%s, DRA %s" % (record["layout"], record["dra_driver_version"])
    return record["layout"]


def table(records):
    lines = [ROW.format("version", "layout", "mirror", "sharing", "render", "images", "plan's images",
                        "values without effect"),
             ROW.format(*["---"] * 8)]
    for record in records:
        lines.append(ROW.format(record["version"], layout_label(record), "yes" if record["mirror"] else "no",
                                "on" if record["sharing"] else "off", render_status(record), image_status(record),
                                plan_status(record), ", ".join(idle_values(record)) or "-"))
    return lines


def lab_table(results):
    lines = ["| case | site.yml | install step to published slices | wall | note |", "| --- | --- | --- | --- | --- |"]
    for result in results:
        note = result.get("why") or result.get("error") or result.get("removal_error") or ""
        lines.append("| %s | %s | %s | %s s | %s |" % (
            result["case"], result["status"], "%.1f s" % result["to_slices_s"] if result["to_slices_s"] else "-",
            result["wall_s"], note.replace("|", "\\|")[:300]))
    return lines


FINDING_KINDS = (
    ("failure", "Failures (render, mirror or plan's image list)"),
    ("planned_not_rendered", "Planned images no deployed object names"),
    ("value_without_effect", "Planned values without effect on the render"),
    ("off_operand_not_mirrored", "Operands that are off by default and keep NVIDIA's registry with a mirror "
                                 "(pulled from there once someone turns them on)"),
)


def findings(records):
    """What the real charts say that the plan does not, each once, with the combinations it shows in."""
    seen = {}

    def add(kind, text, combo):
        seen.setdefault((kind, text), []).append(combo)

    for record in records:
        for failure in record["failures"]:
            add("failure", failure, record["combination"])
        for image in (record.get("plan_images") or {}).get("planned_not_rendered", []):
            add("planned_not_rendered", "%s (%s)" % (image["ref"], image["component"]), record["combination"])
        for value in idle_values(record):
            add("value_without_effect", value, record["combination"])
        for offender in record.get("mirror_offenders_off") or []:
            # One line per operand: its tag changes with every version.
            add("off_operand_not_mirrored", "%s: %s (%s; off: %s)" % (
                offender["where"], offender["ref"].rsplit(":", 1)[0], offender["problem"], offender["why_not"]),
                record["combination"])
    order = [kind for kind, _title in FINDING_KINDS]
    return [{"kind": kind, "finding": text, "combinations": combos}
            for (kind, text), combos in sorted(seen.items(), key=lambda item: order.index(item[0][0]))]


def markdown(summary):
    lines = ["# NVIDIA's real charts with dra.gpu's values", "", "Date: %s. Command: `%s`" % (
        summary["date"], summary["command"]), "", "Charts:", ""]
    lines += ["- %s %s (%s)" % (c["chart"], c["version"], c["source"]) for c in summary["charts"]]
    lines += ["- missing: %s" % line for line in summary["missing_charts"]]
    lines += ["", "## Renders and image checks", ""] + table(summary["renders"])
    if summary["lab"]:
        lines += ["", "## site.yml in the lab", ""] + lab_table(summary["lab"])
    for kind, title in FINDING_KINDS:
        chosen = [finding for finding in summary["findings"] if finding["kind"] == kind]
        if chosen:
            lines += ["", "## %s" % title, ""]
            lines += ["- %s (%d combination(s), e.g. %s)" % (f["finding"], len(f["combinations"]), f["combinations"][0])
                      for f in chosen]
    return "\n".join(lines) + "\n"


def failed(summary):
    return any(record["failures"] for record in summary["renders"]) or summary["missing_charts"] or \
        any(result["status"] == "fail" for result in summary["lab"])


# ---------------------------------------------------------------- main


def prepare_charts(helm, args, out_dir):
    """The packaged charts in out_dir/charts (a chart directory for the role), rebuilt each run."""
    chart_dir = os.path.join(out_dir, "charts")
    shutil.rmtree(chart_dir, ignore_errors=True)
    os.makedirs(chart_dir)
    work = tempfile.mkdtemp(prefix="real-charts-")
    try:
        if args.charts:
            return chart_dir, *charts_from_directory(helm, args.charts, work, chart_dir)
        return chart_dir, *charts_from_repositories(helm, args.operator_repo, args.dra_repo, work, chart_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check(helm, out_dir, mirror, operator_repo=None, dra_repo=None, charts=None, effect_check=True):
    """Package, render and check (no lab): the summary without its lab part."""
    args = argparse.Namespace(operator_repo=operator_repo, dra_repo=dra_repo, charts=charts)
    chart_dir, packaged, missing = prepare_charts(helm, args, out_dir)
    shutil.rmtree(os.path.join(out_dir, "renders"), ignore_errors=True)
    renders = check_all(helm, chart_dir, out_dir, mirror, effect_check)
    return {"charts": packaged, "missing_charts": missing, "chart_dir": chart_dir, "renders": renders,
            "findings": findings(renders), "lab": []}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--operator-repo", help="git directory of NVIDIA/gpu-operator")
    parser.add_argument("--dra-repo", help="git directory of kubernetes-sigs/dra-driver-nvidia-gpu")
    parser.add_argument("--charts", help="a directory of extracted or packaged charts instead of the repositories")
    parser.add_argument("--out", default=DEFAULT_OUT, help="output directory (default: .lab/real-charts)")
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="image registry for the mirrored combinations")
    parser.add_argument("--helm", help="helm binary (default: the lab's, else PATH)")
    parser.add_argument("--lab", action="store_true", help="also run site.yml in the running lab")
    parser.add_argument("--no-effect-check", dest="effect_check", action="store_false",
                        help="skip the search for planned values without effect (one render per value)")
    args = parser.parse_args(argv)
    if not args.charts and not (args.operator_repo and args.dra_repo):
        parser.error("give --operator-repo and --dra-repo, or --charts")
    return args


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    helm = find_helm(args.helm)
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    started = time.monotonic()
    summary = check(helm, out_dir, args.mirror, args.operator_repo, args.dra_repo, args.charts, args.effect_check)
    summary.update(date=datetime.date.today().isoformat(), helm=run([helm, "version", "--short"]).stdout.strip(),
                   command=" ".join(["tests/integration/real_charts.py"] + (argv if argv is not None else sys.argv[1:])))
    print("\n".join(table(summary["renders"])))
    print("rendered and checked %d combinations in %.0f s" % (len(summary["renders"]), time.monotonic() - started))
    if args.lab:
        summary["lab"] = run_lab(summary["chart_dir"], out_dir)
        print("\n".join(lab_table(summary["lab"])))
    for line in summary["missing_charts"]:
        print("missing chart: %s" % line)
    for finding in summary["findings"]:
        combos = finding["combinations"]
        print("%s: %s [%d combination(s), e.g. %s]" % (finding["kind"], finding["finding"], len(combos), combos[0]))
    with open(os.path.join(out_dir, "summary.json"), "w") as handle:
        json.dump(summary, handle, indent=1, default=str)
    with open(os.path.join(out_dir, "summary.md"), "w") as handle:
        handle.write(markdown(summary))
    print("summary: %s/summary.md and summary.json" % out_dir)
    return 1 if failed(summary) else 0


if __name__ == "__main__":
    sys.exit(main())
