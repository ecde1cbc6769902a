"""Compile the lab's control plane, etcd and helm from their official Go modules (labctl.gobuild).

Kubernetes publishes no binaries through the registries these machines reach, but its
source is a Go module. k8s.io/kubernetes replaces its staging modules with local paths,
so ``go install ...@vX`` is refused; a generated wrapper module requires it and
replaces each staging module with the published ``v0.<minor>.<patch>`` instead.

Everything lands under the lab cache (outside the repository), one directory per
version, so switching ``LAB_K8S_VERSION`` back and forth costs nothing once built and
the Go build cache makes a rebuild take seconds. The node lab packs these same binaries
into its images and builds kubeadm and kubelet here too (labctl.nodes).
"""

import datetime
import json
import os
import re
import shutil
import sys
import time

from labctl import gobuild, paths
from labctl.gobuild import BuildError

ETCD_VERSION = "3.6.16"
HELM_VERSION = "3.22.0"

K8S_COMMANDS = ("kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubectl")

_STAGING_RE = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/src/")


def normalise_k8s_version(version):
    version = version.strip().lstrip("v")
    if not re.fullmatch(r"1\.\d+\.\d+", version):
        raise BuildError("LAB_K8S_VERSION must look like 1.35.4 (got %r)" % version)
    return version


def staging_modules(version, workdir):
    """The staging modules k8s.io/kubernetes replaces with local paths, read from its go.mod."""
    info = json.loads(gobuild.go_output(["mod", "download", "-json", "k8s.io/kubernetes@v" + version], workdir))
    if info.get("Error"):
        raise BuildError("the Go module proxy does not serve k8s.io/kubernetes v%s: %s" % (version, info["Error"]))
    with open(info["GoMod"]) as handle:
        mods = sorted({m.group(1) for m in map(_STAGING_RE.match, handle) if m})
    with open(info["Info"]) as handle:
        published = json.load(handle).get("Time", "")
    return mods, published


def _ldflags_version(version, build_date):
    major, minor = version.split(".")[:2]
    flags = []
    for pkg in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version"):
        for key, value in (("gitVersion", "v" + version), ("gitMajor", major), ("gitMinor", minor),
                           ("gitCommit", "v" + version + "-gomodule"), ("gitTreeState", "clean"),
                           ("buildDate", build_date)):
            flags.append("-X %s.%s=%s" % (pkg, key, value))
    return " ".join(flags)


def build_kubernetes(version, log, force=False):
    """The control plane the lab runs, and kubectl (the node lab packs the same into its images)."""
    return build_kubernetes_commands(version, K8S_COMMANDS, "bin", "src", log, force)


def build_kubernetes_commands(version, commands, bin_name, src_name, log, force=False):
    """``commands`` of k8s.io/kubernetes at ``version`` into <cache>/kubernetes-v<version>/<bin_name>.

    ``src_name``: the wrapper module's directory beside it; one per set of commands, so the
    control plane's and the node lab's (labctl.nodes.runtime) never re-tidy each other's.
    """
    version = normalise_k8s_version(version)
    root = paths.k8s_build_dir(version)
    bindir = os.path.join(root, bin_name)
    if not force and gobuild.all_present(bindir, commands):
        return bindir
    with gobuild.build_lock(bindir, log):
        if not force and gobuild.all_present(bindir, commands):
            return bindir  # built meanwhile by another lab
        workdir = os.path.join(root, src_name)
        os.makedirs(workdir, exist_ok=True)
        staging, published = staging_modules(version, workdir)
        minor_patch = "v0." + version.split(".", 1)[1]
        gomod = gobuild.wrapper_gomod("dragpu.lab/kubernetes", [("k8s.io/kubernetes", "v" + version)],
                                      [(m, minor_patch) for m in staging])
        packages = ["k8s.io/kubernetes/cmd/" + c for c in commands]
        gobuild.prepare_wrapper(workdir, gomod, packages, log)
        # buildDate is the module's publication time, so a rebuild is byte-for-byte the
        # same command line and Go's cache answers it in seconds.
        build_date = published or "1970-01-01T00:00:00Z"
        tmp_bin = bindir + ".tmp"
        shutil.rmtree(tmp_bin, ignore_errors=True)
        os.makedirs(tmp_bin)
        gobuild.go_build(workdir, packages, tmp_bin + "/", log, ldflags=_ldflags_version(version, build_date))
        shutil.rmtree(bindir, ignore_errors=True)
        os.rename(tmp_bin, bindir)
    return bindir


def build_etcd(log, force=False):
    return gobuild.build_module("etcd", ETCD_VERSION, "go.etcd.io/etcd/server/v3", ["go.etcd.io/etcd/server/v3"],
                                ["etcd"], log, force)


def build_helm(log, force=False):
    ldflags = "-X helm.sh/helm/v3/internal/version.version=v" + HELM_VERSION
    return gobuild.build_module("helm", HELM_VERSION, "helm.sh/helm/v3", ["helm.sh/helm/v3/cmd/helm"], ["helm"], log,
                                force, ldflags=ldflags)


def build_all(version, force=False, quiet=False):
    """Build every lab binary for ``version``; returns {name: path}."""
    os.makedirs(paths.cache_root(), exist_ok=True)
    log_path = os.path.join(paths.cache_root(), "build.log")
    started = time.monotonic()
    with open(log_path, "a") as log:
        log.write("\n== %s build for Kubernetes %s\n" % (datetime.datetime.now().isoformat(), version))
        found = {}
        for label, step in (("etcd %s" % ETCD_VERSION, lambda: build_etcd(log, force)),
                            ("helm %s" % HELM_VERSION, lambda: build_helm(log, force)),
                            ("kubernetes %s" % version, lambda: build_kubernetes(version, log, force))):
            t0 = time.monotonic()
            if not quiet:
                print("lab: building %s (log: %s)" % (label, log_path), file=sys.stderr, flush=True)
            bindir = step()
            for entry in os.listdir(bindir):
                found[entry] = os.path.join(bindir, entry)
            if not quiet:
                print("lab:   %s ready in %.1fs" % (label, time.monotonic() - t0), file=sys.stderr, flush=True)
    if not quiet:
        print("lab: binaries ready in %.1fs" % (time.monotonic() - started), file=sys.stderr, flush=True)
    return found
