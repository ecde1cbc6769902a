"""Compile the lab's control plane, etcd and helm from their official Go modules.

Kubernetes publishes no binaries through the registries these machines reach, but its
source is a Go module. k8s.io/kubernetes replaces its staging modules with local paths,
so ``go install ...@vX`` is refused; a generated wrapper module requires it and
replaces each staging module with the published ``v0.<minor>.<patch>`` instead.

Everything lands under the lab cache (outside the repository), one directory per
version, so switching ``LAB_K8S_VERSION`` back and forth costs nothing once built and
the Go build cache makes a rebuild take seconds.
"""

import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

from labctl import paths

ETCD_VERSION = "3.6.16"
HELM_VERSION = "3.22.0"

K8S_COMMANDS = ("kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubectl")
NODE_COMMANDS = ("kubeadm", "kubelet", "kubectl")

_STAGING_RE = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/src/")


class BuildError(RuntimeError):
    pass


def _go_env(overrides=None):
    env = dict(os.environ)
    env.setdefault("GOTOOLCHAIN", "local")
    env["CGO_ENABLED"] = "0"
    env.setdefault("GOFLAGS", "-buildvcs=false")
    env.update(overrides or {})
    return env


def run_go(cmd, cwd, log, env_overrides=None):
    """Run a go command, its output appended to the build log; BuildError names the log."""
    log.write("$ %s\n" % " ".join(cmd))
    log.flush()
    proc = subprocess.run(cmd, cwd=cwd, env=_go_env(env_overrides), stdout=log, stderr=subprocess.STDOUT,
                          check=False)
    if proc.returncode != 0:
        raise BuildError("`%s` failed in %s (exit %d); see %s" % (" ".join(cmd), cwd, proc.returncode, log.name))


def _go_output(args, cwd):
    return subprocess.run(["go"] + args, cwd=cwd, env=_go_env(), check=True,
                          capture_output=True, text=True).stdout


def _write_if_changed(path, text):
    if os.path.exists(path):
        with open(path) as handle:
            if handle.read() == text:
                return
    with open(path, "w") as handle:
        handle.write(text)


def normalise_k8s_version(version):
    version = version.strip().lstrip("v")
    if not re.fullmatch(r"1\.\d+\.\d+", version):
        raise BuildError("LAB_K8S_VERSION must look like 1.35.4 (got %r)" % version)
    return version


def staging_modules(version, workdir):
    """The staging modules k8s.io/kubernetes replaces with local paths, read from its go.mod."""
    info = json.loads(_go_output(["mod", "download", "-json", "k8s.io/kubernetes@v" + version], workdir))
    if info.get("Error"):
        raise BuildError("the Go module proxy does not serve k8s.io/kubernetes v%s: %s" % (version, info["Error"]))
    with open(info["GoMod"]) as handle:
        mods = sorted({m.group(1) for m in map(_STAGING_RE.match, handle) if m})
    with open(info["Info"]) as handle:
        published = json.load(handle).get("Time", "")
    return mods, published


def _wrapper_gomod(module, requires, replaces):
    lines = ["module %s" % module, "", "go 1.25.0", "", "godebug default=go1.25", ""]
    lines += ["require %s %s" % r for r in requires]
    if replaces:
        lines += ["", "replace ("] + ["\t%s => %s %s" % (a, a, v) for a, v in replaces] + [")"]
    return "\n".join(lines) + "\n"


def _tools_go(imports):
    body = "\n".join('\t_ "%s"' % i for i in imports)
    return "//go:build tools\n\npackage tools\n\nimport (\n%s\n)\n" % body


def _prepare_wrapper(workdir, gomod, imports, log):
    os.makedirs(workdir, exist_ok=True)
    gomod_path = os.path.join(workdir, "go.mod")
    stamp = os.path.join(workdir, ".tidy-stamp")
    fingerprint = gomod + _tools_go(imports)
    if os.path.exists(stamp) and open(stamp).read() == fingerprint:
        return
    _write_if_changed(gomod_path, gomod)
    _write_if_changed(os.path.join(workdir, "tools.go"), _tools_go(imports))
    run_go(["go", "mod", "tidy"], workdir, log)
    with open(stamp, "w") as handle:
        handle.write(fingerprint)


