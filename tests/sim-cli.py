#!/usr/bin/env python3
"""rtid-sim's command line as a reader meets it: a header on every table, a
footer that names the timeout a row passed, specific errors."""
import json
import subprocess
import sys

SIM = sys.argv[1]
HEADER = "| workload   | strategy          | GPUs | restore s"


def sim(*args, rc=0):
    p = subprocess.run([SIM, *args], capture_output=True, text=True)
    assert p.returncode == rc, (args, p.returncode, p.stdout, p.stderr)
    return p.stdout, p.stderr


def tables():
    out, _ = sim("--workload", "sglang-103")
    assert out.startswith(HEADER), out
    rows = [l for l in out.splitlines() if l.startswith("| sglang-103 ")]
    assert len(rows) == 9, rows
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
    """The plot reads at a glance: a style per strategy, round ticks, the
    workload named, the timeout drawn and labelled, a legend."""
    import os
    import tempfile
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.svg")
        out, _ = sim("--plot", path)
        root = ET.parse(path).getroot()
    texts = [t.text for t in root.iter(ns + "text")]
    assert any(t.startswith("workload: synthetic, N GPU processes") for t in texts), texts
    assert "timeout 600 s" in texts, texts
    styles = {(p.get("stroke"), p.get("stroke-dasharray")) for p in root.iter(ns + "polyline")}
    strokes = {p.get("stroke") for p in root.iter(ns + "polyline")}
    assert len(styles) >= 9 and len(strokes) >= 9, styles
    names = ["upstream", "scan", "parallel:8", "api", "canary", "serve", "toggle",
             "serve+parallel:8", "toggle+parallel:8"]
    for n in names:  # in the legend, and at each panel's line end
        assert texts.count(n) == 3, (n, texts.count(n))
    markers = sum(1 for _ in root.iter(ns + "circle")) + sum(1 for _ in root.iter(ns + "rect"))
    assert markers >= 4 * 2 * 10, markers  # circles and squares: 4 strategies, 2 panels
    ticks = {int(t) for t in texts if t.isdigit()}
    assert {0, 20, 40, 60, 80, 100, 120} <= ticks, ticks
    assert {200, 400, 600, 800, 1000} <= ticks, ticks
    assert all(t % 20 == 0 for t in ticks), ticks


def sources():
    """Every parameter's source is one a reader can look up: an address, or a
    file in the repository that exists."""
    import os
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out, _ = sim("--params")
    rows = [l for l in out.splitlines()[2:] if l.startswith("| ")]
    assert len(rows) >= 20, rows
    for row in rows:
        name, source = row.split(" | ")[0][2:], row.split(" | ")[3]
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


tables()
legend()
params_set()
plot()
sources()
errors()
