"""The one way the lab compiles Go: every binary of both labs is built by ``go_build``.

The Kubernetes control plane, etcd and helm (labctl.apiserver.build), containerd, runc, the
CNI plugins, crictl and etcdctl (labctl.nodes.runtime) and the lab's own Go programs in
lab/go (labctl.nodes.lab) all come from ``go build -trimpath`` with stripped symbols, the
lab's Go environment (no toolchain download, no VCS stamping, cgo off unless asked for) and
the output appended to the build log. Modules published without binaries are built through
a generated wrapper module in the lab cache (``build_module``), one directory per version.
"""

import contextlib
import fcntl
import os
import shutil
import subprocess

from labctl import paths


class BuildError(RuntimeError):
    pass


def go_env(overrides=None):
    """The environment every go command of the lab runs in (the lab's unit tests use it too)."""
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
    proc = subprocess.run(cmd, cwd=cwd, env=go_env(env_overrides), stdout=log, stderr=subprocess.STDOUT,
                          check=False)
    if proc.returncode != 0:
        raise BuildError("`%s` failed in %s (exit %d); see %s" % (" ".join(cmd), cwd, proc.returncode, log.name))


def go_output(args, cwd):
    """The standard output of ``go ARGS`` (module queries, not builds)."""
    return subprocess.run(["go"] + args, cwd=cwd, env=go_env(), check=True,
                          capture_output=True, text=True).stdout


def go_build(cwd, packages, output, log, ldflags="", tags="", cgo=False):
    """``go build -trimpath`` of ``packages`` in module directory ``cwd``, symbols stripped.

    ``output``: a file for one package, or a directory ending in "/" for several. ``ldflags``
    are added to ``-s -w``; ``tags`` is go's -tags list; ``cgo`` links statically, so a binary
    copied onto a node needs none of the build host's C libraries.
    """
    ldflags = ("-s -w " + ldflags).strip()
    if cgo:
        ldflags += " -extldflags -static"
    cmd = ["go", "build", "-trimpath", "-o", output, "-ldflags", ldflags] + (["-tags", tags] if tags else [])
    run_go(cmd + list(packages), cwd, log, {"CGO_ENABLED": "1" if cgo else "0"})


def vendored_build(args, cwd, log_path):
    """``go build ARGS`` in a checkout of someone else's module (NVIDIA's, for make real-plugin),
    offline from its committed vendor/ directory, with cgo (NVML is a C library); output appended
    to ``log_path``. BuildError names the log."""
    with open(log_path, "a") as log:
        run_go(["go", "build"] + list(args), cwd, log,
               {"GOFLAGS": "-mod=vendor", "GOPROXY": "off", "GOTOOLCHAIN": "local", "CGO_ENABLED": "1"})


def write_if_changed(path, text):
    if os.path.exists(path):
        with open(path) as handle:
            if handle.read() == text:
                return
    with open(path, "w") as handle:
        handle.write(text)


def wrapper_gomod(module, requires, replaces=()):
    """go.mod of a wrapper module: ``requires`` [(module, version)], ``replaces`` [(module, version)]."""
    lines = ["module %s" % module, "", "go 1.25.0", "", "godebug default=go1.25", ""]
    lines += ["require %s %s" % r for r in requires]
    if replaces:
        lines += ["", "replace ("] + ["\t%s => %s %s" % (a, a, v) for a, v in replaces] + [")"]
    return "\n".join(lines) + "\n"


def _tools_go(imports):
    body = "\n".join('\t_ "%s"' % i for i in imports)
    return "//go:build tools\n\npackage tools\n\nimport (\n%s\n)\n" % body


def prepare_wrapper(workdir, gomod, packages, log):
    """Write the wrapper module that builds ``packages`` and tidy it (once per content)."""
    os.makedirs(workdir, exist_ok=True)
    stamp = os.path.join(workdir, ".tidy-stamp")
    fingerprint = gomod + _tools_go(packages)
    if os.path.exists(stamp):
        with open(stamp) as handle:
            if handle.read() == fingerprint:
                return
    write_if_changed(os.path.join(workdir, "go.mod"), gomod)
    write_if_changed(os.path.join(workdir, "tools.go"), _tools_go(packages))
    run_go(["go", "mod", "tidy"], workdir, log)
    with open(stamp, "w") as handle:
        handle.write(fingerprint)


def all_present(bindir, names):
    return all(os.access(os.path.join(bindir, n), os.X_OK) for n in names)


@contextlib.contextmanager
def build_lock(bindir, log):
    """Hold <bindir>.lock while building into ``bindir``: two builds of one version at once (two
    labs, or a test's lab beside a `lab.py build`) would remove each other's output. The one that
    waited finds the binaries there (check again with all_present) and builds nothing."""
    os.makedirs(os.path.dirname(bindir), exist_ok=True)
    with open(bindir + ".lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.write("# waiting for another build into %s\n" % bindir)
            log.flush()
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def build_module(name, version, module, packages, outputs, log, force=False, ldflags="", tags="", cgo=False):
    """Build ``packages`` of ``module`` at ``version`` into <cache>/<name>-v<version>/bin; return it.

    Skipped when every name in ``outputs`` is already there (unless ``force``). One package
    is written under ``outputs[0]``: go would name a package path ending in a major version
    (go.etcd.io/etcd/server/v3) after the element before it.
    """
    root = paths.tool_build_dir(name, version)
    bindir = os.path.join(root, "bin")
    if not force and all_present(bindir, outputs):
        return bindir
    with build_lock(bindir, log):
        if not force and all_present(bindir, outputs):
            return bindir
        workdir = os.path.join(root, "src")
        prepare_wrapper(workdir, wrapper_gomod("dragpu.lab/" + name, [(module, "v" + version)]), packages, log)
        tmp = bindir + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        output = os.path.join(tmp, outputs[0]) if len(packages) == 1 else tmp + "/"
        go_build(workdir, packages, output, log, ldflags=ldflags, tags=tags, cgo=cgo)
        shutil.rmtree(bindir, ignore_errors=True)
        os.rename(tmp, bindir)
    return bindir
