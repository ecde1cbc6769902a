"""Where the lab keeps builds (shared across checkouts) and run state (per checkout)."""

import os

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def cache_root():
    """Compiled binaries live outside the repository so a fresh clone reuses them."""
    default = os.path.join(os.path.expanduser("~"), ".cache", "dra-gpu-lab")
    return os.environ.get("LAB_CACHE_DIR", default)


def k8s_build_dir(version):
    return os.path.join(cache_root(), "kubernetes-v" + version)


def tool_build_dir(name, version):
    return os.path.join(cache_root(), "%s-v%s" % (name, version))


def state_dir():
    """Run state (certificates, etcd data, logs, kubeconfig) of this checkout's lab."""
    return os.environ.get("LAB_STATE_DIR", os.path.join(REPO_ROOT, ".lab", "default"))


def under_state(*parts):
    """A property of a lab config (anything with ``state_dir``): the path ``parts`` below its state directory."""
    return property(lambda config: os.path.join(config.state_dir, *parts))
