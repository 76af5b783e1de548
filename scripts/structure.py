#!/usr/bin/env python3
"""How the workspace's own crates stand: import cycles, imports up a floor, long functions.

  python3 scripts/structure.py [--edges] [--check]

Reads the production code of shared/*, functions and lambdas: every module reached from a
crate's roots (src/lib.rs, src/main.rs, src/bin/*.rs) through its `mod` declarations, without
what `#[cfg(test)]` or `#[test]` marks, tests/ or benches/. Comments and literals are blanked
first, so words in them count for nothing. Prints:

  1. Import cycles inside each crate: every strongly connected component of more than one
     module in the graph where a module points to each module its paths name (`crate::`,
     `super::`, `self::`, a child module's name, or a name a `use` brought in). A path is
     followed through re-exports (`pub use`) to the module that defines the item; a re-export
     the module's own code does not use counts as no import of its own. With --edges, each
     component's imports follow it, each with the first place it is made.
  2. In shared/core, imports that run up a floor: the floors are read from
     shared/core/tests/floors.rs (the table that test checks), and each top-level module's
     imports are compared with them.
  3. Production functions over 100 lines (from `fn` to its closing brace): the ten longest with
     file:line and length, and how many there are in each crate and in all.

With --check it exits with status 1 when any of the three is not none (the black-box suite's
`structure::` test runs it so).

Python 3 standard library only; it takes about a second.
"""

