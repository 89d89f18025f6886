#!/usr/bin/env python3
"""rtid's mutation testing: does any test notice when the rule code changes?

    python3 mutation/mutate.py [--sample N] [--seed S] [PATH...]

PATH: files or folders under src/ (default src/rules src/proc). Each mutant
(one small change, see operators.py) is made in a scratch copy of the tree
(WORK/tree, never the checkout), built incrementally in its own build
directory, and run against the tests that execute the mutated function,
fastest first, up to the first that fails. The tests for a function come
from a per-test coverage map (WORK/covmap.json): a coverage build of the
copy (WORK/cov), each test run alone, the functions of src/ each one
executed. The map is kept; tests it lacks are mapped when needed, --remap
maps them all again.

Counted: killed (a test failed or timed out), survived (all passed, or no
test executes the function), equivalent (listed in mutation/equivalent.txt:
not run), stillborn (does not compile). Score: killed / (killed + survived).
The tests are the suites unit and cases without the timing tests (they
measure, they do not judge rules); the libfiu suite is not counted (see
mutation/README.md); --suite adds one.
"""

import argparse
import contextlib
import datetime
import fnmatch
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import operators  # noqa: E402
import runner  # noqa: E402

DEFAULT_PATHS = ["src/rules", "src/proc"]
DEFAULT_SUITES = ["unit", "cases"]
# Timing tests: they measure, they do not judge rules (and a loaded machine
# fails them without any mutant). Script tests that read the tree, not run it.
EXCLUDED = ["stress-walk", "sim-check-*", "sim-*", "sim", "case-list", "criu-plugin-model"]
# The script tests check the install, the kit, the docs and the tree's shape,
# not the rules (and take minutes together).
EXCLUDED_SUITES = ["script"]
# Tests outside the suites above that can kill a mutant of one folder only:
# the plugin runs inside CRIU, so its mutants also run the CRIU suite's
# plugin scenarios (seconds each, root and CRIU's build needed: elsewhere they
# skip, and a skip kills nothing). Other folders' mutants never run them.
PATH_TESTS = {"src/plugin/": ["criu-plugin-*", "criu-criu-to-plugin"]}


def log(msg):
    print(msg, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def source_files(root, paths):
    """The .c files under paths (relative to root), sorted."""
    out = []
    for p in paths:
        full = os.path.join(root, p)
        if os.path.isfile(full):
            out.append(os.path.relpath(full, root))
            continue
        for d, _, files in os.walk(full):
            out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".c")]
    return sorted(set(out))


