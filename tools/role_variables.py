"""Write each role's defaults/main.yml and its README's variable table from its
meta/argument_specs.yml, the one place a role variable's name, type, default and meaning are
written (issue 32). `make role-variables` runs it; tests/collection/test_role_variables.py
fails when a committed file differs from what this would write, so an edit made in a generated
file instead of argument_specs.yml is caught.

Usage: python tools/role_variables.py [--check] [ROLE...]   (default: every role under roles/)
--check writes nothing and exits 1 naming the files that differ.
"""

import argparse
import json
import os
import re
import sys
import textwrap

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
COMMAND = "make role-variables"
# The README's generated table sits between these two lines; what is around them is written by hand.
TABLE_START = "<!-- The table below is written from meta/argument_specs.yml by `%s`; change it there. -->" % COMMAND
TABLE_END = "<!-- End of the generated table. -->"
# A default longer than this is shown in the table as a link to defaults/main.yml.
TABLE_DEFAULT_WIDTH = 60
COMMENT_WIDTH = 100

# Ansible's documentation markup (O(), V(), C()...) as Markdown.
_MARKUP = (
    (re.compile(r"\bL\(([^)]*?),\s*([^)]*)\)"), r"[\1](\2)"),
    (re.compile(r"\bU\(([^)]*)\)"), r"<\1>"),
    (re.compile(r"\bI\(([^)]*)\)"), r"*\1*"),
    (re.compile(r"\bB\(([^)]*)\)"), r"**\1**"),
    (re.compile(r"\b(?:RV|O|V|C|M|E|P)\(([^)]*)\)"), r"`\1`"),
)


class SpecError(Exception):
    """A meta/argument_specs.yml this cannot write the other files from."""


def markdown(text):
    for pattern, replacement in _MARKUP:
        text = pattern.sub(replacement, text)
    return text


def description(option):
    """The option's description as one paragraph of Markdown, and the keys of its entries when
    it has suboptions (their own descriptions stay in argument_specs.yml and ansible-doc)."""
    found = option.get("description") or ""
    text = " ".join(markdown(" ".join(str(p).split())) for p in (found if isinstance(found, list) else [found]))
    keys = option.get("options") or {}
    if keys:
        text += " Keys: %s." % ", ".join(_key(name, spec) for name, spec in keys.items())
    return text


def _key(name, spec):
    notes = []
    if spec.get("required"):
        notes.append("required")
    if spec.get("choices"):
        notes.append(", ".join("`%s`" % _scalar(c) for c in spec["choices"]))
    return "`%s`%s" % (name, " (%s)" % "; ".join(notes) if notes else "")


def options(role):
    """{name: spec} over the role's entry points, main's first and in the order written; an
    option written in several entry points must be written the same in each."""
    path = os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")
    with open(path) as handle:
        entries = (yaml.safe_load(handle) or {}).get("argument_specs") or {}
    found = {}
    for entry in ["main"] + sorted(e for e in entries if e != "main"):
        for name, spec in ((entries.get(entry) or {}).get("options") or {}).items():
            if name in found and found[name] != spec:
                raise SpecError("%s: %s is written differently in the entry point %s than before; write it the "
                                "same in every entry point" % (path, name, entry))
            found[name] = spec
    return found


# --- YAML, written the way the rest of the collection writes it (block style, indented lists)

def _scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    plain = re.match(r"^[A-Za-z0-9_./-][A-Za-z0-9_./=:-]*$", text) and yaml.safe_load(text) == text
    return text if plain else json.dumps(text)


