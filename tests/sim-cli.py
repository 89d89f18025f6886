#!/usr/bin/env python3
"""rtid-sim's command line as a reader meets it: a header on every table, a
footer that names the timeout a row passed, specific errors."""
import json
import subprocess
import sys

SIM = sys.argv[1]
HEADER = "| workload   | strategy           | GPUs | restore s"


def sim(*args, rc=0, cwd=None):
    p = subprocess.run([SIM, *args], capture_output=True, text=True, cwd=cwd)
    assert p.returncode == rc, (args, p.returncode, p.stdout, p.stderr)
    return p.stdout, p.stderr


def aligned(out):
    """Every row's bars where the header's are: no entry wider than its column."""
    rows = [l for l in out.splitlines() if l.startswith("| ")]
    bars = [[i for i, c in enumerate(l) if c == "|"] for l in rows]
    assert rows and all(b == bars[0] for b in bars), \
        [r for r, b in zip(rows, bars) if b != bars[0]][:3]


def tables():
    out, _ = sim()
    aligned(out)  # serve+runs:8+queue, the longest strategy, included
    assert "| serve+runs:8+queue |" in out, out
    # The largest risk is explained: which row, and its terms.
    assert "The largest here, sglang-103 under scan (G=103, C=12):" in out, out
    assert "110330.88 = 1e6 x (1 - (1 - 0.099492)(1 - 0.011934)(1 - 0.000103))" in out, out
    assert "naming drift alone 99492, lookalikes alone 11934" in out, out
    for args in (["--workload", "vllm-8b", "--strategy", "serve+runs:8+queue"],
                 ["--workload", "vllm-8b", "--strategy", "api"]):
        aligned(sim(*args)[0])
    out, _ = sim("--workload", "sglang-103")
    assert out.startswith(HEADER), out
    rows = [l for l in out.splitlines() if l.startswith("| sglang-103 ")]
    assert len(rows) == 15, rows
    # upstream's restore passes the restore timeout: the row and the footer say which
    assert ">limit" in rows[0].split("|")[4], rows[0]
    assert "past the restore timeout (600 s" in out and "past the dump timeout (600 s" in out
    assert "TIMEOUT" not in out
    out, _ = sim("--workload", "vllm-8b", "--strategy", "upstream", "--seed", "7")
    assert out.startswith(HEADER) and "One run, seed 7." in out, out


def legend():
    """Every column of the header is explained under the table, and the risk
    says what it assumes."""
    for args in (["--workload", "vllm-8b"],
                 ["--workload", "vllm-8b", "--strategy", "scan", "--seed", "3"]):
        out, _ = sim(*args)
        head = out.splitlines()[0]
        names = [c.strip() for c in head.strip("|").split("|")]
        assert len(names) == 11, names
        for i, name in enumerate(names):
            if i in (5, 8):  # the two "plugin" columns share one entry
                name = "plugin"
            assert "\n  %s:" % name in out, (name, out)
        assert "Risk assumes:" in out and "no attestation" in out, out


def params_set():
    """--set changes a parameter for every output; --params shows it in force."""
    out, _ = sim("--set", "host_gbps=4", "--set", "p_drift=0.2", "--params")
    assert "| host_gbps | 4 (--set; default 2) | GB/s |" in out, out
    assert "| p_drift | 0.2 (--set; default 0.1) |" in out, out
    assert "| attach_s | 2.525 | s |" in out, out
    base, _ = sim("--workload", "vllm-8b", "--strategy", "upstream", "--json")
    fast, _ = sim("--set", "host_gbps=4", "--workload", "vllm-8b", "--strategy", "upstream",
                  "--json")
    assert json.loads(fast)["restore_s"] < json.loads(base)["restore_s"], (base, fast)
    _, err = sim("--set", "hostgbps=4", "--params", rc=2)
    assert "unknown parameter 'hostgbps'" in err, err
    _, err = sim("--set", "host_gbps=0", "--params", rc=2)
    assert "host_gbps: 0 is out of range" in err, err


