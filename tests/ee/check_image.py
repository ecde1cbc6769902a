"""Run in the execution environment's last build step: fail the build when the image lacks what dra.gpu's code needs.

ansible-builder installs what requirements.txt and bindep.txt name, and nothing tells it when
they name too little: the image builds, and the gap shows up only in a job, as a module's
"Failed to import the required Python library". This step reads the installed collection's
plugins instead of the requirement files, so an incomplete file fails the build, naming what is
missing, the file that needs it and the requirement file to fix:

  - every module outside the standard library and Ansible that a plugin imports, optional
    imports (try/except ImportError) included, must import in the image's Python;
  - every command a plugin looks up with get_bin_path("..."), and ssh (the connection the
    node groups use: cluster_upgrade), must be on PATH.

    python3 check_image.py COLLECTION_DIR     # .../ansible_collections/dra/gpu
"""

import ast
import importlib
import os
import re
import shutil
import sys

# ansible's ssh connection plugin runs the ssh client; bindep.txt's openssh-client(s) brings it.
CONNECTION_COMMANDS = {"ssh": "the ssh connection (cluster_upgrade's node groups)"}
# Where a missing command comes from, when not from a package bindep.txt names.
FIX = {"helm": "the definition's helm step (docs/execution-environment/execution-environment.yml: append_final)"}


def third_party_imports(plugins):
    """{top-level module: first plugin file importing it}."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    found = {}
    for directory, _dirs, files in sorted(os.walk(plugins)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            with open(path) as handle:
                tree = ast.parse(handle.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module]
                else:
                    continue
                for module in names:
                    top = module.split(".")[0]
                    if top not in stdlib and top not in ("ansible", "ansible_collections"):
                        found.setdefault(top, os.path.relpath(path, os.path.dirname(plugins)))
    return found


def commands(plugins):
    """{command: first plugin file looking it up}, plus the connection's."""
    found = dict(CONNECTION_COMMANDS)
    for directory, _dirs, files in sorted(os.walk(plugins)):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                with open(path) as handle:
                    for command in re.findall(r"get_bin_path\(\s*[\"']([\w.-]+)[\"']", handle.read()):
                        found.setdefault(command, os.path.relpath(path, os.path.dirname(plugins)))
    return found


def main(collection):
    plugins = os.path.join(collection, "plugins")
    if not os.path.isdir(plugins):
        print("check_image: %s has no plugins/ (is the collection installed there?)" % collection, file=sys.stderr)
        return 2
    problems = []
    imports = third_party_imports(plugins)
    for module, where in sorted(imports.items()):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            problems.append("Python module %r (imported by %s) does not import: %s; add its distribution to "
                            "requirements.txt" % (module, where, exc))
    needed = commands(plugins)
    for command, where in sorted(needed.items()):
        if shutil.which(command) is None:
            problems.append("command %r (needed by %s) is not on PATH (%s); add it with %s"
                            % (command, where, os.environ.get("PATH", ""),
                               FIX.get(command, "the package that has it in bindep.txt")))
    if problems:
        print("check_image: this execution environment cannot run dra.gpu:", file=sys.stderr)
        for problem in problems:
            print("  - " + problem, file=sys.stderr)
        return 1
    print("check_image: %d Python modules import (%s); %d commands found (%s)"
          % (len(imports), ", ".join(sorted(imports)), len(needed), ", ".join(sorted(needed))))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
