#!/usr/bin/env python3
"""Fails unless every C++ snippet in the documentation is a region of a compiled program.

    tools/check-guide.py [--root DIR]

Each ```cpp block of docs/guide.md and README.md must come right after (blank lines aside) a
marker naming where its text lives:

    <!-- guide:NAME from docs/guide/FILE.cpp -->

and FILE must hold that text between the lines `// [guide:NAME]` and `// [/guide:NAME]`. The two
must be identical once the common leading indentation of the region is removed (marker lines of
other regions inside it are left out). It also fails when a region in docs/guide/*.cpp (or in any
file a marker names) is used by no block, when a region is not closed or defined twice, and when
a block of docs/guide.md has no language: non-C++ blocks say what they are (```sh, ```cmake,
```python, ```text), so that no C++ slips past unchecked.

The programs themselves are built and run by docs/guide/CMakeLists.txt (ctest -L guide).
"""
import argparse
import difflib
import re
import sys
from pathlib import Path

# The Markdown files checked; in the strict ones every fenced block must name a language.
MARKDOWN = [("docs/guide.md", True), ("README.md", False)]
SOURCES_GLOB = "docs/guide/*.cpp"
CPP_LANGUAGES = {"cpp", "c++", "cxx"}

MARKER = re.compile(r"^<!--\s*guide:([A-Za-z0-9_.-]+)\s+from\s+(\S+)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
REGION = re.compile(r"^\s*//\s*\[(/?)guide:([A-Za-z0-9_.-]+)\]\s*$")


class Problems:
    def __init__(self):
        self.items = []

    def add(self, where, message):
        self.items.append(f"{where}: {message}")


def dedent(lines):
    """Removes the common leading whitespace of the non-blank lines; blank lines become empty."""
    lines = [line.rstrip("\n") for line in lines]
    widths = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
    cut = min(widths) if widths else 0
    return [line[cut:] if line.strip() else "" for line in lines]


def read_regions(path, rel, problems):
    """{name: (first line number, [lines])} for the regions of one source file."""
    regions, open_regions = {}, {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = REGION.match(line)
        if match:
            closing, name = match.group(1) == "/", match.group(2)
            if closing:
                if name not in open_regions:
                    problems.add(f"{rel}:{number}", f"[/guide:{name}] closes no open region")
                    continue
                start, body = open_regions.pop(name)
                if name in regions:
                    problems.add(f"{rel}:{start}", f"region '{name}' is defined twice")
                regions[name] = (start, dedent(body))
            else:
                if name in open_regions or name in regions:
                    problems.add(f"{rel}:{number}", f"region '{name}' is defined twice")
                open_regions[name] = (number, [])
            continue
        for _, body in open_regions.values():
            body.append(line)
    for name, (start, _) in open_regions.items():
        problems.add(f"{rel}:{start}", f"region '{name}' is never closed with // [/guide:{name}]")
    return regions


def read_blocks(path, rel, strict, problems):
    """[(line number, language, [lines], marker or None)] for the fenced blocks of a Markdown file.
    A marker is (name, file, its line number)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, marker, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        match = MARKER.match(line.strip())
        if match:
            if marker:
                problems.add(f"{rel}:{marker[2]}", "marker is followed by no ```cpp block")
            marker = (match.group(1), match.group(2), i + 1)
            i += 1
            continue
        fence = FENCE.match(line)
        if not fence:
            if line.strip() and marker:
                problems.add(f"{rel}:{marker[2]}", "marker is followed by no ```cpp block")
                marker = None
            i += 1
            continue
        indent, ticks, language = fence.group(1), fence.group(2), fence.group(3).lower()
        start, body, i = i + 1, [], i + 1
        while i < len(lines) and not (lines[i].strip().startswith(ticks)
                                      and lines[i].strip().strip(ticks[0]) == ""):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i == len(lines):
            problems.add(f"{rel}:{start}", "code block is never closed")
        i += 1
        if strict and not language:
            problems.add(f"{rel}:{start}", "code block names no language (```cpp, ```sh, "
                                            "```cmake, ```python, ```text, ...)")
        blocks.append((start, language, body, marker))
        marker = None
    if marker:
        problems.add(f"{rel}:{marker[2]}", "marker is followed by no ```cpp block")
    return blocks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=Path(__file__).resolve().parent.parent, type=Path,
                        help="the repository root (default: this script's checkout)")
    root = parser.parse_args().root.resolve()
    problems = Problems()

    # Regions of every guide program, and later of any other file a marker names.
    regions = {}  # relative path -> {name: (line, lines)}
    for path in sorted(root.glob(SOURCES_GLOB)):
        rel = path.relative_to(root).as_posix()
        regions[rel] = read_regions(path, rel, problems)
    used = set()
    checked = 0

    for md, strict in MARKDOWN:
        md_path = root / md
        if not md_path.exists():
            problems.add(md, "file not found")
            continue
        for start, language, body, marker in read_blocks(md_path, md, strict, problems):
            where = f"{md}:{start}"
            if language not in CPP_LANGUAGES:
                if marker:
                    problems.add(f"{md}:{marker[2]}", f"marker precedes a ```{language} block, "
                                                      "not a ```cpp one")
                continue
            if not marker:
                problems.add(where, "```cpp block without a <!-- guide:NAME from FILE --> marker "
                                    "on the line before it: every C++ snippet must be a region of "
                                    "a compiled program (see docs/guide/)")
                continue
            name, source, _ = marker
            if source not in regions:
                source_path = root / source
                if not source_path.is_file():
                    problems.add(where, f"the marker names {source}, which does not exist")
                    continue
                regions[source] = read_regions(source_path, source, problems)
            if name not in regions[source]:
                problems.add(where, f"{source} has no region // [guide:{name}]")
                continue
            used.add((source, name))
            region_line, expected = regions[source][name]
            got = dedent(body)
            checked += 1
            if got != expected:
                diff = difflib.unified_diff(expected, got, f"{source}:{region_line} [guide:{name}]",
                                            where, lineterm="")
                problems.add(where, f"the block differs from region '{name}' of {source}:\n"
                                    + "\n".join(diff))

    for source, named in sorted(regions.items()):
        for name, (line, _) in sorted(named.items()):
            if (source, name) not in used:
                problems.add(f"{source}:{line}", f"region '{name}' appears in no Markdown block; "
                                                 "show it or remove its markers")

    if problems.items:
        for item in problems.items:
            print(f"check-guide: {item}", file=sys.stderr)
        print(f"check-guide: {len(problems.items)} problem(s); the snippets are out of sync "
              "with their programs", file=sys.stderr)
        return 1
    print(f"check-guide: {checked} C++ blocks match their regions in "
          f"{len(regions)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
