#!/usr/bin/env python3
"""The mutation tool's own test (make check, suite unit, under a second):
its operators, names that survive line moves, the same selection for the
same seed, the equivalents list against the mutants that exist, the JSON
report's fields, and a run's clean-up of what a killed test leaves.

    python3 tests/mutation/mutation-test.py SOURCE_ROOT
"""

import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stdout

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "mutation"))
import mutate  # noqa: E402
import operators  # noqa: E402
import runner  # noqa: E402

SAMPLE = """#include <stdio.h>
/* a comment with a < b && c */
static const int table[] = { 1, 2 };

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int f(int e, const char *s)
{
	char buf[64];

	if (e == -2 || e == -3)
		return -22;
	if (!s || s[0] == '<')
		return 0;
	g(buf, "x < y");
	(void)h(e);
	for (int i = 0; i < 4; i++)
		e++;
	return e + 1 > 0 ? true : false;
}
"""


def ids(text, path="src/x.c"):
    return [m.id for m in operators.mutants(path, text)]


class Operators(unittest.TestCase):
    def test_lexer_skips_comments_strings_preprocessor(self):
        texts = [t.text for t in operators.lex(SAMPLE)]
        self.assertNotIn("#include", " ".join(texts))
        self.assertIn('"x < y"', texts)
        self.assertNotIn("comment", texts)

    def test_functions(self):
        names = [n for n, _, _ in operators.functions(operators.lex(SAMPLE))]
        self.assertEqual(names, ["cmp", "f"])

    def test_each_operator(self):
        got = set(ids(SAMPLE))
        want = {
            "src/x.c:cmp: > -> >= #1", "src/x.c:cmp: < -> <= #1",
            "src/x.c:cmp: - -> + #1",                       # binary minus
            "src/x.c:f: || -> && #1", "src/x.c:f: == -> != #1", "src/x.c:f: == -> != #2",
            "src/x.c:f: 2 -> 3 #1",                         # a constant
            "src/x.c:f: -22 -> 0 #1",                       # a return value
            "src/x.c:f: ! -> '' #1",                           # a negation dropped
            "src/x.c:f: (!s || s[0] == '<') -> (!(!s || s[0] == '<')) #1",
            'src/x.c:f: g(buf, "x < y"); -> (void)0; #1',  # a call dropped
            "src/x.c:f: ++ -> -- #1", "src/x.c:f: true -> false #1",
            "src/x.c:f: 4 -> 5 #1", "src/x.c:f: 0 -> 1 #1",
        }
        self.assertEqual(want - got, set())
        # Never: a unary minus, an array size, a string, the file's
        # initialisers, a call under a cast, a single comparison negated,
        # "return 0" to 0.
        for bad in ("src/x.c:f: 64 -> 65 #1", "src/x.c:f: - -> + #1",
                    "src/x.c:f: h(e); -> (void)0; #1", "src/x.c:f: 0 -> 0 #1",
                    "src/x.c:f: (e == -2 || e == -3) -> (!(e == -2 || e == -3)) #2"):
            self.assertNotIn(bad, got)
        self.assertFalse([i for i in got if i.startswith("src/x.c:f: (e == -2)")])
        self.assertFalse([i for i in got if ":table" in i or "1 -> 0" in i and ":f:" not in i
                          and ":cmp:" not in i])

    def test_returning_a_zero_enumerator_is_returning_zero(self):
        text = ("enum e { A, B, C = 0 };\nenum e f(int x)\n{\n\tif (x)\n\t\treturn B;\n"
                "\tif (x > 1)\n\t\treturn C;\n\treturn A;\n}\n")
        got = ids(text)
        self.assertIn("src/x.c:f: B -> 0 #1", got)
        self.assertNotIn("src/x.c:f: A -> 0 #1", got)
        self.assertNotIn("src/x.c:f: C -> 0 #1", got)
        self.assertEqual(operators.zero_enumerators("enum { X = 1, Y };"), set())

    def test_apply_changes_only_that_text(self):
        m = [m for m in operators.mutants("src/x.c", SAMPLE) if m.id == "src/x.c:f: || -> && #1"][0]
        out = m.apply(SAMPLE)
        self.assertIn("if (e == -2 && e == -3)", out)
        self.assertEqual(len(out), len(SAMPLE))

    def test_names_survive_line_moves(self):
        moved = SAMPLE.replace("static int cmp", "/* one\n * more */\n\nstatic int cmp")
        moved = moved.replace("\tchar buf[64];\n", "\tchar buf[64];\n\n\n")
        self.assertEqual(ids(SAMPLE), ids(moved))
        a = {m.id: m.line for m in operators.mutants("src/x.c", SAMPLE)}
        b = {m.id: m.line for m in operators.mutants("src/x.c", moved)}
        self.assertNotEqual(a, b)  # the lines did move

    def test_occurrence_counts_within_function(self):
        text = "int f(int a)\n{\n\treturn a == 1 || a == 2;\n}\nint g(int a)\n{\n\treturn a == 1;\n}\n"
        got = ids(text)
        self.assertIn("src/x.c:f: == -> != #2", got)
        self.assertIn("src/x.c:g: == -> != #1", got)
        self.assertNotIn("src/x.c:g: == -> != #2", got)
        self.assertEqual(len(got), len(set(got)))

    def test_real_files_lex_and_names_are_unique(self):
        for f in mutate.source_files(ROOT, ["src/rules", "src/proc", "src/shim", "src/serve"]):
            with open(os.path.join(ROOT, f)) as fh:
                got = [m.id for m in operators.mutants(f, fh.read())]
            self.assertTrue(got, f)
            self.assertEqual(len(got), len(set(got)), f)


