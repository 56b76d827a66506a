#!/usr/bin/env python3
"""Stage tests, text in and text out: each tests/lit/<stage>/NAME.in starts with a line

    # RUN: sparseflow opt --stage STAGE [OPTIONS]

and NAME.expected is what that command prints for the file. This runs them and shows a diff for
each that differs; `--regenerate` rewrites the .expected files instead (review the diff in git).

    run_lit.py SPARSEFLOW_BINARY [--stage STAGE] [--regenerate]
"""
import argparse
import difflib
import pathlib
import shlex
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def run_line(path):
    first = path.read_text().splitlines()[0] if path.stat().st_size else ""
    prefix = "# RUN: sparseflow "
    if not first.startswith(prefix):
        raise SystemExit(f"{path}:1: the first line must be '{prefix}opt --stage ...'")
    return shlex.split(first[len(prefix):])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--stage", help="only the tests of this stage (a folder name)")
    parser.add_argument("--regenerate", action="store_true")
    args = parser.parse_args()
    stages = [HERE / args.stage] if args.stage else sorted(p for p in HERE.iterdir() if p.is_dir())
    failed, count = [], 0
    for stage in stages:
        cases = sorted(stage.glob("*.in"))
        if not cases:
            raise SystemExit(f"{stage}: no .in files")
        for case in cases:
            count += 1
            # Run from tests/lit with the relative path, so that messages naming the file are the
            # same on every machine.
            command = [str(pathlib.Path(args.binary).resolve())] + run_line(case) + [
                str(case.relative_to(HERE))]
            result = subprocess.run(command, capture_output=True, text=True, cwd=HERE)
            got = result.stdout if result.returncode == 0 else "error: " + result.stderr
            expected_path = case.with_suffix(".expected")
            if args.regenerate:
                expected_path.write_text(got)
                continue
            want = expected_path.read_text() if expected_path.exists() else "(no .expected file)\n"
            if got != want:
                failed.append(case)
                sys.stdout.writelines(difflib.unified_diff(
                    want.splitlines(True), got.splitlines(True),
                    str(expected_path.relative_to(HERE)), "sparseflow " + shlex.join(command[1:])))
    if args.regenerate:
        print(f"regenerated {count} .expected files; review them with git diff")
        return 0
    print(f"{count - len(failed)} of {count} stage tests pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