def _ldflags_version(version, build_date):
    major, minor = version.split(".")[:2]
    flags = []
    for pkg in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version"):
        for key, value in (("gitVersion", "v" + version), ("gitMajor", major), ("gitMinor", minor),
                           ("gitCommit", "v" + version + "-gomodule"), ("gitTreeState", "clean"),
                           ("buildDate", build_date)):
            flags.append("-X %s.%s=%s" % (pkg, key, value))
    return " ".join(flags)


def _all_present(bindir, names):
    return all(os.access(os.path.join(bindir, n), os.X_OK) for n in names)


def build_kubernetes(version, log, force=False):
    """The control plane the lab runs, and kubectl."""
    return _build_k8s_commands(version, K8S_COMMANDS, "bin", "src", log, force)


def build_kubernetes_node(version, log, force=False):
    """What a kubeadm node installs from packages: kubeadm, kubelet, kubectl (the node lab's mirror)."""
    return _build_k8s_commands(version, NODE_COMMANDS, "node-bin", "src-node", log, force)


def _build_k8s_commands(version, commands, bin_name, src_name, log, force):
    version = normalise_k8s_version(version)
    root = paths.k8s_build_dir(version)
    bindir = os.path.join(root, bin_name)
    if not force and _all_present(bindir, commands):
        return bindir
    workdir = os.path.join(root, src_name)
    os.makedirs(workdir, exist_ok=True)
    staging, published = staging_modules(version, workdir)
    minor_patch = "v0." + version.split(".", 1)[1]
    gomod = _wrapper_gomod("dragpu.lab/kubernetes", [("k8s.io/kubernetes", "v" + version)],
                           [(m, minor_patch) for m in staging])
    _prepare_wrapper(workdir, gomod, ["k8s.io/kubernetes/cmd/" + c for c in commands], log)
    # buildDate is the module's publication time, so a rebuild is byte-for-byte the
    # same command line and Go's cache answers it in seconds.
    build_date = published or "1970-01-01T00:00:00Z"
    ldflags = "-s -w " + _ldflags_version(version, build_date)
    tmp_bin = bindir + ".tmp"
    shutil.rmtree(tmp_bin, ignore_errors=True)
    os.makedirs(tmp_bin)
    run_go(["go", "build", "-trimpath", "-o", tmp_bin + "/", "-ldflags", ldflags]
           + ["k8s.io/kubernetes/cmd/" + c for c in commands], workdir, log)
    shutil.rmtree(bindir, ignore_errors=True)
    os.rename(tmp_bin, bindir)
    return bindir


def prepare_wrapper_module(workdir, module, requires, packages, log):
    """A module that requires ``requires`` and builds ``packages`` (for modules without replaces)."""
    _prepare_wrapper(workdir, _wrapper_gomod(module, requires, []), packages, log)


def _build_single(name, module, version, package, output, log, force, ldflags=""):
    root = paths.tool_build_dir(name, version)
    bindir = os.path.join(root, "bin")
    if not force and _all_present(bindir, [output]):
        return bindir
    workdir = os.path.join(root, "src")
    gomod = _wrapper_gomod("dragpu.lab/" + name, [(module, "v" + version)], [])
    _prepare_wrapper(workdir, gomod, [package], log)
    os.makedirs(bindir, exist_ok=True)
    cmd = ["go", "build", "-trimpath", "-o", os.path.join(bindir, output)]
    cmd += ["-ldflags", ("-s -w " + ldflags).strip()]
    run_go(cmd + [package], workdir, log)
    return bindir


def build_etcd(log, force=False):
    return _build_single("etcd", "go.etcd.io/etcd/server/v3", ETCD_VERSION,
                         "go.etcd.io/etcd/server/v3", "etcd", log, force)


def build_helm(log, force=False):
    ldflags = "-X helm.sh/helm/v3/internal/version.version=v" + HELM_VERSION
    return _build_single("helm", "helm.sh/helm/v3", HELM_VERSION, "helm.sh/helm/v3/cmd/helm",
                         "helm", log, force, ldflags)


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