def _block(value, indent):
    """Lines of ``value`` as the value of a key at ``indent`` spaces (the first line is what follows the key)."""
    pad = " " * (indent + 2)
    if isinstance(value, dict) and value:
        lines = [""]
        for key, item in value.items():
            rest = _block(item, indent + 2)
            lines.append("%s%s:%s" % (pad, _scalar(key), (" " + rest[0]) if rest[0] else ""))
            lines.extend(rest[1:])
        return lines
    if isinstance(value, list) and value:
        lines = [""]
        for item in value:
            rest = _block(item, indent + 2)
            if isinstance(item, dict) and item:
                # "- key: value" then the item's other keys under the first.
                first = rest[1].lstrip()
                lines.append("%s- %s" % (pad, first))
                lines.extend(rest[2:])
            else:
                lines.append("%s- %s" % (pad, rest[0]))
                lines.extend(rest[1:])
        return lines
    if isinstance(value, dict):
        return ["{}"]
    if isinstance(value, list):
        return ["[]"]
    return [_scalar(value)]


def _flow(value):
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (_scalar(k), _flow(v)) for k, v in value.items())
    if isinstance(value, list):
        return "[%s]" % ", ".join(_flow(v) for v in value)
    return _scalar(value)


# --- the two generated files

def defaults_file(role):
    lines = ["---",
             "# Written from meta/argument_specs.yml by `%s`: change a default or its" % COMMAND,
             "# meaning there, not here. A variable without a default there is not set here."]
    for name, spec in options(role).items():
        if "default" not in spec:
            continue
        lines.append("")
        lines.extend(textwrap.wrap(description(spec), COMMENT_WIDTH - 2, initial_indent="# ", subsequent_indent="# ",
                                   break_on_hyphens=False))
        value = _block(spec["default"], 0)
        lines.append("%s:%s" % (name, (" " + value[0]) if value[0] else ""))
        lines.extend(value[1:])
    return "\n".join(lines) + "\n"


def _default_cell(spec):
    if "default" not in spec:
        return "required" if spec.get("required") else "unset"
    shown = _flow(spec["default"])
    if len(shown) > TABLE_DEFAULT_WIDTH:
        return "see [defaults/main.yml](defaults/main.yml)"
    return "`%s`" % shown


def variable_table(role):
    rows = ["| Variable | Default | Meaning |", "| --- | --- | --- |"]
    for name, spec in options(role).items():
        cells = (name, _default_cell(spec).replace("|", "\\|"), description(spec).replace("|", "\\|"))
        rows.append("| `%s` | %s | %s |" % cells)
    return "\n".join(rows)


def readme_file(role, readme):
    """``readme`` with its generated table written again; the README must hold the two marker lines."""
    start, end = readme.find(TABLE_START), readme.find(TABLE_END)
    if start < 0 or end < start:
        raise SpecError("roles/%s/README.md lacks the lines that mark its variable table; put\n%s\n%s\nwhere the "
                        "table goes" % (role, TABLE_START, TABLE_END))
    return readme[:start] + TABLE_START + "\n" + variable_table(role) + "\n" + readme[end:]


def generated(role):
    """{path relative to the repository: the text this writes}."""
    readme = os.path.join("roles", role, "README.md")
    with open(os.path.join(ROOT, readme)) as handle:
        current = handle.read()
    return {os.path.join("roles", role, "defaults", "main.yml"): defaults_file(role),
            readme: readme_file(role, current)}


def roles():
    return sorted(r for r in os.listdir(os.path.join(ROOT, "roles"))
                  if os.path.exists(os.path.join(ROOT, "roles", r, "meta", "argument_specs.yml")))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file differs")
    parser.add_argument("roles", nargs="*", help="roles to write (default: all)")
    args = parser.parse_args(argv)
    differ = []
    try:
        for role in args.roles or roles():
            for path, text in generated(role).items():
                full = os.path.join(ROOT, path)
                with open(full) as handle:
                    if handle.read() == text:
                        continue
                differ.append(path)
                if not args.check:
                    with open(full, "w") as handle:
                        handle.write(text)
    except SpecError as exc:
        print("role-variables: %s" % exc, file=sys.stderr)
        return 2
    if args.check and differ:
        print("role-variables: these differ from what meta/argument_specs.yml gives; run `%s`: %s"
              % (COMMAND, ", ".join(differ)), file=sys.stderr)
        return 1
    for path in differ:
        print("role-variables: wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
