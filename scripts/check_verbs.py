#!/usr/bin/env python3
"""House rule: a verb is named once. Each verb's descriptor (lib/lite/<area>/verb.hpp, lite/core/verb.hpp) holds
its name; everything else reaches the verb through the descriptor. Checks, reading the sources (no build needed):
  - every descriptor is in the one list (lib/lite/verbs/verbs.cpp), and no two share a name;
  - every descriptor has its CLI setup registered once (`SetupRegistration registered{<area>::verb(), ...}` in an
    apps/lite/cmd_*.cpp) in a file the executable that runs it compiles (apps/CMakeLists.txt's
    lite_torch_free_commands for `lite` when it says !needs_torch; every other cmd_*.cpp goes to lite-torch), and a
    step runner (lib/lite/recipe/runner_steps.cpp) exactly when it has a recipe_step;
  - no C++ string literal in lib/ or apps/ equals a verb's name outside that verb's own folder (its reports and
    artifacts may say their own name), but for the few listed in ALLOWED with the reason.
The unit tests check the same tables at run time (tests/unit/recipe/test_verbs.cpp, test_step_runners.cpp) and
tests/cli/test_cli_basics.py runs `lite VERB --help` for every verb. Exit 1 with the problems listed, 0 otherwise."""
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
LIST = "lib/lite/verbs/verbs.cpp"
APPS_CMAKE = "apps/CMakeLists.txt"
RUNNERS = "lib/lite/recipe/runner_steps.cpp"

# (file, literal): why the verb's name is written there as text.
ALLOWED = {
    ("lib/lite/cache/cost_model.cpp", "profile"):
        "reads lite profile's JSON report; cache may include only core (layers), not profile's descriptor",
    ("lib/lite/distill/distill.cpp", "prune"):
        "the key of the prune stage's figures in distill's artifact: a file format, not to follow a rename",
    ("lib/lite/distill/report.cpp", "prune"):
        "the key of the prune stage's figures in distill's report: a file format, not to follow a rename",
}


def string_literals(text):
    """(line, value) of every string literal of C++ source `text`, comments and character literals skipped."""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif c == "R" and text.startswith('"', i + 1) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            close = text.find(")" + text[i + 2:open_paren] + '"', open_paren)
            close = n if close < 0 else close + len(text[i + 2:open_paren]) + 2
            yield line, text[open_paren + 1:close - len(text[i + 2:open_paren]) - 2]
            line += text.count("\n", i, close)
            i = close
        elif c == '"' or (c == "'" and not (i and text[i - 1].isalnum())):  # 1'000 is a number, not a char
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                yield line, text[i + 1:j]
            i = j + 1
        else:
            i += 1


def descriptors():
    """{area: (name, needs_torch, has_recipe_step)} from lib/lite/<area>/verb.hpp."""
    found = {}
    for path in sorted((REPO / "lib" / "lite").glob("*/verb.hpp")):
        if path.parent.name == "core":  # the descriptor type itself
            continue
        text = path.read_text()
        name = re.findall(r'\bv\.name = "([^"]+)";', text)
        torch = re.findall(r"\bv\.needs_torch = (true|false);", text)
        if len(name) != 1 or len(torch) != 1:
            sys.exit(f"check_verbs: {path.relative_to(REPO)}: expected one 'v.name = \"...\";' and one "
                     "'v.needs_torch = true|false;' (the form this check reads)")
        found[path.parent.name] = (name[0], torch[0] == "true", "recipe_step.emplace()" in text)
    return found


def registered(file):
    """The areas whose descriptor `file` registers (&<area>::verb())."""
    return re.findall(r"&(\w+)::verb\(\)", (REPO / file).read_text())


def setup_registrations():
    """{area: [apps/lite/cmd_*.cpp files registering its setup]}, and the torch-free command files."""
    found = {}
    for path in sorted((REPO / "apps" / "lite").glob("cmd_*.cpp")):
        for area in re.findall(r"SetupRegistration \w+\{(\w+)::verb\(\)", path.read_text()):
            found.setdefault(area, []).append(path.relative_to(REPO).as_posix())
    m = re.search(r"set\(lite_torch_free_commands([^)]*)\)", (REPO / APPS_CMAKE).read_text())
    if not m:
        sys.exit(f"check_verbs: {APPS_CMAKE}: no set(lite_torch_free_commands ...) (the form this check reads)")
    torch_free = {f"apps/{f}" for f in m.group(1).split()}
    return found, torch_free


def setup_problems(area, name, torch, registrations, torch_free):
    where = f"lib/lite/{area}/verb.hpp ('{name}')"
    files = registrations.get(area, [])
    if len(files) != 1:
        return [f"  {where}: its CLI setup is registered {len(files)} times ({', '.join(files) or 'nowhere'}); "
                f"register it once in apps/lite/cmd_*.cpp: const SetupRegistration registered{{{area}::verb(), ...}};"]
    if torch == (files[0] in torch_free):
        executable = "lite-torch (not in lite_torch_free_commands)" if torch else "lite (in lite_torch_free_commands)"
        return [f"  {where}: needs_torch is {str(torch).lower()}, so {files[0]} belongs in {executable}, "
                f"{APPS_CMAKE}"]
    return []


def table_problems(verbs):
    problems = []
    names = [name for name, _, _ in verbs.values()]
    for name in {n for n in names if names.count(n) > 1}:
        problems.append(f"  two descriptors are named '{name}'")
    listed = registered(LIST)
    registrations, torch_free = setup_registrations()
    runners = registered(RUNNERS)
    for area, (name, torch, step) in verbs.items():
        where = f"lib/lite/{area}/verb.hpp ('{name}')"
        if listed.count(area) != 1:
            problems.append(f"  {where}: listed {listed.count(area)} times in {LIST}; add &{area}::verb() once")
        problems += setup_problems(area, name, torch, registrations, torch_free)
        if runners.count(area) != (1 if step else 0):
            problems.append(f"  {where}: {'has' if step else 'has no'} recipe_step, so {RUNNERS} must hold "
                            f"{'one row' if step else 'no row'} for &{area}::verb()")
    return problems


def literal_problems(verbs):
    problems = []
    folder_of = {name: area for area, (name, _, _) in verbs.items()}
    for path in sorted([*(REPO / "lib").rglob("*"), *(REPO / "apps").rglob("*")]):
        if path.suffix not in (".cpp", ".hpp", ".in") or not path.is_file():
            continue
        rel = path.relative_to(REPO).as_posix()
        for line, value in string_literals(path.read_text()):
            area = folder_of.get(value)
            if area is None or rel.startswith(f"lib/lite/{area}/") or (rel, value) in ALLOWED:
                continue
            problems.append(f'  {rel}:{line}: "{value}" names a verb outside its folder lib/lite/{area}/; use '
                            f"{area}::verb().name (lite/{area}/verb.hpp)")
    return problems


def main():
    verbs = descriptors()
    problems = table_problems(verbs) + literal_problems(verbs)
    if problems:
        print("a verb must be named once, in its descriptor (docs/architecture.md, \"Adding a verb\"):")
        print("\n".join(problems))
        return 1
    print(f"check_verbs: {len(verbs)} verbs, each listed once, with its setup and step runner, and named nowhere "
          "else")
    return 0


if __name__ == "__main__":
    sys.exit(main())
