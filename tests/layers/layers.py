#!/usr/bin/env python3
"""The architecture, held: src/'s folders depend on each other one way only
(the graph in CONTRIBUTING.md, LAYERS below), by their includes and by their
calls, and no source file anywhere in the tree is in a circle of calls.

Includes are read from the sources; calls from the built objects (nm: the
symbols each object needs and the ones it defines), so a call through a
declaration written by hand is caught too. Also held: the sizes the layout
promises (no source in src/ above 400 lines, no folder above 12 files).

Usage: layers.py SOURCE_DIR BUILD_DIR
"""
import collections
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

# What each folder of src/ may use, besides itself and the public rtid.h.
LAYERS = {
    'basic': set(),
    'rules': set(),
    'conf': set(),
    'proc': {'basic', 'rules'},
    'proto': {'basic', 'rules'},
    'driver': {'basic', 'rules', 'proto'},
    'attest': {'basic', 'rules'},
    'core': {'basic', 'rules', 'proc', 'proto', 'driver', 'attest'},
    'serve': {'basic', 'rules', 'proc', 'proto'},
    'worker': {'basic', 'proto'},
    'cli': {'basic', 'rules', 'conf', 'proc', 'proto', 'driver', 'attest', 'core', 'serve'},
    'shim': {'basic', 'rules', 'conf', 'proc', 'proto', 'driver', 'attest', 'core', 'cli'},
    'main': {'cli', 'shim', 'conf'},
    'plugin': {'basic', 'rules', 'conf', 'proto'},
}
# Headers that name no folder: the public API and the generated one.
PLAIN = {'rtid.h', 'config.h'}
MAX_LINES = 400
MAX_FILES = 12
# Objects not part of the tree's graph: a second build of the library (the
# failure points of libfiu), the fuzz harnesses, and the plugin's unit tests
# (test-plugin, test-plugin-hooks, and test-serve-life, which asks as the
# plugin too: they stand in for CRIU's side, plug-criu.c, under the same
# names, so their calls would read as a circle).
SKIP_TARGETS = ('librtid-fiu.a.p', 'fuzz-', 'test-plugin', 'test-serve-life')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(rel):
    """src/<folder>/x.c -> folder; src/main.c -> main; else None."""
    parts = rel.split('/')
    if parts[0] != 'src':
        return None
    return parts[1] if len(parts) > 2 else 'main'


def check_includes(src, problems):
    for top, _, files in os.walk(os.path.join(src, 'src')):
        for f in sorted(files):
            if not f.endswith(('.c', '.h')):
                continue
            path = os.path.join(top, f)
            rel = os.path.relpath(path, src)
            here = folder_of(rel)
            with open(path, encoding='utf-8') as fh:
                for no, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if inc in PLAIN:
                        continue
                    if '/' not in inc:
                        problems.append('%s:%d: #include "%s" does not name its folder' % (rel, no, inc))
                        continue
                    there = inc.split('/')[0]
                    if there not in LAYERS or there == 'main':
                        problems.append('%s:%d: #include "%s": no folder %s in src/' % (rel, no, inc, there))
                    elif there != here and there not in LAYERS[here]:
                        problems.append('%s:%d: #include "%s": %s may not use %s (upward or sideways)'
                                        % (rel, no, inc, here, there))


def check_sizes(src, problems):
    for top, dirs, files in os.walk(os.path.join(src, 'src')):
        rel = os.path.relpath(top, src)
        if rel != 'src' and len(files) > MAX_FILES:
            problems.append('%s/ holds %d files (at most %d)' % (rel, len(files), MAX_FILES))
        for f in files:
            if f.endswith(('.c', '.h')):
                with open(os.path.join(top, f), encoding='utf-8') as fh:
                    n = sum(1 for _ in fh)
                if n > MAX_LINES:
                    problems.append('%s/%s: %d lines (at most %d)' % (rel, f, n, MAX_LINES))


