#!/usr/bin/env python3
"""The layering check: a library includes only its own headers, the public ones
(include/sparseflow/), and those of the libraries it links (directly or through them).

Every library's headers live under src/<stage>/ and `src/` is on the include path of every
target (so "expr/expr.h" names the same file everywhere): this check is what keeps that from
meaning "any file may include any header". The dependency graph is read from the
target_link_libraries() calls of src/**/CMakeLists.txt; a header belongs to the libraries whose
sources share its directory (or a directory above it inside the same stage folder). The Python
module (python/src/) may include public headers and its own only.

Usage: check_layering.py PROJECT_ROOT. Exit 0 when clean; 1 with one line per violation:
  src/schedule/fuse.cpp:12: includes "lower/lower.h" (sf_lower), not linked by sf_schedule
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ADD_LIBRARY = re.compile(r"add_library\(\s*(sf_\w+)\s+STATIC\s+([^)]*)\)", re.S)
LINK = re.compile(r"target_link_libraries\(\s*(sf_\w+)\s+([^)]*)\)", re.S)


def read_libraries(root):
    """Library -> directories of its sources; library -> libraries it links."""
    dirs, links = {}, {}
    for cmake in sorted((root / "src").rglob("CMakeLists.txt")):
        text = re.sub(r"#[^\n]*", "", cmake.read_text())
        for name, body in ADD_LIBRARY.findall(text):
            sources = [w for w in body.split() if w.endswith((".cpp", ".c"))]
            dirs.setdefault(name, set()).update(
                (cmake.parent / s).parent.resolve() for s in sources)
        for name, body in LINK.findall(text):
            links.setdefault(name, set()).update(
                w for w in body.split() if w.startswith("sf_"))
    return dirs, links


def closure(links, name):
    seen, todo = set(), [name]
    while todo:
        lib = todo.pop()
        if lib in seen:
            continue
        seen.add(lib)
        todo.extend(links.get(lib, ()))
    return seen


def owners(header, dirs, src):
    """The libraries a header under src/ belongs to: those with sources in its directory, else
    in the nearest directory above it within its stage folder."""
    d = header.parent.resolve()
    while True:
        found = {lib for lib, ds in dirs.items() if d in ds}
        if found or d == src or d.parent == src.parent:
            return found
        d = d.parent


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    src = root / "src"
    dirs, links = read_libraries(root)
    if len(dirs) < 10:
        print(f"layering: only {len(dirs)} libraries found under {src}: the CMake parse broke")
        return 1
    problems = []
    checked = 0
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".h", ".c") or not path.is_file():
            continue
        mine = owners(path, dirs, src)
        if not mine:
            problems.append(f"{path.relative_to(root)}: belongs to no library (no sources beside it)")
            continue
        allowed = set().union(*(closure(links, lib) for lib in mine))
        for line_no, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            checked += 1
            target = src / m.group(1)
            if not target.exists():
                local = path.parent / m.group(1)
                if local.exists() or (root / "include" / m.group(1)).exists():
                    continue  # a sibling or a public header
                continue  # generated or system-like (hwy/...): not ours to check
            theirs = owners(target, dirs, src)
            if theirs & allowed:
                continue
            problems.append(
                f"{path.relative_to(root)}:{line_no}: includes \"{m.group(1)}\" "
                f"({', '.join(sorted(theirs)) or 'no library'}), not linked by "
                f"{', '.join(sorted(mine))}")
    for path in sorted((root / "python" / "src").glob("*")):
        if path.suffix not in (".cpp", ".h"):
            continue
        for line_no, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if m and (src / m.group(1)).exists() and not (path.parent / m.group(1)).exists():
                problems.append(
                    f"{path.relative_to(root)}:{line_no}: includes internal header "
                    f"\"{m.group(1)}\" (the Python module uses include/sparseflow/ only)")
    for p in problems:
        print(p)
    print(f"layering: {len(dirs)} libraries, {checked} includes checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