class Selection(unittest.TestCase):
    def setUp(self):
        self.all = mutate.all_mutants(ROOT, mutate.source_files(ROOT, ["src/rules", "src/proc"]))

    def test_same_seed_same_sample(self):
        a = [m.id for m in mutate.select(self.all, 30, 7)]
        b = [m.id for m in mutate.select(list(reversed(self.all)), 30, 7)]
        self.assertEqual(a, b)
        self.assertEqual(len(a), 30)
        self.assertNotEqual(a, [m.id for m in mutate.select(self.all, 30, 8)])
        self.assertEqual(len(mutate.select(self.all, 0, 7)), len(self.all))

    def test_per_path_draws_from_each_path(self):
        # One sample over src/rules and src/plugin together would be drawn
        # mostly from the bigger folder; per path, each gives its own N.
        paths = ["src/rules", "src/plugin"]
        every = mutate.all_mutants(ROOT, mutate.source_files(ROOT, paths))
        groups = mutate.select_per_path(ROOT, paths, every, 6, 4)
        self.assertEqual(list(groups), paths)
        for p, g in groups.items():
            self.assertEqual(len(g), 6, p)
            self.assertTrue(all(m.file.startswith(p + "/") for m in g), p)
        again = mutate.select_per_path(ROOT, paths, list(reversed(every)), 6, 4)
        self.assertEqual({p: [m.id for m in g] for p, g in groups.items()},
                         {p: [m.id for m in g] for p, g in again.items()})
        # PATH=N: N from that path, the sample from the others.
        sized = mutate.select_per_path(ROOT, ["src/rules=9", "src/plugin"], every, 6, 4)
        self.assertEqual({p: len(g) for p, g in sized.items()}, {"src/rules": 9, "src/plugin": 6})
        with self.assertRaises(SystemExit):
            mutate.split_path("src/rules=x", 6)
        # A file named twice counts for the first path only.
        dup = mutate.select_per_path(ROOT, ["src/rules", "src/rules/decide.c"], every, 0, 1)
        self.assertEqual(dup["src/rules/decide.c"], [])

    def test_only(self):
        one = self.all[3].id
        self.assertEqual([m.id for m in mutate.select(self.all, 5, 1, [one])], [one])

    def test_equivalents_name_existing_mutants(self):
        eq = mutate.load_equivalents(os.path.join(ROOT, "mutation", "equivalent.txt"))
        files = sorted({i.split(":", 1)[0] for i in eq})
        known = {m.id for m in mutate.all_mutants(ROOT, files)}
        self.assertEqual(sorted(set(eq) - known), [], "stale entries in mutation/equivalent.txt")
        for mid, reason in eq.items():
            self.assertGreater(len(reason), 15, mid)

    def test_equivalents_format(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# comment\n\nsrc/a.c:f: == -> != #1 :: the two are the same\n")
        self.assertEqual(mutate.load_equivalents(f.name),
                         {"src/a.c:f: == -> != #1": "the two are the same"})
        with open(f.name, "w") as g:
            g.write("src/a.c:f: == -> != #1\n")
        with self.assertRaises(SystemExit):
            mutate.load_equivalents(f.name)
        os.unlink(f.name)


def alive(pid):
    """Whether pid runs (a zombie does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Fingerprint(unittest.TestCase):
    def test_changes_with_the_test_not_with_src(self):
        with tempfile.TemporaryDirectory() as tree:
            for rel in ("src/a.c", "tests/t.c", "harness/h.c", "cases/c.case"):
                os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
                with open(os.path.join(tree, rel), "w") as f:
                    f.write("1")
            t = {"sources": [os.path.join(tree, "src/a.c"), os.path.join(tree, "tests/t.c"),
                             os.path.join(tree, "cases/c.case")]}
            fp = mutate.fingerprint(t, tree)
            with open(os.path.join(tree, "src/a.c"), "w") as f:
                f.write("2")
            self.assertEqual(mutate.fingerprint(t, tree), fp)
            for rel in ("tests/t.c", "harness/h.c", "cases/c.case"):
                with open(os.path.join(tree, rel), "w") as f:
                    f.write("3")
                self.assertNotEqual(mutate.fingerprint(t, tree), fp, rel)
                fp = mutate.fingerprint(t, tree)


class TestsFor(unittest.TestCase):
    def test_function_then_file(self):
        covmap = {"tests": {"a": {"covers": {"src/x.c": ["f"]}},
                            "b": {"covers": {"src/x.c": ["g"], "src/y.c": ["h"]}},
                            "c": {"covers": {"src/y.c": ["h"]}}}}
        import dataclasses
        m = operators.mutants("src/x.c", SAMPLE)[0]
        f = dataclasses.replace(m, func="f")
        self.assertEqual(mutate.tests_for(f, covmap, {"a", "b", "c"}), ["a"])
        self.assertEqual(mutate.tests_for(f, covmap, {"b", "c"}), ["b"])
        # A function no test ran (new since the map): every test of its file.
        new = dataclasses.replace(m, func="new")
        self.assertEqual(sorted(mutate.tests_for(new, covmap, {"a", "b", "c"})), ["a", "b"])
        self.assertEqual(mutate.tests_for(dataclasses.replace(new, file="src/z.c"), covmap,
                                          {"a", "b", "c"}), [])


class PathTests(unittest.TestCase):
    def test_plugin_mutants_run_the_criu_plugin_scenarios(self):
        self.assertEqual(mutate.path_tests(["src/rules/decide.c"]), [])
        pats = mutate.path_tests(["src/rules/decide.c", "src/plugin/plug-ops.c"])
        self.assertIn("criu-plugin-*", pats)
        tests = [{"name": "criu-plugin-serve", "suite": ["rtid:criu"]},
                 {"name": "criu-tree", "suite": ["rtid:criu"]},
                 {"name": "criu-plugin-model", "suite": ["rtid:criu"]},
                 {"name": "plugin", "suite": ["rtid:unit"]},
                 {"name": "kit", "suite": ["rtid:unit", "rtid:script"]}]
        got = [t["name"] for t in mutate.eligible(tests, ["unit", "cases"], mutate.EXCLUDED,
                                                   pats)]
        self.assertEqual(got, ["criu-plugin-serve", "plugin"])
        self.assertEqual([t["name"] for t in mutate.eligible(tests, ["unit"], mutate.EXCLUDED)],
                         ["plugin"])
        # The scenario covers src/rules too, but only a plugin mutant runs it.
        covmap = {"tests": {"criu-plugin-serve": {"covers": {"src/rules/decide.c": ["f"],
                                                             "src/plugin/plug-ops.c": ["g"]}},
                            "plugin": {"covers": {"src/rules/decide.c": ["f"]}}}}
        import dataclasses
        m = operators.mutants("src/x.c", SAMPLE)[0]
        rule = dataclasses.replace(m, file="src/rules/decide.c", func="f")
        plug = dataclasses.replace(m, file="src/plugin/plug-ops.c", func="g")
        usable = {"criu-plugin-serve", "plugin"}
        self.assertEqual(mutate.tests_for(rule, covmap, usable), ["plugin"])
        self.assertEqual(mutate.tests_for(plug, covmap, usable), ["criu-plugin-serve"])


class Runner(unittest.TestCase):
    def test_timeout_kills_the_group_and_escapees(self):
        with tempfile.TemporaryDirectory() as tmp:
            # A test that leaves a child in a session of its own and then hangs.
            script = ("setsid sleep 300 & echo $! > %s/child; "
                      "touch %s/stray; sleep 300" % (tmp, tmp))
            t = {"cmd": ["sh", "-c", script], "env": {}, "name": "hang"}
            work = os.path.join(tmp, "t")
            outcome, secs, left = runner.run_test(t, work, 1.0, os.path.join(tmp, "log"))
            self.assertEqual(outcome, "timeout")
            with open(os.path.join(tmp, "child")) as f:
                child = int(f.read())
            for _ in range(200):  # SIGKILL is asynchronous
                if not alive(child):
                    break
                time.sleep(0.01)
            self.assertFalse(alive(child))
            self.assertTrue(any(x.startswith("process") for x in left))
            self.assertEqual(os.listdir(work), [])

    def test_tests_tmpdir_gone_when_the_run_is_ended(self):
        # A run ended by SIGTERM (as a CI job's end does) leaves no TMPDIR.
        code = ("import sys; sys.path.insert(0, %r); import mutate\n"
                "with mutate.tests_tmpdir() as d:\n"
                "    open(d + '/left', 'w').close()\n"
                "    print(d, flush=True)\n"
                "    sys.stdin.read()\n" % os.path.join(ROOT, "mutation"))
        # Started with SIGHUP ignored (nohup): it stays ignored.
        p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
        d = p.stdout.readline().strip()
        self.assertTrue(os.path.isdir(d))
        p.send_signal(signal.SIGHUP)
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=30), 128 + signal.SIGTERM)
        p.stdin.close()
        p.stdout.close()
        self.assertFalse(os.path.exists(d))

    def test_outcomes(self):
        with tempfile.TemporaryDirectory() as tmp:
            for code, want in ((0, "pass"), (1, "fail"), (77, "skip")):
                t = {"cmd": ["sh", "-c", "test \"$TMPDIR\" = %s/w && exit %d" % (tmp, code)]}
                self.assertEqual(runner.run_test(t, os.path.join(tmp, "w"), 10,
                                                 os.path.join(tmp, "log"))[0], want)

    def test_signals_ignored_by_the_run_are_not_by_the_test(self):
        # A run started under nohup (SIGHUP ignored) or as a background job
        # (SIGINT, SIGQUIT): a test that gets one of them still dies of it.
        with tempfile.TemporaryDirectory() as tmp:
            for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
                old = signal.signal(sig, signal.SIG_IGN)
                try:
                    t = {"cmd": ["sh", "-c", "kill -%d $$; exit 0" % sig]}
                    got = runner.run_test(t, os.path.join(tmp, "w"), 10,
                                          os.path.join(tmp, "log"))[0]
                finally:
                    signal.signal(sig, old)
                self.assertEqual(got, "fail", signal.Signals(sig).name)

    def test_fuse_mounts_under(self):
        # Read from /proc/self/mounts: nothing of ours is mounted under a fresh dir.
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(runner.fuse_mounts_under(tmp), [])


class Report(unittest.TestCase):
    def test_list_prints_the_selection(self):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = mutate.main(["--list", "--sample", "5", "--seed", "3", "src/rules"])
        self.assertEqual(rc, 0)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 5)
        self.assertTrue(all(x.startswith("src/rules/decide.c:") for x in lines))

    def test_json_fields(self):
        recs = [{"status": s} for s in ("killed", "killed", "survived", "equivalent", "stillborn")]
        r = mutate.summarize(recs)
        self.assertEqual(r["counts"], {"killed": 2, "survived": 1, "equivalent": 1,
                                       "stillborn": 1})
        self.assertAlmostEqual(r["score"], 66.7)
        json.dumps(r)


if __name__ == "__main__":
    os.chdir(ROOT)
    unittest.main(verbosity=1)