def objects(src, build):
    """(source path relative to the tree, object path) for each object of the
    build as configured now (compile_commands.json: no stale object counts)."""
    with open(os.path.join(build, 'compile_commands.json'), encoding='utf-8') as fh:
        commands = json.load(fh)
    top = os.path.realpath(src)
    for c in commands:
        out = c['output']
        if any(s in out for s in SKIP_TARGETS):
            continue
        path = os.path.realpath(os.path.join(c['directory'], c['file']))
        obj = os.path.join(c['directory'], out)
        if os.path.exists(obj) and path.startswith(top + os.sep):
            yield os.path.relpath(path, top), obj


def libc_symbols():
    """The functions the C library defines: a test that defines one of them
    stands in for libc (test-discover's realloc, which fails on demand), and
    the library's calls of it are calls of libc, not of the test. The library
    is the one the configured compiler links (CC when set, else gcc). An empty
    set would make every such stand-in a call into the test: that fails here,
    loudly, rather than as a circle of calls elsewhere."""
    cc = shlex.split(os.environ.get('CC', '')) or ['gcc']
    try:
        found = subprocess.run(cc + ['-print-file-name=libc.so.6'], capture_output=True,
                               text=True, check=False)
    except OSError as e:
        sys.exit('layers: cannot run %s to find the C library: %s' % (' '.join(cc), e))
    path = found.stdout.strip()
    if found.returncode != 0 or not os.path.isabs(path):
        sys.exit('layers: %s -print-file-name=libc.so.6 named no C library (%r, exit %d): %s'
                 % (' '.join(cc), path, found.returncode, found.stderr.strip()))
    out = subprocess.run(['nm', '-D', '--defined-only', path], capture_output=True, text=True,
                         check=False)
    syms = {line.split()[2].split('@')[0] for line in out.stdout.splitlines()
            if len(line.split()) == 3}
    if not syms or 'free' not in syms:
        sys.exit('layers: no functions of the C library read from %s (nm -D exit %d%s): '
                 'the stand-ins of libc in the tests could not be told from calls into them'
                 % (path, out.returncode, ': ' + out.stderr.strip() if out.stderr.strip() else ''))
    return syms


def call_graph(src, build):
    defines = collections.defaultdict(set)
    needs = collections.defaultdict(set)
    libc = libc_symbols()
    for name, obj in objects(src, build):
        out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRCGSV' and not (p[2] in libc and name.startswith('tests' + os.sep)):
                defines[p[2]].add(name)
            elif len(p) == 2 and p[0] == 'U':
                needs[name].add(p[1])
    graph = collections.defaultdict(dict)  # src -> {callee src: a symbol}
    for src, syms in needs.items():
        graph.setdefault(src, {})
        for s in sorted(syms):
            for d in defines.get(s, ()):
                if d != src:
                    graph[src].setdefault(d, s)
    return graph, len(needs)


def circles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, {})))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def check_calls(src, build, problems):
    graph, nobj = call_graph(src, build)
    if nobj == 0:
        problems.append('no objects found under %s: nothing was checked' % build)
        return 0
    for comp in circles(graph):
        edges = ['%s -> %s (%s)' % (a, b, graph[a][b]) for a in comp for b in sorted(graph[a]) if b in comp]
        problems.append('a circle of calls: ' + '; '.join(edges))
    for a in sorted(graph):
        fa = folder_of(a)
        for b, sym in sorted(graph[a].items()):
            fb = folder_of(b)
            if fa is None and fb is None:
                continue
            if fa is not None and fb is None:
                problems.append('%s calls %s (%s): src/ uses nothing outside it' % (a, b, sym))
            elif fa is not None and fa != fb and fb not in LAYERS.get(fa, set()):
                problems.append('%s calls %s (%s): %s may not use %s' % (a, b, sym, fa, fb))
    return nobj


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, build = sys.argv[1], sys.argv[2]
    if not shutil.which('nm'):
        print('layers: nm (binutils) is not installed', file=sys.stderr)
        sys.exit(77)
    problems = []
    check_includes(src, problems)
    check_sizes(src, problems)
    nobj = check_calls(src, build, problems)
    for p in problems:
        print('layers: ' + p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print('layers: %d sources, no circle; src/ includes and calls follow the layers' % nobj)


if __name__ == '__main__':
    main()
