#!/usr/bin/env python3
"""Docs as tests: every code block of README.md and docs/*.md is compiled and run.

What runs (tests/docs/README.md has the whole story):
  ```cpp / ```c++  compiled into build/tests/docs/doc_cpp_blocks (against the C++ libraries),
                   one function per block, and run in a fresh directory;
  ```c             compiled as C99 into doc_c_blocks against libsparseflow.so, run the same way;
  ```python        run with the project's .venv/bin/python;
  ```sh            run with bash -e: `build/bin/...` is the build's, bare `sparseflow*` commands
                   are found on PATH (the build's bin/ first), /tmp/... paths go to the block's
                   own temporary directory; $SPARSEFLOW_DOC_PYTHON is the project's Python.
Every block runs in its own temporary directory holding `data` (the bundled data) and `build`
(the build directory) as links, so paths written as in the docs work and nothing is written
outside it. Blocks in other languages (diagrams, grammars, plain ```) are text.

A block may carry one annotation, an HTML comment on the line before its fence:
  <!-- doc-test: skip (why) -->     not run; counted and listed in every run's summary
  <!-- doc-test: prelude NAME -->   a fragment: tests/docs/preludes/NAME.<ext> supplies what it
                                    assumes (variables, input files) and may check its results
A prelude file (NAME.cpp, NAME.c, NAME.py, or NAME.sh for shell blocks) holds the code run
before the block, then optionally a line `// doc-test: after` (`# doc-test: after`) and code
run after it; a line `// doc-test files: NAME=PATH ...` copies bundled files (PATH relative to
the repository) into the block's directory as NAME.

Commands:
  doc_blocks.py list --root ROOT [DOC...]                 every block and what happens to it
  doc_blocks.py generate --root ROOT --out DIR DOC...     the C++ and C sources of the blocks
  doc_blocks.py run --root ROOT --build BUILD --cpp EXE --c EXE --python PY DOC
                                                          run one document's blocks
  doc_blocks.py check-list --root ROOT DOC...             DOC... covers README.md and docs/*.md
  doc_blocks.py selftest                                  the harness on a made-up document
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

LANGUAGES = {"cpp": "cpp", "c++": "cpp", "c": "c", "python": "python", "py": "python",
             "sh": "sh", "bash": "sh"}
PRELUDE_EXTENSIONS = {"cpp": "cpp", "c": "c", "python": "py", "sh": "sh"}
ANNOTATION = re.compile(r"^<!--\s*doc-test:\s*(skip|prelude)\s*(.*?)\s*-->\s*$")

# Blocks that fail on this branch because another branch fixes them: each must fail here. When one
# passes (its fix was merged), this test fails until it is removed from the list.
# Known failing until merge (the Python blocks belong to the Python engineer's branch):
KNOWN_FAILING = {
}


class Block:
    def __init__(self, doc, language, index, line, text, annotation):
        self.doc = doc            # path relative to the repository, "README.md"
        self.language = language  # cpp, c, python, sh
        self.index = index        # 1-based among the document's blocks of this language
        self.line = line          # line of the first code line in the document
        self.text = text
        self.annotation = annotation  # ("skip", reason) or ("prelude", name) or None

    @property
    def id(self):
        return f"{self.doc}:{self.language}:{self.index}"

    @property
    def symbol(self):
        return "doc_block_" + re.sub(r"[^A-Za-z0-9]", "_", self.id)


def parse(root, doc):
    """The code blocks of one markdown document (text blocks are left out)."""
    lines = (root / doc).read_text().splitlines()
    blocks, counts, k = [], {}, 0
    while k < len(lines):
        fence = re.match(r"^```\s*([A-Za-z0-9+]*)\s*$", lines[k])
        if not fence:
            k += 1
            continue
        language = LANGUAGES.get(fence.group(1).lower())
        end = k + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end == len(lines):
            raise SystemExit(f"{doc}:{k + 1}: a code block that is never closed")
        if language:
            annotation = None
            above = k - 1
            if above >= 0 and not lines[above].strip():
                above -= 1  # one blank line may stand between the annotation and the fence
            if above >= 0:
                m = ANNOTATION.match(lines[above].strip())
                if m:
                    annotation = (m.group(1), m.group(2).strip("() "))
                elif "doc-test" in lines[above]:
                    raise SystemExit(f"{doc}:{above + 1}: unreadable annotation "
                                     "(<!-- doc-test: skip (why) --> or "
                                     "<!-- doc-test: prelude NAME -->)")
            counts[language] = counts.get(language, 0) + 1
            blocks.append(Block(doc, language, counts[language], k + 2,
                                "\n".join(lines[k + 1:end]), annotation))
        k = end + 1
    return blocks


class Prelude:
    """tests/docs/preludes/NAME.<ext>: code before the block, code after, files to copy."""

    def __init__(self, root, name, language):
        self.path = root / "tests/docs/preludes" / f"{name}.{PRELUDE_EXTENSIONS[language]}"
        if not self.path.exists():
            raise SystemExit(f"no prelude {self.path}")
        comment = "#" if language in ("python", "sh") else "//"
        self.before, self.after, self.files = [], [], {}
        part = self.before
        for number, line in enumerate(self.path.read_text().splitlines(), 1):
            if line.strip() == f"{comment} doc-test: after":
                part = self.after
                continue
            files = re.match(rf"^{re.escape(comment)} doc-test files:(.*)$", line)
            if files:
                for item in files.group(1).split():
                    name, source = item.split("=", 1)
                    self.files[name] = source
            part.append((number, line))


def prelude_of(root, block):
    if block.annotation and block.annotation[0] == "prelude":
        return Prelude(root, block.annotation[1], block.language)
    return None


def compiled_source(root, blocks, language):
    """One C++ (or C) file: each block a function, its #include lines hoisted, #line directives
    pointing compiler messages at the markdown (or the prelude)."""
    includes, functions, table = [], [], []
    c = language == "c"
    for block in blocks:
        if block.language != language or (block.annotation and block.annotation[0] == "skip"):
            continue
        prelude = prelude_of(root, block)
        body = []

        def emit(path, numbered):
            last = None
            for number, line in numbered:
                if line.lstrip().startswith("#include"):
                    includes.append(f'#line {number} "{path}"')
                    includes.append(line)
                    continue
                if last is None or number != last + 1:
                    body.append(f'#line {number} "{path}"')
                body.append(line)
                last = number

        if prelude:
            emit(prelude.path, prelude.before)
        emit(root / block.doc,
             [(block.line + k, line) for k, line in enumerate(block.text.splitlines())])
        if prelude:
            emit(prelude.path, prelude.after)
        signature = f"static int {block.symbol}(void)" if c else f"int {block.symbol}()"
        functions.append(signature + " {\n" + "\n".join(body) + "\n  return 0;\n}\n")
        table.append(f'  {{"{block.id}", {block.symbol}}},')
    out = ["/* Generated by tests/docs/doc_blocks.py from the documentation: do not edit. */"]
    if c:
        out += ["#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
                '#include "sparseflow/sparseflow.h"']
    else:
        out += ["#include <cstdio>", "#include <cstring>", "#include <exception>",
                "#include <iostream>", "#include <string>", "#include <vector>",
                '#include "docs/preludes/prelude_helpers.h"']
    out += includes
    out.append('#line 1 "generated"')
    if not c:
        out.append("namespace {")
    out += functions
    if not c:
        out.append("}  // namespace")
    out.append("struct DocBlock { const char* id; int (*run)(void); };")
    out.append("static const struct DocBlock kBlocks[] = {")
    out += table
    out.append('  {NULL, NULL}' if c else '  {nullptr, nullptr}')
    out.append("};")
    if c:
        out.append("""int main(int argc, char** argv) {
  for (const struct DocBlock* b = kBlocks; argc == 2 && b->id; ++b) {
    if (strcmp(b->id, argv[1]) == 0) return b->run();
  }
  fprintf(stderr, "usage: doc_c_blocks BLOCK-ID (a block of the docs)\\n");
  return 2;
}""")
    else:
        out.append("""int main(int argc, char** argv) {
  for (const DocBlock* b = kBlocks; argc == 2 && b->id; ++b) {
    if (std::strcmp(b->id, argv[1]) != 0) continue;
    try {
      return b->run();
    } catch (const std::exception& e) {
      std::cerr << b->id << ": " << e.what() << "\\n";
      return 1;
    }
  }
  std::cerr << "usage: doc_cpp_blocks BLOCK-ID (a block of the docs)\\n";
  return 2;
}""")
    return "\n".join(out) + "\n"


def stage(root, build, block, prelude, workdir):
    (workdir / "data").symlink_to(root / "data")
    (workdir / "build").symlink_to(build)
    if prelude:
        for name, source in prelude.files.items():
            shutil.copyfile(root / source, workdir / name)


def run_block(root, build, args, block, workdir):
    """Runs one block in `workdir`; returns (ok, output)."""
    prelude = prelude_of(root, block)
    stage(root, build, block, prelude, workdir)
    env = dict(os.environ)
    env["PATH"] = f"{build / 'bin'}:{env.get('PATH', '')}"
    env.setdefault("OMP_NUM_THREADS", "2")
    # The documented audit and benchmark commands run as written, timing each case once: the
    # test is that they work, not what they measure (tools/sparseflow/quick_timing.h).
    env["SPARSEFLOW_QUICK_TIMING"] = "1"
    env["TMPDIR"] = str(workdir)
    env["SPARSEFLOW_DOC_PYTHON"] = args.python  # the project's Python, for shell preludes
    if args.cache:
        env["SPARSEFLOW_CACHE_DIR"] = args.cache
    if block.language in ("cpp", "c"):
        command = [args.cpp if block.language == "cpp" else args.c, block.id]
    elif block.language == "python":
        script = []
        if prelude:
            script += [line for _, line in prelude.before]
        script.append(block.text)
        if prelude:
            script += [line for _, line in prelude.after]
        (workdir / "block.py").write_text("\n".join(script) + "\n")
        command = [args.python, "block.py"]
    else:
        text = block.text.replace("/tmp/", f"{workdir}/")
        script = ["set -e -o pipefail"]
        if prelude:
            script += [line for _, line in prelude.before]
        script.append(text)
        if prelude:
            script += [line for _, line in prelude.after]
        (workdir / "block.sh").write_text("\n".join(script) + "\n")
        command = ["bash", "block.sh"]
    try:
        done = subprocess.run(command, cwd=workdir, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired as e:
        return False, f"timed out after {args.timeout} s\n{e.output or ''}"
    except OSError as e:
        return False, f"cannot run {command[0]}: {e}"
    return done.returncode == 0, done.stdout


def command_list(root, docs):
    for doc in docs:
        for block in parse(root, doc):
            what = "run"
            if block.annotation:
                what = f"{block.annotation[0]}: {block.annotation[1]}"
            if block.id in KNOWN_FAILING:
                what += " [known failing until merge]"
            print(f"{block.id:32} line {block.line:4}  {what}")


def command_run(root, args):
    build = pathlib.Path(args.build).resolve()
    failed, skipped, known, passed = [], [], [], []
    seconds = {}
    for block in parse(root, args.doc):
        if block.annotation and block.annotation[0] == "skip":
            skipped.append(f"{block.id} (line {block.line}): {block.annotation[1]}")
            continue
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="doc-block-") as work:
            ok, output = run_block(root, build, args, block, pathlib.Path(work))
        seconds[block.id] = time.monotonic() - started
        if block.id in KNOWN_FAILING:
            if ok:
                failed.append(f"{block.id} (line {block.line}) passes but is listed in "
                              f"KNOWN_FAILING (tests/docs/doc_blocks.py): remove it there")
            else:
                known.append(f"{block.id} (line {block.line}): {KNOWN_FAILING[block.id]}")
            continue
        if ok:
            passed.append(block.id)
        else:
            tail = "\n".join(output.splitlines()[-40:])
            failed.append(f"{block.id} (line {block.line}) failed:\n{tail}")
    print(f"{args.doc}: {len(passed)} blocks ran, {len(skipped)} skipped, "
          f"{len(known)} known failing, {len(failed)} failed")
    # The slowest blocks, so that the test's time (make test's longest) can be kept in check.
    slowest = sorted(seconds.items(), key=lambda item: -item[1])[:5]
    print("  slowest: " + ", ".join(f"{name} {took:.1f} s" for name, took in slowest))
    for line in skipped:
        print(f"  skipped {line}")
    for line in known:
        print(f"  known failing {line}")
    for line in failed:
        print(f"  FAILED {line}")
    return 1 if failed else 0


def command_selftest():
    """The harness on a made-up document: a passing and a failing block, a skipped one, a known
    failing one that fails and one that passes; each outcome must be reported as it is."""
    doc = "\n".join([
        "```sh", "true", "```",
        "<!-- doc-test: skip (shows an error) -->", "```sh", "false", "```",
        "```python", "import sys; sys.exit(1)", "```",
        "```sh", "test -L data && test -L build && echo /tmp/x", "```",
        "```plain", "not code", "```"]) + "\n"
    checks = []
    with tempfile.TemporaryDirectory() as root_dir:
        root = pathlib.Path(root_dir)
        (root / "data").mkdir()
        (root / "doc.md").write_text(doc)
        blocks = parse(root, "doc.md")
        checks.append(([b.id for b in blocks] == ["doc.md:sh:1", "doc.md:sh:2", "doc.md:python:1",
                                                  "doc.md:sh:3"], "block ids"))
        checks.append((blocks[1].annotation == ("skip", "shows an error"), "skip annotation"))

        def run(known):
            KNOWN_FAILING.clear()
            KNOWN_FAILING.update(known)
            args = argparse.Namespace(doc="doc.md", build=str(root), cpp=None, c=None,
                                      python=sys.executable, cache=None, timeout=60)
            return command_run(root, args)

        saved = dict(KNOWN_FAILING)
        try:
            checks.append((run({}) == 1, "a failing block fails the run"))
            checks.append((run({"doc.md:python:1": "fixed elsewhere"}) == 0,
                           "a known failing block that fails passes the run"))
            checks.append((run({"doc.md:python:1": "x", "doc.md:sh:1": "y"}) == 1,
                           "a known failing block that passes fails the run"))
        finally:
            KNOWN_FAILING.clear()
            KNOWN_FAILING.update(saved)
    bad = [what for ok, what in checks if not ok]
    print("selftest: " + ("ok" if not bad else "FAILED: " + ", ".join(bad)))
    return 1 if bad else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["list", "generate", "run", "check-list", "selftest"])
    parser.add_argument("docs", nargs="*")
    parser.add_argument("--root", default=".")
    parser.add_argument("--out")
    parser.add_argument("--build")
    parser.add_argument("--cpp")
    parser.add_argument("--c")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--cache", help="SPARSEFLOW_CACHE_DIR for the blocks")
    parser.add_argument("--timeout", type=int, default=600)
    args = parser.parse_intermixed_args()
    root = pathlib.Path(args.root).resolve()
    docs = args.docs or ["README.md"] + sorted(
        str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
    if args.command == "selftest":
        return command_selftest()
    if args.command == "list":
        command_list(root, docs)
    elif args.command == "generate":
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        blocks = [b for doc in docs for b in parse(root, doc)]
        for name, language in (("doc_cpp_blocks.cpp", "cpp"), ("doc_c_blocks.c", "c")):
            text = compiled_source(root, blocks, language)
            path = out / name
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
    elif args.command == "check-list":
        expected = {"README.md"} | {str(p.relative_to(root)) for p in (root / "docs").glob("*.md")}
        missing = sorted(expected - set(docs))
        if missing:
            print("tests/docs/CMakeLists.txt does not list: " + ", ".join(missing))
            return 1
        unknown = [b for b in KNOWN_FAILING if b.split(":")[0] not in docs]
        if unknown:
            print("KNOWN_FAILING names blocks of no listed document: " + ", ".join(unknown))
            return 1
    else:
        if len(docs) != 1:
            parser.error("run takes one document")
        args.doc = docs[0]
        for name in ("cpp", "c", "python", "cache"):  # the blocks run in other directories
            if getattr(args, name):
                setattr(args, name, str(pathlib.Path(getattr(args, name)).absolute()))
        return command_run(root, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
