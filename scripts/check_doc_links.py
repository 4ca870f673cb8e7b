#!/usr/bin/env python3
"""House rule: every relative link in the documentation resolves. README.md links each verb's page under docs/,
the pages link back and to each other (`inputs.md#data-files`), and scripts/bench/README.md holds the figures
README summarizes; a renamed heading or a moved file would otherwise break them silently.
Checks README.md, docs/*.md, recipes/README.md and scripts/bench/README.md: each `](path)` and `](path#anchor)`
outside code blocks must name an existing file and, for an anchor, a heading of that file (GitHub's anchor rule).
Exit 1 with the broken links listed, 0 otherwise."""
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "recipes" / "README.md",
         REPO / "scripts" / "bench" / "README.md"]


def headings(text):
    fence = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"^#{1,6} (.*)$", line)):
            yield m.group(1).strip()


def anchor_of(heading):
    """GitHub's anchor: lower case, links and markup dropped, punctuation but '-' and '_' removed, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    seen, found = {}, set()
    for heading in headings(path.read_text()):
        a = anchor_of(heading)
        found.add(a if a not in seen else f"{a}-{seen[a]}")
        seen[a] = seen.get(a, 0) + 1
    return found


def broken_links(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            yield f"{page.relative_to(REPO)}: {target}: no such file"
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            yield f"{page.relative_to(REPO)}: {target}: no heading with anchor #{anchor} in {dest.relative_to(REPO)}"


def main():
    broken = [b for page in PAGES if page.exists() for b in broken_links(page)]
    if broken:
        print("broken links in the documentation:")
        print("\n".join(f"  {b}" for b in broken))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