import bisect
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LONG = 100
SHOWN = 10
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def blank(text):
    """The text with comments, strings and character literals replaced by spaces (newlines
    kept), so that offsets and line numbers stay those of the file."""
    out = list(text)
    n = len(text)
    i = 0

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            wipe(i, j)
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = '"' + m.group(1)
            j = text.find(close, m.end())
            j = n if j < 0 else j + len(close)
            wipe(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            wipe(i, j + 1)
            i = j + 1
        elif c == "'":
            # A character literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 2)
                wipe(i, j + 1)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                wipe(i, i + 3)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def item_end(code, start):
    """Where the item starting at `start` ends: after its `;` or its closing brace."""
    depth = 0
    i = start
    n = len(code)
    while i < n:
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        elif c == "{" and depth == 0:
            return matching(code, i) + 1
        i += 1
    return n


def matching(code, at):
    """The offset of the brace closing the one at `at`."""
    depth = 0
    for i in range(at, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(code) - 1


TEST_ATTR = re.compile(r"#\s*\[\s*(?:cfg\s*\(\s*test\s*\)|test)\s*\]")
ATTR = re.compile(r"\s*#\s*\[")


def without_tests(code):
    """The code with every item under `#[cfg(test)]` or `#[test]` blanked."""
    out = list(code)
    pos = 0
    while m := TEST_ATTR.search(code, pos):
        i = m.end()
        # Skip the item's other attributes.
        while a := ATTR.match(code, i):
            depth, j = 0, a.end() - 1
            while j < len(code):
                depth += {"[": 1, "]": -1}.get(code[j], 0)
                j += 1
                if depth == 0:
                    break
            i = j
        end = item_end(code, i)
        for k in range(m.start(), end):
            if out[k] != "\n":
                out[k] = " "
        pos = end
    return "".join(out)


class Module:
    def __init__(self, path, file, code, offset):
        self.path = path  # ("books", "record"); () for a crate root
        self.file = file
        self.code = code  # this module's own code: child modules' bodies blanked
        self.offset = offset  # where `code` starts in the file's text
        self.children = {}  # name -> Module
        self.imports = {}  # name -> (segments, public, line)
        self.globs = []  # segments of `use ...::*`
        self.defined = set()
        self.uses = []  # (segments, line) of private imports and of paths in code
        self.parent = None


MOD_DECL = re.compile(r"\b(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*([;{])")
PATH_ATTR = re.compile(r'#\s*\[\s*path\s*=\s*"([^"]+)"\s*\]\s*$')


LINE_STARTS = {}


def line_of(text, offset):
    starts = LINE_STARTS.get(id(text))
    if starts is None or starts[0] is not text:
        starts = (text, [i for i, c in enumerate(text) if c == "\n"])
        LINE_STARTS[id(text)] = starts
    return bisect.bisect_left(starts[1], offset) + 1


class Crate:
    def __init__(self, name, directory):
        self.name = name
        self.dir = directory
        self.modules = {}  # (root file, path) -> Module
        self.files = []  # (file, production text) of every file reached

    def load(self, root_file):
        raw = root_file.read_text(encoding="utf-8")
        code = without_tests(blank(raw))
        self.files.append((root_file, code))
        root = self.parse(root_file, code, raw, 0, len(code), (), root_file.parent, True)
        return root

    def parse(self, file, code, raw, start, end, path, directory, owns_dir):
        """The module whose body is code[start:end]; `directory` is where its `mod x;` files
        are (a file `a.rs`'s children live in `a/`)."""
        body = code[start:end]
        own = list(body)
        children = []
        depth = 0
        i = 0
        while i < len(body):
            c = body[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif depth == 0 and c == "m" and (m := MOD_DECL.match(body, i)) and (i == 0 or not (body[i - 1].isalnum() or body[i - 1] == "_")):
                # A `mod` that a `pub(...)` precedes is matched from the `pub`; here from `mod`.
                name = m.group(1)
                if m.group(2) == "{":
                    close = matching(body, m.end() - 1)
                    children.append((name, "inline", m.end(), close))
                    for k in range(m.end(), close):
                        if own[k] != "\n":
                            own[k] = " "
                    i = close + 1
                    continue
                raw_before = raw[start: start + i]
                attr = None
                last = raw_before.rstrip().rsplit("\n", 1)[-1]
                if pa := PATH_ATTR.search(last):
                    attr = pa.group(1)
                children.append((name, "file", attr, None))
                i = m.end()
                continue
            i += 1
        module = Module(path, file, "".join(own), start)
        self.modules[(self.current_root, path)] = module
        for name, kind, a, b in children:
            if kind == "inline":
                child = self.parse(file, code, raw, start + a, start + b, path + (name,), directory / name, True)
            else:
                if a:
                    target = directory / a if owns_dir else file.parent / a
                else:
                    candidates = [directory / f"{name}.rs", directory / name / "mod.rs"]
                    target = next((p for p in candidates if p.exists()), None)
                if target is None or not target.exists():
                    print(f"warning: {file}: mod {name} not found", file=sys.stderr)
                    continue
                child_raw = target.read_text(encoding="utf-8")
                child_code = without_tests(blank(child_raw))
                self.files.append((target, child_code))
                child_dir = target.parent if target.name == "mod.rs" else target.parent / target.stem
                child = self.parse(target, child_code, child_raw, 0, len(child_code), path + (name,), child_dir, True)
            child.parent = module
            module.children[name] = child
        return module


USE = re.compile(r"\b(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]*);")
DEFINES = re.compile(r"\b(?:fn|struct|enum|trait|type|const|static|union)\s+(" + IDENT + r")|\bmacro_rules!\s*(" + IDENT + r")")
PATH = re.compile(r"(?<![\w:])(" + IDENT + r")((?:\s*::\s*(?:" + IDENT + r"))+)")
VISIBILITY_IN = re.compile(r"pub\s*\(\s*in\s+[^)]*\)")


def use_tree(text):
    """The leaves of a use tree: (segments, alias); the alias is None for `*`."""
    tokens = re.findall(r"::|\{|\}|,|\*|" + IDENT, text)
    pos = 0

    def tree(prefix):
        nonlocal pos
        leaves = []
        segs = list(prefix)
        while pos < len(tokens):
            t = tokens[pos]
            if t == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos] != "}":
                    if tokens[pos] == ",":
                        pos += 1
                        continue
                    leaves += tree(segs)
                pos += 1
                return leaves
            if t == "*":
                pos += 1
                return [(segs, None)]
            if t == "::":
                pos += 1
                continue
            if t in (",", "}"):
                break
            if t == "as":
                alias = tokens[pos + 1]
                pos += 2
                return [(segs, alias)]
            segs = segs + [t]
            pos += 1
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        return [(segs, segs[-1] if segs else None)] if segs else []

    return tree([])


def read_module(module):
    code = VISIBILITY_IN.sub(lambda m: " " * len(m.group(0)), module.code)
    file_text_offset = module.offset
    rest = list(code)
    for m in USE.finditer(code):
        public = m.group(1) is not None
        line = line_of(FILES[module.file], file_text_offset + m.start())
        for segs, alias in use_tree(m.group(2)):
            if segs and segs[0] == "":
                segs = segs[1:]
            if alias is None:
                module.globs.append(segs)
                module.uses.append((segs + ["*"], line))
            elif alias != "_":
                module.imports[alias] = (segs, public, line)
            else:
                module.uses.append((segs, line))
        for k in range(m.start(), m.end()):
            if rest[k] != "\n":
                rest[k] = " "
    body = "".join(rest)
    for m in DEFINES.finditer(body):
        module.defined.add(m.group(1) or m.group(2))
    for m in PATH.finditer(body):
        segs = [m.group(1)] + re.findall(IDENT, m.group(2))
        line = line_of(FILES[module.file], file_text_offset + m.start())
        module.uses.append((segs, line))
    for name, (segs, public, line) in module.imports.items():
        if not public or re.search(r"\b" + re.escape(name) + r"\b", body):
            module.uses.append((segs, line))


def resolve(module, segs, depth=0):
    """The module a path used in `module` leads to, or None when it leaves the crate."""
    found = locate(module, segs, depth)
    return found and found[0]


def locate(module, segs, depth):
    """(module, whether the path names that module itself) or None outside the crate."""
    if depth > 16 or not segs:
        return None
    first = segs[0]
    if first == "crate":
        cur = module
        while cur.parent:
            cur = cur.parent
        return walk(cur, segs[1:], depth)
    if first == "super":
        cur, rest = module, segs
        while rest and rest[0] == "super":
            cur = cur.parent or cur
            rest = rest[1:]
        return walk(cur, rest, depth)
    if first == "self":
        return walk(module, segs[1:], depth)
    if first in module.children or first in module.imports:
        return walk(module, segs, depth)
    return None


def walk(cur, rest, depth):
    while rest:
        s = rest[0]
        if s == "self":
            rest = rest[1:]
            continue
        if s == "*":
            return cur, True
        if s in cur.children:
            cur = cur.children[s]
            rest = rest[1:]
            continue
        if s in cur.imports:
            found = locate(cur, cur.imports[s][0], depth + 1)
            if found is None:
                return None
            if found[1]:
                cur = found[0]
                rest = rest[1:]
                continue
            return found[0], False
        if s in cur.defined:
            return cur, False
        for glob in cur.globs:
            source = resolve(cur, glob, depth + 1)
            if source is not None and source is not cur and (
                s in source.children or s in source.imports or s in source.defined
            ):
                return walk(source, rest, depth + 1)
        return cur, False
    return cur, True


def components(nodes, edges):
    """Tarjan's strongly connected components."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def floors():
    text = (ROOT / "shared/core/tests/floors.rs").read_text(encoding="utf-8")
    table = text[text.index("const FLOORS"):]
    table = table[: table.index("];") + 2]
    found = {}
    for number, m in enumerate(re.finditer(r'\(\s*"(\w+)",\s*(?://[^\n]*\s*)*&\[([^\]]*)\]', table)):
        for module in re.findall(r'"(\w+)"', m.group(2)):
            found[module] = (number, m.group(1))
    return found


def name(path):
    return "::".join(path) or "crate"


FILES = {}


def main():
    crates = []
    for directory in sorted((ROOT / "shared").iterdir()) + [ROOT / "functions", ROOT / "lambdas"]:
        src = directory / "src"
        if not (directory / "Cargo.toml").exists() or not src.is_dir():
            continue
        crate = Crate(str(directory.relative_to(ROOT)), directory)
        roots = [p for p in [src / "lib.rs", src / "main.rs"] if p.exists()]
        if (src / "bin").is_dir():
            roots += sorted(p for p in (src / "bin").glob("*.rs"))
            roots += sorted(p / "main.rs" for p in (src / "bin").iterdir() if (p / "main.rs").exists())
        crate.roots = []
        for root_file in roots:
            crate.current_root = root_file
            crate.roots.append(crate.load(root_file))
        crates.append(crate)
    for crate in crates:
        for file, _ in crate.files:
            FILES[file] = file.read_text(encoding="utf-8")

    rel = lambda f: str(f.relative_to(ROOT))
    print("== Import cycles between modules (strongly connected components of more than one)")
    cycles = 0
    core_edges = None
    for crate in crates:
        for module in crate.modules.values():
            read_module(module)
        edges = defaultdict(dict)  # module -> {target: (file, line)}
        for (root, path), module in crate.modules.items():
            for segs, line in module.uses:
                target = resolve(module, segs)
                if target is None or target is module:
                    continue
                edges[(root, path)].setdefault(target.path, (module.file, line))
        for root in crate.roots:
            key = root.file
            nodes = [p for (r, p) in crate.modules if r == key]
            graph = {p: set(edges[(key, p)]) for p in nodes}
            for comp in components(nodes, graph):
                if len(comp) < 2:
                    continue
                cycles += 1
                print(f"{crate.name} ({len(comp)} modules): {', '.join(name(p) for p in comp)}")
                for a in comp if "--edges" in sys.argv else ():
                    for b in sorted(graph[a]):
                        if b in comp:
                            f, line = edges[(key, a)][b]
                            print(f"    {name(a)} -> {name(b)}  ({rel(f)}:{line})")
            if crate.name == "shared/core" and root.file.name == "lib.rs":
                core_edges = edges, key
    print(f"{cycles} cycle(s)")

    print()
    print("== shared/core: imports up a floor (floors from shared/core/tests/floors.rs)")
    floor = floors()
    edges, key = core_edges
    upward = []
    unplaced = set()
    for (root, path), targets in edges.items():
        if root != key or not path:
            continue
        for target, (f, line) in targets.items():
            if not target or target[0] == path[0]:
                continue
            a, b = floor.get(path[0]), floor.get(target[0])
            for top, fl in ((path[0], a), (target[0], b)):
                if fl is None:
                    unplaced.add(top)
            if a and b and b[0] < a[0]:
                upward.append(f"{name(path)} ({a[1]}) -> {name(target)} ({b[1]})  ({rel(f)}:{line})")
    for line in sorted(upward):
        print(line)
    if unplaced:
        print(f"modules on no floor: {', '.join(sorted(unplaced))}")
    print(f"{len(upward)} upward import(s)")

    print()
    print(f"== Production functions over {LONG} lines")
    long = []
    counts = {}
    total_fns = 0
    for crate in crates:
        mine = 0
        seen = set()
        for file, code in crate.files:
            if file in seen:
                continue
            seen.add(file)
            for m in re.finditer(r"\bfn\s+(" + IDENT + r")", code):
                end = item_end(code, m.end())
                if code[end - 1] != "}":
                    continue
                total_fns += 1
                first = line_of(code, m.start())
                length = line_of(code, end - 1) - first + 1
                if length > LONG:
                    long.append((length, f"{rel(file)}:{first}", m.group(1)))
                    mine += 1
        counts[crate.name] = mine
    long.sort(key=lambda x: (-x[0], x[1]))
    for length, where, fn in long[:SHOWN]:
        print(f"{length:5}  {where}  {fn}")
    print("by crate: " + ", ".join(f"{c} {n}" for c, n in counts.items() if n))
    print(f"{len(long)} of {total_fns} functions over {LONG} lines, {sum(l for l, _, _ in long)} lines in all")
    return cycles + len(upward) + len(unplaced) + len(long)


if __name__ == "__main__":
    found = main()
    if "--check" in sys.argv and found:
        sys.exit(1)