def plot():
    """The plot: written only when asked, in the format its name says (SVG,
    PNG; any other name a clear error), with restore, dump and risk panels on
    log axes, every strategy in the legend with a style of its own, and the
    coincident ones named; --workload X --plot F plots that workload."""
    import os
    import shutil
    import tempfile
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    with tempfile.TemporaryDirectory() as d:
        out, _ = sim("--workload", "vllm-8b", cwd=d)
        assert os.listdir(d) == [] and "Plot:" not in out, os.listdir(d)  # nothing unasked
        _, err = sim("--plot", os.path.join(d, "p.xyz"), rc=1)
        assert "p.xyz: unknown plot format: the name must end in .svg or .png" in err, err
        assert not os.path.exists(os.path.join(d, "p.xyz"))
        if not shutil.which("gnuplot"):
            _, err = sim("--plot", os.path.join(d, "p.svg"), rc=1)
            assert "install gnuplot" in err, err
            print("sim-cli: no gnuplot here: only its absence was checked")
            return
        svg, png, one = (os.path.join(d, n) for n in ("p.svg", "p.png", "w.svg"))
        out, _ = sim("--plot", svg)
        assert "Plot: " + svg in out, out
        sim("--plot", png)
        assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
        root = ET.parse(svg).getroot()
        out, _ = sim("--workload", "sglang-103", "--plot", one)
        assert "Plot: " + one in out, out
        one_text = open(one).read()
    texts = ["".join(t.itertext()).strip() for t in root.iter(ns + "text")]
    assert any("workload: synthetic, N GPU processes" in t for t in texts), texts
    for title in ("restore (s)", "dump (s)", "risk: wrong-thread resumes per million restores"):
        assert title in texts, (title, texts)
    assert "timeout 600 s" in texts, texts
    assert {"1", "10", "100", "1000"} <= set(texts), texts  # decades: a log axis
    names = ["upstream", "scan", "parallel:8", "api", "canary", "serve", "toggle", "coalesced",
             "batch:8", "plugin", "serve+parallel:8", "toggle+parallel:8", "serve+batch:8",
             "serve+runs:8", "serve+runs:8+queue"]
    assert "serve+runs:8 (= serve)" in texts, texts  # runs side by side: as one run
    for n in names:
        assert any(t == n or t.startswith(n + " (= ") for t in texts), (n, texts)
    styles = {(p.get("stroke"), p.get("stroke-dasharray"))
              for p in root.iter(ns + "path") if p.get("stroke") not in (None, "none")}
    assert len(styles) >= len(names), styles
    assert "sglang-103" in one_text and "serve+runs:8 (= serve)" in one_text
    assert "canary (= scan)" not in one_text  # their risks differ tenfold


def sources():
    """Every parameter's source is one a reader can look up: an address, or a
    file in the repository that exists."""
    import os
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out, _ = sim("--params")
    rows = [l for l in out.splitlines()[2:] if l.startswith("| ")]
    assert len(rows) >= 20, rows
    for row in rows:
        cells = row.split(" | ")
        name, basis, source = cells[0][2:], cells[3], cells[4]
        assert basis in ("public", "measured", "fitted", "assumed"), (name, basis)
        words = [w.strip(",;()'") for w in source.split()]
        urls = [w for w in words if w.startswith("https://")]
        files = [w for w in words if "/" in w and not w.startswith("http")
                 and os.path.exists(os.path.join(root, w))]
        assert urls or files, (name, source)


def errors():
    _, err = sim("--workload", "vllm-8b", "--strategy", "parallel:0", rc=2)
    assert "parallel:K needs K from 1 to 64" in err, err
    _, err = sim("--workload", "vllm-8b", "--strategy", "fast", rc=2)
    assert "unknown part 'fast'; parts: upstream, scan" in err, err
    _, err = sim("--workload", "no-such-workload", "--strategy", "api", rc=2)
    assert "built in are vllm-small" in err, err
    _, err = sim("--workload", "vllm-8b", "--json", rc=2)
    assert "--json gives one run: it needs --strategy" in err, err
    _, err = sim("--strategy", "api", rc=2)
    assert "--strategy needs --workload" in err, err


def attach_said():
    """The table says which attach time its rows use: the public one, one
    set, or the GPU kit's measure (make sim passes evidence/), with where
    it came from. Before, only --params said so."""
    import os
    out, _ = sim()
    assert "Driver attach: 2.525 s (median; public, attach_s)" in out, out
    out, _ = sim("--set", "attach_s=1", "--workload", "tp2")
    assert "Driver attach: 1 s (median; --set)" in out, out
    evidence = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "evidence")
    out, _ = sim("--evidence", evidence, "--workload", "tp2")
    said = [l for l in out.splitlines() if l.startswith("Driver attach: ")]
    assert len(said) == 1 and "GPU kit reports in " in said[0] and \
        said[0].endswith("; without --evidence the public 2.525 s."), said


tables()
attach_said()
legend()
params_set()
plot()
sources()
errors()
