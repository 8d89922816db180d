#!/usr/bin/env python3
"""The mutants of tests/mutants.tsv in an existing build tree: a quicker measurement than `make mutate` where a
tree is built already (docs/testing.md). Each mutant is applied to the checkout itself, only the executables
its tests run (and the tree's libraries) are rebuilt (ninja, the tree's own settings), its tests are run, and the
file is put back.

usage: nice -n 10 tests/mutants_in_tree.py BUILD_DIR [--only SUBSTRING] [--jobs N] [--list FILE]
  (N: 1 by default; FILE: another list of the same form, tests/mutants.tsv by default)
Same list format, selection (the ctest regex, ignoring case) and verdicts as ../shared/tools/mutate: KILLED
when a selected test fails (or the mutant does not build: NOBUILD, counted apart), SURVIVED when all pass.
The checkout must not be edited while it runs (each mutant is written into it, then put back).
"""
import json, os, re, subprocess, sys, time


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    build = os.path.abspath(args[0])
    only = args[args.index("--only") + 1] if "--only" in args else None
    jobs = args[args.index("--jobs") + 1] if "--jobs" in args else "1"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    listing = json.loads(subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], capture_output=True,
                                        text=True, check=True).stdout)
    tests = []  # (number, name, outputs of this tree the test runs)
    for n, t in enumerate(listing["tests"], 1):
        words = list(t.get("command", []))
        for p in t.get("properties", []):
            if p["name"] == "ENVIRONMENT":
                words += [v.split("=", 1)[-1] for v in p["value"]]
        outs = {os.path.relpath(w, build) for w in words if w.startswith(build + "/") and os.path.isfile(w)}
        tests.append((n, t["name"], outs))
    # Every library of the tree is rebuilt too (only those the mutant touches change): a test may use one through
    # an install, a preload or a path compiled in (the function hooks, libkron_omp, libkron_mpi), which is not a
    # word of its command.
    listed = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"], capture_output=True, text=True).stdout
    libs = sorted({ln.split(":", 1)[0] for ln in listed.splitlines()
                   if re.search(r"\.(a|so)(\.[0-9.]+)?:", ln) and not ln.startswith("CMakeFiles")})
    killed = survived = nobuild = stale = 0
    t_start = time.time()
    path = args[args.index("--list") + 1] if "--list" in args else os.path.join(root, "tests/mutants.tsv")
    for ln, line in enumerate(open(path), 1):
        if not line.strip() or line.lstrip().startswith("#") or (only and only not in line):
            continue
        f = [x.replace("\\n", "\n") for x in line.rstrip("\n").split("\t")]
        file, old, new, regex, desc = f[:5]
        src = os.path.join(root, file)
        text = open(src, encoding="utf-8").read() if os.path.exists(src) else ""
        if text.count(old) != 1:
            stale += 1
            print(f"STALE     {ln} {file}: old text found {text.count(old)} times  {desc}", flush=True)
            continue
        chosen = [(n, outs) for n, name, outs in tests if re.search(regex, name, re.I)]
        targets = sorted(set().union(*[o for _, o in chosen]) | set(libs)) if chosen else []
        t0 = time.time()
        open(src, "w", encoding="utf-8").write(text.replace(old, new))
        try:
            if not chosen:
                survived += 1
                print(f"SURVIVED  {ln} {file}: no test matched '{regex}'  {desc}", flush=True)
                continue
            b = subprocess.run(["cmake", "--build", build, "-j", jobs, "--target", *targets], capture_output=True, text=True)
            if b.returncode:
                nobuild += 1
                print(f"NOBUILD   {ln} {file}  {desc}", flush=True)
                continue
            ids = ",".join(str(n) for n, _ in chosen)
            r = subprocess.run(["ctest", "--test-dir", build, "-I", f"0,0,0,{ids}", "-j", jobs, "--timeout", "300"],
                               capture_output=True, text=True)
            failed = re.findall(r"^\s*\d+ - (\S+) \(", r.stdout, re.M)
            if r.returncode:
                killed += 1
                print(f"KILLED    {ln} {file}  by {', '.join(failed[:3]) or 'ctest'}  {desc}  ({time.time() - t0:.0f} s)",
                      flush=True)
            else:
                survived += 1
                print(f"SURVIVED  {ln} {file}  ({len(chosen)} tests ran)  {desc}  ({time.time() - t0:.0f} s)", flush=True)
        finally:
            open(src, "w", encoding="utf-8").write(text)
    done = killed + survived
    print(f"{killed} killed, {survived} survived, {nobuild} did not build, {stale} stale; kill rate "
          f"{100.0 * killed / done:.0f}% of {done}; {time.time() - t_start:.0f} s" if done else "no mutant ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
