#!/usr/bin/env python3
"""ctest house/layers: the layer table of docs/architecture.md equals the layer graph of lib/CMakeLists.txt.

The graph is stated once, by the lite_area() lines of lib/CMakeLists.txt; the configure step writes it to
lite_layers.txt ("area (kind) -> dep dep: summary"). The page's table (the rows between the "<!-- layers -->" and
"<!-- /layers -->" markers) must hold the same rows in the same order. On a mismatch this prints the table to paste.
Usage: check_layers_doc.py BUILD/lite_layers.txt docs/architecture.md
"""
import re
import sys

LINE = re.compile(r"^([a-z_]+) \(([a-z-]+)\) -> ([a-z_ ]*): (.*)$")


def expected_rows(layers_path):
    rows = []
    with open(layers_path, encoding="utf-8") as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if not m:
                sys.exit(f"{layers_path}: unreadable line {line!r}")
            area, kind, deps, summary = m.groups()
            uses = ", ".join(f"`{d}`" for d in deps.split()) or "-"
            rows.append(f"| `{area}` | {kind} | {uses} | {summary} |")
    return rows


def page_rows(doc_path):
    text = open(doc_path, encoding="utf-8").read()
    m = re.search(r"<!-- layers -->\n(.*?)<!-- /layers -->", text, re.S)
    if not m:
        sys.exit(f"{doc_path}: no '<!-- layers -->' ... '<!-- /layers -->' block")
    lines = [l for l in m.group(1).splitlines() if l.startswith("| `")]
    return lines


def main():
    layers_path, doc_path = sys.argv[1], sys.argv[2]
    want, have = expected_rows(layers_path), page_rows(doc_path)
    if want == have:
        print(f"{len(want)} areas: {doc_path} matches lib/CMakeLists.txt")
        return 0
    print(f"{doc_path}: the layer table differs from lib/CMakeLists.txt's lite_area() lines; paste this table:")
    print("| area | kind | uses | what it holds |\n| --- | --- | --- | --- |")
    print("\n".join(want))
    return 1


if __name__ == "__main__":
    sys.exit(main())
