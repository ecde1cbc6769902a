"""What the guides name, and what the collection has: the two sides test_docs_agree.py compares.

A guide names things in backticks and links: a role variable (`gpu_operator_dra_nodes`), a module
or playbook by its full name (`dra.gpu.resource_slice_wait`, `dra.gpu.site`), a make target
(`make lab-up`), a file or folder of the repository (`playbooks/site.yml`, `roles/x/README.md`).
Each must exist. Placeholders (`<role>`, `{minor}`, `*`, `...`) are a pattern, not a name, and are
left out.
"""

import glob
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The repository's top-level folders and files a guide may name by path.
PATH_ROOTS = ("playbooks/", "roles/", "docs/", "plugins/", "tests/", "lab/", "molecule/", "tools/", "meta/",
              "changelogs/", ".ci/", "README.md", "Makefile", "galaxy.yml", "requirements.txt", "bindep.txt")
# What runs write (git ignores them): a page may say where to look for them.
GENERATED = ("tests/output", "tests/benchmarks/results")
PLACEHOLDER = re.compile(r"[<>{}*$]|\.\.\.|\[|\]")
CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def guides():
    """The Markdown pages users read: the README, docs/, each role's and the lab's README."""
    pages = ["README.md", "lab/README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    pages += sorted(glob.glob(os.path.join(ROOT, "roles", "*", "README.md")))
    return [os.path.relpath(os.path.join(ROOT, p), ROOT) for p in pages]


def prose(text):
    """The page without its fenced blocks (examples of output and files, not names the page gives)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(line)
    return "\n".join(kept)


def code_spans(text):
    return CODE.findall(prose(text))


def links(text):
    return [link for link in LINK.findall(prose(text)) if "://" not in link and not link.startswith(("#", "mailto:"))]


def roles():
    return sorted(os.listdir(os.path.join(ROOT, "roles")))


def role_names(role):
    """Every name a role's own files define or use: its options, registered results, facts."""
    words = set()
    for path in glob.glob(os.path.join(ROOT, "roles", role, "**", "*.yml"), recursive=True):
        with open(path) as handle:
            words.update(re.findall(r"\b%s_\w+" % role, handle.read()))
    for path in glob.glob(os.path.join(ROOT, "playbooks", "**", "*.yml"), recursive=True):
        with open(path) as handle:
            words.update(re.findall(r"\b%s_\w+" % role, handle.read()))
    # A page may name a logic file by its name alone (`gpu_operator_reading`).
    words.update(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "plugins", "**", "*.py"), recursive=True))
    return words


def make_targets():
    with open(os.path.join(ROOT, "Makefile")) as handle:
        return set(re.findall(r"^([a-z][a-z-]*):", handle.read(), re.M))


def full_names():
    """dra.gpu.<name> of every module, role, playbook, filter and test plugin, and the action group."""
    names = {"dra.gpu.k8s"}
    for folder in ("modules", "filter", "test"):
        for path in glob.glob(os.path.join(ROOT, "plugins", folder, "*.py")):
            names.add("dra.gpu." + os.path.basename(path)[:-3])
    for path in glob.glob(os.path.join(ROOT, "plugins", "filter", "*.py")) + glob.glob(
            os.path.join(ROOT, "plugins", "test", "*.py")):
        with open(path) as handle:
            names.update("dra.gpu." + n for n in re.findall(r"[\"'](\w+)[\"']\s*:", handle.read()))
    names.update("dra.gpu." + r for r in roles())
    names.update("dra.gpu." + os.path.basename(p)[:-4] for p in glob.glob(os.path.join(ROOT, "playbooks", "*.yml")))
    return names


def read(page):
    with open(os.path.join(ROOT, page)) as handle:
        return handle.read()


def problems(page, text=None):
    """What ``page`` (a path from the repository's root; its text, when not read from there) names
    that does not exist, one line each."""
    text = read(page) if text is None else text
    found = []
    known_roles = roles()
    names_of = {}
    targets = make_targets()
    full = full_names()
    for span in code_spans(text):
        for word in re.findall(r"\bdra\.gpu\.\w+", span):
            if word not in full:
                found.append("%s names %s: no module, role, playbook or plugin of that name" % (page, word))
        for target in re.findall(r"\bmake (?:-s )?([a-z][a-z-]*)", span):
            if target not in targets:
                found.append("%s names `make %s`: the Makefile has no such target" % (page, target))
        token = span.strip().split()[0] if span.strip() else ""
        for role in known_roles:
            if re.fullmatch(r"%s_\w+" % role, token) and not PLACEHOLDER.search(token):
                names = names_of.setdefault(role, role_names(role))
                if token not in names:
                    found.append("%s names `%s`: no variable of role %s has that name (roles/%s/meta/argument_specs.yml)"
                                 % (page, token, role, role))
        found += _path_problem(page, token, relative_to_root=True)
    for link in links(text):
        found += _path_problem(page, link.split("#", 1)[0], relative_to_root=False)
    return found


def _path_problem(page, path, relative_to_root):
    if not path or PLACEHOLDER.search(path):
        return []
    here = os.path.join(ROOT, os.path.dirname(page))
    if relative_to_root:
        # A path in backticks: from the page's folder (a role's README names its own tasks/), from
        # the root, or any role's file where a page speaks of roles in general (meta/argument_specs.yml).
        path = path.split("::", 1)[0].rstrip(",.:;)")
        if path.startswith(GENERATED):
            return []
        if not path.startswith(PATH_ROOTS + ("tasks/", "defaults/", "templates/", "files/")) or " " in path:
            return []
        targets = [os.path.join(here, path), os.path.join(ROOT, path)] + glob.glob(os.path.join(ROOT, "roles", "*", path))
    else:
        targets = [os.path.normpath(os.path.join(here, path))]
    if any(os.path.exists(target) for target in targets):
        return []
    return ["%s names %s: no such file or folder in the repository" % (page, path)]


def budget_figures(text):
    """The test budget's figures a page states: '50-minute budget', 'budget of 60 minutes'."""
    pattern = r"(\d+)[- ]minute (?:test )?budget|budget (?:of|is|:) (?:about )?\**(\d+) minutes"
    return [a or b for a, b in re.findall(pattern, text, re.I)]