def load_equivalents(path):
    """{mutant id: reason} from path: one mutant a line, "ID :: reason";
    "#" lines and blank lines are comments."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if " :: " not in line:
                raise SystemExit("%s:%d: no ' :: ' between the mutant and its reason" % (path, n))
            mid, reason = line.split(" :: ", 1)
            if not reason.strip():
                raise SystemExit("%s:%d: no reason" % (path, n))
            out[mid.strip()] = reason.strip()
    return out


def header_zeros(root):
    """The enumerators worth 0 declared in the headers of src/ and include/."""
    out = set()
    for top in ("src", "include"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(".h"):
                    with open(os.path.join(d, f)) as fh:
                        out |= operators.zero_enumerators(fh.read())
    return out


def all_mutants(root, files):
    out, zero = [], header_zeros(root)
    for f in files:
        with open(os.path.join(root, f)) as fh:
            out += operators.mutants(f, fh.read(), zero=zero)
    return out


def select(mutants, sample, seed, only=()):
    """The mutants to run: those named in only, else a seeded sample of
    sample of them (all when sample is 0), in name order. The same seed and
    the same mutants give the same selection."""
    ordered = sorted(mutants, key=lambda m: m.id)
    if only:
        want = set(only)
        return [m for m in ordered if m.id in want]
    if sample and sample < len(ordered):
        picked = set(random.Random(seed).sample(range(len(ordered)), sample))
        ordered = [m for i, m in enumerate(ordered) if i in picked]
    return ordered


def split_path(arg, sample):
    """PATH or PATH=N (N mutants from it, instead of sample): (path, n)."""
    path, eq, n = arg.partition("=")
    if not eq:
        return arg, sample
    if not n.isdigit():
        raise SystemExit("mutation: %s: the sample after '=' must be a number" % arg)
    return path, int(n)


def select_per_path(root, paths, mutants, sample, seed):
    """{path: its mutants chosen}: a sample of sample (or the N of PATH=N)
    drawn from each path's own mutants (select's rule), so that a big folder
    never crowds a small one out of the draw. A file under two paths counts
    for the first."""
    out, taken = {}, set()
    for arg in paths:
        p, n = split_path(arg, sample)
        files = set(source_files(root, [p])) - taken
        taken |= files
        out[p] = select([m for m in mutants if m.file in files], n, seed)
    return out


def sync_tree(root, tree):
    """Makes tree a copy of the checkout's files (tracked, and untracked not
    ignored), copying only what differs: ninja then rebuilds only that. A
    file is written with a fresh time, so that a copy restored over a
    mutant left by an interrupted run is rebuilt too. Returns how many
    files it wrote and a digest of the whole copy."""
    r = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"],
                       capture_output=True)
    if r.returncode == 0:
        listed = r.stdout.decode().split("\0")
    else:  # not a git checkout: everything but .git and the build folders
        listed = []
        for d, dirs, files in os.walk(root):
            if d == root:
                dirs[:] = [x for x in dirs if x != ".git" and not x.startswith("build")]
            listed += [os.path.relpath(os.path.join(d, f), root) for f in files]
    listed = [f for f in listed if f and os.path.isfile(os.path.join(root, f))
              and not os.path.islink(os.path.join(root, f))]
    want = set(listed)
    changed, digest = 0, hashlib.sha256()
    for f in sorted(listed):
        src, dst = os.path.join(root, f), os.path.join(tree, f)
        with open(src, "rb") as a:
            data = a.read()
        digest.update(f.encode() + b"\0" + hashlib.sha256(data).digest())
        try:
            with open(dst, "rb") as b:
                if b.read() == data:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as b:
            b.write(data)
        shutil.copymode(src, dst)
        changed += 1
    for d, dirs, files in os.walk(tree):
        rel = os.path.relpath(d, tree)
        if rel == "." and "build" in dirs:
            dirs.remove("build")
        for f in files:
            r = os.path.normpath(os.path.join(rel, f))
            if r not in want:
                os.unlink(os.path.join(d, f))
    return changed, digest.hexdigest()


def share_tools(root, work):
    """The checkout's ../shared (the CRIU source the plugin is built against,
    the CRIU build its scenarios run) also beside the scratch copy, where the
    build and the tests look for it: else the copy builds no plugin and the
    CRIU suite skips, and no plugin mutant meets a CRIU test."""
    shared, link = os.path.realpath(os.path.join(root, "..", "shared")), os.path.join(work, "shared")
    if os.path.isdir(shared) and not os.path.lexists(link):
        os.symlink(shared, link)


def setup_build(src, build, extra):
    if not os.path.exists(os.path.join(build, "build.ninja")):
        sh(["meson", "setup", build, src] + extra, stdout=subprocess.DEVNULL)
    r = subprocess.run(["ninja", "-C", build], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
        raise SystemExit("the build of the unmutated tree failed (%s)" % build)


def introspect(build):
    tests = json.loads(subprocess.run(["meson", "introspect", build, "--tests"], check=True,
                                      capture_output=True, text=True).stdout)
    targets = json.loads(subprocess.run(["meson", "introspect", build, "--targets"], check=True,
                                        capture_output=True, text=True).stdout)
    files = {t["id"]: [os.path.relpath(f, build) for f in t["filename"]] for t in targets}
    sources = {t["id"]: [f for ts in t.get("target_sources", []) for f in ts.get("sources", [])]
               for t in targets}
    for t in tests:
        t["outputs"] = sorted({f for d in t.get("depends", []) for f in files.get(d, [])})
        t["sources"] = sorted({f for d in t.get("depends", []) for f in sources.get(d, [])} |
                              {f for f in t["cmd"][1:] if os.path.isfile(f)})
    return tests


def fingerprint(test, tree):
    """What a test's coverage record depends on besides src/: its own
    programs' sources and files (a case file), and the shared test side
    (harness/, mocks/, fuse-proc/). A change there maps the test again."""
    h = hashlib.sha256()
    paths = [f for f in test["sources"] if not os.path.relpath(f, tree).startswith("src/")]
    for top in ("harness", "mocks", "fuse-proc"):
        for d, _, fs in os.walk(os.path.join(tree, top)):
            paths += [os.path.join(d, f) for f in fs]
    for f in sorted(set(paths)):
        try:
            with open(f, "rb") as fh:
                h.update(os.path.relpath(f, tree).encode() + b"\0" + fh.read())
        except OSError:
            pass
    return h.hexdigest()


def path_tests(files):
    """The name patterns of PATH_TESTS that the files (under src/) call for."""
    return sorted({pat for prefix, pats in PATH_TESTS.items()
                   for f in files if f.startswith(prefix) for pat in pats})


def only_for(name):
    """The folder prefix whose mutants alone may run test name (None: any)."""
    for prefix, pats in PATH_TESTS.items():
        if any(fnmatch.fnmatch(name, pat) for pat in pats):
            return prefix
    return None


def eligible(tests, suites, excluded, extra=()):
    """The tests of suites (less the excluded names and suites), and those
    named by the patterns of extra whatever their suite."""
    out = []
    for t in tests:
        names = {s.split(":")[-1] for s in t["suite"]}
        if any(fnmatch.fnmatch(t["name"], pat) for pat in excluded):
            continue
        wanted = any(fnmatch.fnmatch(t["name"], pat) for pat in extra)
        if not wanted and (not names & set(suites) or names & set(EXCLUDED_SUITES)):
            continue
        out.append(t)
    return out


def gcov_functions(build, root_of_sources):
    """{src file: [functions executed]} from the .gcda files in build."""
    gcdas = []
    for d, _, files in os.walk(build):
        gcdas += [os.path.join(d, f) for f in files if f.endswith(".gcda")]
    out = {}
    for i in range(0, len(gcdas), 64):
        r = subprocess.run(["gcov", "--json-format", "--stdout"] + gcdas[i:i + 64], cwd=build,
                           capture_output=True, text=True)
        for line in r.stdout.splitlines():
            line = line.strip()
            if not line.startswith("{"):
                continue
            doc = json.loads(line)
            for f in doc.get("files", []):
                path = os.path.relpath(os.path.normpath(os.path.join(build, f["file"])),
                                       root_of_sources)
                if not path.startswith("src/") or not path.endswith(".c"):
                    continue
                hit = {fn["name"] for fn in f.get("functions", []) if fn.get("execution_count")}
                if hit:
                    out.setdefault(path, set()).update(hit)
    return {k: sorted(v) for k, v in out.items()}


def build_map(work, tree, tests, covmap, names, tmpdir):
    """Runs each named test alone in the coverage build, recording what it
    executed into covmap (saved after each test)."""
    cov = os.path.join(work, "cov")
    setup_build(tree, cov, ["-Db_coverage=true", "--buildtype=debug"])
    by_name = {t["name"]: t for t in introspect(cov)}
    path = os.path.join(work, "covmap.json")
    for n, name in enumerate(names, 1):
        t = by_name.get(name)
        if not t:
            continue
        for d, _, files in os.walk(cov):
            for f in files:
                if f.endswith(".gcda"):
                    os.unlink(os.path.join(d, f))
        outcome, secs, _ = runner.run_test(t, tmpdir, (t.get("timeout") or 30) * 2,
                                           os.path.join(work, "map.log"), cwd=cov)
        covmap["tests"][name] = {"outcome": outcome, "seconds": round(secs, 2),
                                 "fingerprint": fingerprint(t, tree),
                                 "covers": gcov_functions(cov, tree)}
        log("map [%d/%d] %s: %s, %.1f s, %d files" % (n, len(names), name, outcome, secs,
                                                      len(covmap["tests"][name]["covers"])))
        with open(path + ".new", "w") as f:
            json.dump(covmap, f, indent=0, sort_keys=True)
        os.replace(path + ".new", path)


def tests_for(mutant, covmap, usable):
    """The names of the usable tests that executed the mutant's function. A
    function no test of the map executed may be new since the map was made
    (the map is made again for a changed test, not for changed src/): then
    those that executed any function of its file, so that a new function is
    never called a survivor for want of a test that ran it."""
    tests = {n: rec for n, rec in covmap["tests"].items()
             if n in usable and mutant.file.startswith(only_for(n) or "")}
    out = [n for n, rec in tests.items() if mutant.func in rec["covers"].get(mutant.file, ())]
    if not out:
        out = [n for n, rec in tests.items() if rec["covers"].get(mutant.file)]
    return out


def run_mutant(m, tree, build, tests, order, baseline, tmpdir, work, factor):
    """Makes mutant m in tree, builds what its tests need, runs them; returns
    its record. The file is always restored."""
    path = os.path.join(tree, m.file)
    with open(path) as f:
        orig = f.read()
    rec = {"id": m.id, "file": m.file, "function": m.func, "operator": m.op, "line": m.line}
    start = time.monotonic()
    try:
        with open(path, "w") as f:
            f.write(m.apply(orig))
        targets = sorted({o for n in order for o in tests[n]["outputs"]})
        r = subprocess.run(["ninja", "-C", build] + targets, capture_output=True, text=True)
        if r.returncode != 0:
            rec["status"] = "stillborn"
            rec["detail"] = (r.stdout + r.stderr)[-600:]
            return rec
        rec["status"] = "survived"
        rec["tests_run"] = []
        for n in order:
            t = tests[n]
            limit = min(max(10.0, factor * baseline[n] + 5), max(t.get("timeout") or 30, 10) * 2)
            outcome, secs, left = runner.run_test(t, tmpdir, limit,
                                                  os.path.join(work, "mutant.log"), cwd=build)
            rec["tests_run"].append(n)
            if left:
                rec.setdefault("cleaned", []).extend(left)
            if outcome in ("fail", "timeout"):
                rec["status"] = "killed"
                rec["killed_by"] = n
                rec["how"] = outcome
                break
        if not order:
            rec["detail"] = "no test executes this function"
        return rec
    finally:
        with open(path, "w") as f:
            f.write(orig)
        rec["seconds"] = round(time.monotonic() - start, 1)


def summarize(records):
    """The counts of each status and the score: killed of killed and
    survived, in percent (one decimal; 100 when none was judged)."""
    counts = {s: sum(1 for r in records if r["status"] == s)
              for s in ("killed", "survived", "equivalent", "stillborn")}
    judged = counts["killed"] + counts["survived"]
    return {"counts": counts,
            "score": round(100.0 * counts["killed"] / judged, 1) if judged else 100.0}


def main(argv=None):
    started = time.monotonic()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", default=DEFAULT_PATHS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample", type=int, default=0, help="mutants to draw (0: all)")
    ap.add_argument("--per-path", action="store_true",
                    help="draw --sample mutants from each PATH, not --sample from them all")
    ap.add_argument("--only", action="append", default=[], help="run this mutant id")
    ap.add_argument("--work", default=None, help="scratch folder (default build-mutation)")
    ap.add_argument("--json", default=None, help="the report (default WORK/report.json)")
    ap.add_argument("--equivalent", default=None, help="default mutation/equivalent.txt")
    ap.add_argument("--suite", action="append", default=[], help="count this suite too (fiu)")
    ap.add_argument("--remap", action="store_true", help="map every test's coverage again")
    ap.add_argument("--list", action="store_true", help="print the selected mutants, run nothing")
    ap.add_argument("--trust-map", action="store_true",
                    help="take the tests' unmutated outcome and time from the coverage map's "
                    "runs instead of running them again")
    ap.add_argument("--timeout-factor", type=float, default=4.0)
    ap.add_argument("--fail-on-survivor", action="store_true")
    ap.add_argument("--gate", action="append", default=[],
                    help="with --fail-on-survivor: only a survivor under this path fails "
                    "(repeatable; the others are reported)")
    ap.add_argument("--nice", type=int, default=10)
    a = ap.parse_args(argv)

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    work = os.path.abspath(a.work or os.path.join(root, "build-mutation"))
    equivalent_path = a.equivalent or os.path.join(root, "mutation", "equivalent.txt")
    equivalents = load_equivalents(equivalent_path)
    files = source_files(root, [split_path(p, 0)[0] for p in a.paths])
    mutants = all_mutants(root, files)
    groups = {}
    if a.per_path and not a.only:
        groups = select_per_path(root, a.paths, mutants, a.sample, a.seed)
        chosen = sorted((m for g in groups.values() for m in g), key=lambda m: m.id)
    else:
        chosen = select(mutants, a.sample, a.seed, a.only)
    if a.list:
        for m in chosen:
            print("%s%s" % (m.id, "   [equivalent]" if m.id in equivalents else ""))
        return 0
    if a.nice:
        os.nice(a.nice)
    os.makedirs(work, exist_ok=True)
    tree = os.path.join(work, "tree")
    with tests_tmpdir() as tmpdir:
        return run(a, root, work, tree, tmpdir, equivalents, files, mutants, chosen, started,
                   groups)


@contextlib.contextmanager
def tests_tmpdir():
    """The tests' TMPDIR: short (socket paths in it must fit), on /tmp and
    open as /tmp is, as in any other run of the suite. Gone at the end with
    whatever a test left in it, also when the run is ended by SIGTERM or
    SIGHUP (a CI job's end, a closed terminal): they end it as an exception
    does. SIGKILL cannot be caught."""
    def ended(signum, frame):
        raise SystemExit(128 + signum)

    # A signal ignored (nohup) stays ignored.
    caught = [s for s in (signal.SIGTERM, signal.SIGHUP)
              if signal.getsignal(s) is not signal.SIG_IGN]
    before = {s: signal.getsignal(s) for s in caught}
    tmpdir = None
    try:
        for s in caught:
            signal.signal(s, ended)
        tmpdir = tempfile.mkdtemp(prefix="rtid-mut-", dir="/tmp")
        os.chmod(tmpdir, 0o1777)  # as /tmp: tests run daemons as other users in it
        yield tmpdir
    finally:
        # A second signal must not cut the clean-up short.
        for s in caught:
            signal.signal(s, signal.SIG_IGN)
        if tmpdir:
            runner.clean_up(-1, "-", tmpdir)
            shutil.rmtree(tmpdir, ignore_errors=True)
        for s, h in before.items():
            signal.signal(s, h)


def run(a, root, work, tree, tmpdir, equivalents, files, mutants, chosen, started, groups):
    log("mutation: %d mutants in %d files, %d chosen (seed %d)" % (len(mutants), len(files),
                                                                   len(chosen), a.seed))
    changed, digest = sync_tree(root, tree)
    log("mutation: scratch copy %s (%d files updated)" % (tree, changed))
    share_tools(root, work)

    covmap_path = os.path.join(work, "covmap.json")
    covmap = {"tests": {}}
    if os.path.exists(covmap_path) and not a.remap:
        with open(covmap_path) as f:
            covmap = json.load(f)
    build = os.path.join(tree, "build")
    setup_build(tree, build, ["-Dwerror=false"])
    suites = DEFAULT_SUITES + a.suite
    listed = eligible(introspect(build), suites, EXCLUDED, path_tests(m.file for m in chosen))
    tests = {t["name"]: t for t in listed}
    if len(tests) != len(listed):
        # The map and the baseline are kept by name: two tests of one name
        # would share one entry, and one of them would never run.
        dup = sorted({t["name"] for t in listed if sum(u["name"] == t["name"] for u in listed) > 1})
        sys.exit("mutation: tests share a name (%s): give each its own" % ", ".join(dup))
    # Mapped again: a test that changed (its fingerprint), and one that
    # failed when mapped (it may not have run all it covers).
    missing = sorted(n for n, t in tests.items() if n not in covmap["tests"]
                     or covmap["tests"][n]["outcome"] not in ("pass", "skip")
                     or covmap["tests"][n].get("fingerprint") != fingerprint(t, tree))
    if missing:
        log("mutation: mapping the coverage of %d tests (each alone)" % len(missing))
        build_map(work, tree, tests.values(), covmap, missing, tmpdir)

    # The tests any chosen mutant needs, once on the unmutated build: their
    # time (fastest first; a timeout is a multiple of it) and whether they pass.
    to_run = [m for m in chosen if m.id not in equivalents]
    # Kept for the same copy (its digest): a second run of the same code
    # does not run them again.
    needed = sorted({n for m in to_run for n in tests_for(m, covmap, tests)})
    base_path = os.path.join(work, "baseline.json")
    cache = {}
    if os.path.exists(base_path):
        with open(base_path) as f:
            cache = json.load(f)
    if cache.get("digest") != digest:
        cache = {"digest": digest, "tests": {}}
    baseline, broken = {}, []
    for n in needed:
        if n in cache["tests"]:
            outcome, secs = cache["tests"][n]
        elif a.trust_map and n in covmap["tests"]:
            # The coverage build's run (slower: its timeouts are longer).
            outcome, secs = covmap["tests"][n]["outcome"], covmap["tests"][n]["seconds"]
        else:
            outcome, secs, _ = runner.run_test(tests[n], tmpdir,
                                               (tests[n].get("timeout") or 30) * 2,
                                               os.path.join(work, "baseline.log"), cwd=build)
            cache["tests"][n] = [outcome, round(secs, 2)]
            with open(base_path, "w") as f:
                json.dump(cache, f, indent=0)
        if outcome == "pass":
            baseline[n] = secs
        else:
            broken.append((n, outcome))
            log("mutation: test %s does not pass unmutated (%s): not used" % (n, outcome))
    log("mutation: %d tests used, %.0f s unmutated" % (len(baseline), sum(baseline.values())))

    records, t0 = [], time.monotonic()
    for i, m in enumerate(chosen, 1):
        if m.id in equivalents:
            rec = {"id": m.id, "file": m.file, "function": m.func, "operator": m.op,
                   "line": m.line, "status": "equivalent", "reason": equivalents[m.id]}
        else:
            order = sorted((n for n in tests_for(m, covmap, baseline)), key=lambda n: baseline[n])
            rec = run_mutant(m, tree, build, tests, order, baseline, tmpdir, work,
                             a.timeout_factor)
        records.append(rec)
        log("[%d/%d] %-10s %s%s" % (i, len(chosen), rec["status"], m.id,
                                    " (by %s)" % rec["killed_by"] if "killed_by" in rec else ""))
    # The tree's objects back to the unmutated sources for the next run.
    subprocess.run(["ninja", "-C", build], capture_output=True)

    summary = summarize(records)
    counts, score = summary["counts"], summary["score"]
    by_id = {r["id"]: r for r in records}
    per_path = {p: summarize([by_id[m.id] for m in g]) for p, g in groups.items()}
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
        "paths": a.paths, "files": files, "seed": a.seed, "sample": a.sample,
        "mutants_total": len(mutants), "chosen": len(chosen), "counts": counts,
        "score": score, "seconds": round(time.monotonic() - t0, 1),
        "total_seconds": round(time.monotonic() - started, 1),
        "per_path": per_path,
        "suites": suites, "excluded_tests": EXCLUDED, "excluded_suites": EXCLUDED_SUITES, "broken_tests": broken,
        "mutants": records,
    }
    json_path = a.json or os.path.join(work, "report.json")
    with open(json_path, "w") as f:
        json.dump(report, f, indent=1)
    log("")
    for r in records:
        if r["status"] == "survived":
            log("SURVIVED  %s  (line %d%s)" % (r["id"], r["line"],
                                              ", " + r["detail"] if "detail" in r else ""))
    for p, sp in per_path.items():
        c = sp["counts"]
        log("%s: %.1f %%: %d killed, %d survived, %d equivalent, %d stillborn" % (
            p, sp["score"], c["killed"], c["survived"], c["equivalent"], c["stillborn"]))
    log("mutation score %.1f %%: %d killed, %d survived, %d equivalent, %d stillborn "
        "(%d of %d mutants, seed %d; %.0f s, %.0f s in all); report %s" % (
            score, counts["killed"], counts["survived"], counts["equivalent"],
            counts["stillborn"], len(chosen), len(mutants), a.seed, report["seconds"],
            report["total_seconds"], json_path))
    gated = [r for r in records if r["status"] == "survived" and
             (not a.gate or any(r["file"].startswith(g.rstrip("/") + "/") or r["file"] == g
                                for g in a.gate))]
    if a.gate:
        log("gate (%s): %d survivor(s)" % (", ".join(a.gate), len(gated)))
    if a.fail_on_survivor and gated:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
