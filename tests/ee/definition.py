"""The execution-environment definition `make ee` builds: the example, with what this machine lacks stood in for.

docs/execution-environment/execution-environment.yml is what users build. This machine reaches
PyPI and Debian's mirror, but no container registry, no Galaxy and no get.helm.sh, so the
definition built here differs from it in exactly these places, and in nothing else (the
Python, ansible-core and ansible-runner pins, the requirement files read from the installed
collection, the final stage are the example's):

  - base image: a local Debian 12 image (tests/ee/base-image.sh) instead of UBI 9; its python3
    is 3.11 already, and its package manager apt-get (kept cache: `apt-get clean all` is an
    error, and ansible-builder runs `$PKGMGR clean all` unless told to keep it);
  - collections: dra.gpu from the tarball `ansible-galaxy collection build` makes
    (tests/collection/build-and-install.sh), as a release ships it, and kubernetes.core from the
    virtualenv's pinned `ansible` package, both copied into the build context instead of Galaxy;
  - helm: the lab's own build of helm (lab/: the same helm the lab's tests use) copied in,
    instead of the pinned release from get.helm.sh;
  - one step more at the end: tests/ee/check_image.py, which fails the build when
    requirements.txt or bindep.txt name too little for the collection's code.

    python definition.py EXAMPLE DEST BASE_IMAGE TARBALL_NAME KCORE_DIR_NAME HELM_FILE_NAME
"""

import copy
import sys

import yaml

# Where the galaxy stage sees additional_build_files (the context's _build/files).
FILES = "/build/files"
# Where ansible-galaxy puts the collections in the final image.
COLLECTIONS = "/usr/share/ansible/collections/ansible_collections"


def derive(example, base_image, tarball, kcore_dir, helm_file):
    """The example definition (a dict) with the stand-ins above; the example is not changed."""
    ee = copy.deepcopy(example)
    ee["images"]["base_image"]["name"] = base_image
    deps = ee["dependencies"]
    deps["python_interpreter"] = {"package_system": "python3", "python_path": "/usr/bin/python3"}
    deps["galaxy"] = {"collections": [
        {"name": "%s/dist/%s" % (FILES, tarball), "type": "file"},
        {"name": "%s/%s" % (FILES, kcore_dir), "type": "dir"},
    ]}
    ee.setdefault("options", {})["package_manager_path"] = "/usr/bin/apt-get"
    ee.setdefault("build_arg_defaults", {})["PKGMGR_PRESERVE_CACHE"] = "always"
    ee["additional_build_files"] = [{"src": "files", "dest": "files"}]
    steps = ee.setdefault("additional_build_steps", {})
    steps["append_final"] = [
        "COPY _build/files/%s /usr/local/bin/helm" % helm_file,
        "RUN chmod 0755 /usr/local/bin/helm && helm version --short",
        # The final stage has only what is copied into it; /output goes at its end.
        "COPY _build/files/check_image.py /output/check_image.py",
        "RUN $PYCMD /output/check_image.py %s/dra/gpu" % COLLECTIONS,
    ]
    return ee


def main(argv):
    if len(argv) != 7:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, dest, base_image, tarball, kcore_dir, helm_file = argv[1:]
    with open(src) as handle:
        example = yaml.safe_load(handle)
    with open(dest, "w") as handle:
        yaml.safe_dump(derive(example, base_image, tarball, kcore_dir, helm_file), handle, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
