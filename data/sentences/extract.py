"""Regenerates the two sentence files in this folder from text that Debian 12 installs (see
PROVENANCE.md): python_docstrings.txt from the docstrings of Python 3.11's standard library,
perl_docs.txt from three documents that ship with Perl 5.36 (an article on software localization,
the IO::Compress FAQ and the Pod::Simple subclassing guide).

    python3 data/sentences/extract.py [--python /usr/lib/python3.11] [--perl /usr/share/perl/5.36.0]

Keeps prose sentences of 6 to 40 words (no code, no URLs, no doctest lines), deduplicated, in
source order, at most --limit (default 400) per file, spread evenly over what was found.
"""

import argparse
import ast
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
# Modules whose docstrings are mostly prose (not tables of options or grammar rules).
MODULES = ["argparse", "asyncio/events", "asyncio/tasks", "bisect", "calendar",
           "collections/__init__", "configparser", "contextlib", "copy", "csv", "dataclasses",
           "datetime", "decimal", "difflib", "email/message", "fractions", "ftplib", "functools",
           "getopt", "gettext", "glob", "heapq", "hmac", "imaplib", "inspect", "ipaddress",
           "json/__init__", "locale", "logging/__init__", "mailbox", "netrc", "numbers", "optparse",
           "pathlib", "pickle", "pprint", "queue", "random", "shelve", "shlex", "shutil", "smtplib",
           "socketserver", "statistics", "string", "subprocess", "tarfile", "tempfile", "textwrap",
           "threading", "timeit", "trace", "traceback", "typing", "unittest/case", "urllib/request",
           "uuid", "warnings", "weakref", "zipfile"]

PODS = ["Locale/Maketext/TPJ13.pod", "IO/Compress/FAQ.pod", "Pod/Simple/Subclassing.pod"]

# A sentence ends at . ! or ? (after a closing quote or parenthesis too), not after a lone capital
# (an initial such as "Sean M. Burke"), and the next starts with a capital, a quote or a
# parenthesis.
SPLIT = re.compile(r"(?<=[^A-Z][.!?])\s+(?=[A-Z\"(])|(?<=[.!?][\")])\s+(?=[A-Z\"(])")
BAD = re.compile(r"(>>>|\.\.\.|::|=|\(\)|[{}\[\]<>`*_\\|#@$~^]|https?:|www\.|\w\.\w+\()")


def prose_sentences(text):
    """The sentences of a block of prose: paragraphs joined, split after . ! ? before a capital."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in paragraph.splitlines()]
        if any(line.startswith((">>>", "-", "*", "+")) for line in lines):
            continue
        for sentence in SPLIT.split(" ".join(line for line in lines if line)):
            sentence = sentence.strip()
            words = sentence.split()
            core = sentence.strip('"()')
            if (6 <= len(words) <= 40 and core[:1].isupper() and core[-1:] in (".", "!", "?")
                    and not BAD.search(sentence) and sum(c.isalpha() for c in sentence)
                    > 0.75 * len(sentence.replace(" ", ""))):
                out.append(sentence)
    return out


def python_docstrings(root):
    found = []
    for name in MODULES:
        tree = ast.parse((root / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    found += prose_sentences(doc)
    return found


def pod_paragraphs(path):
    """The ordinary text paragraphs of a POD file (no commands, no verbatim blocks), with
    formatting codes such as C<...> or I<...> reduced to their text."""
    text = path.read_text(encoding="utf-8", errors="replace")
    keep = []
    for paragraph in re.split(r"\n\s*\n", text):
        if not paragraph.strip() or paragraph.startswith(("=", " ", "\t")):
            continue
        # Escapes first, as placeholders, so a < or > they stand for is not read as a code.
        escapes = {"lt": "\x01", "gt": "\x02", "64": "@", "sol": "/", "verbar": "|"}
        paragraph = re.sub(r"E<([^<>]*)>", lambda m: escapes.get(m.group(1), "<?>"), paragraph)
        for _ in range(3):
            paragraph = re.sub(r"[A-Z]<([^<>]*)>", r"\1", paragraph)
        paragraph = paragraph.replace("\x01", "<").replace("\x02", ">")
        keep.append(paragraph)
    return "\n\n".join(keep)


def spread(sentences, limit):
    unique = list(dict.fromkeys(sentences))
    if len(unique) <= limit:
        return unique
    return [unique[i * len(unique) // limit] for i in range(limit)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="/usr/lib/python3.11")
    parser.add_argument("--perl", default="/usr/share/perl/5.36.0")
    parser.add_argument("--limit", type=int, default=400)
    args = parser.parse_args()
    outputs = {"python_docstrings.txt": python_docstrings(pathlib.Path(args.python)),
               "perl_docs.txt": [s for pod in PODS for s in
                                 prose_sentences(pod_paragraphs(pathlib.Path(args.perl) / pod))]}
    for name, sentences in outputs.items():
        chosen = spread(sentences, args.limit)
        (HERE / name).write_text("".join(s + "\n" for s in chosen), encoding="utf-8")
        print(f"{name}: {len(chosen)} sentences (of {len(set(sentences))} found)")


if __name__ == "__main__":
    main()
