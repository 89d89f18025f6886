"""doc/fleet.md shows each file of doc/fleet/ verbatim (as an indented block),
and the Kubernetes YAML says what the doc promises: a ReadWriteMany volume for
the reports, a DaemonSet that runs the validation loop with the node's pids in
sight, and a CronJob that runs the merge on the same volume.
Usage: doc-check.py DOC DIR"""
import os
import sys


def block(text):
    return "".join("    " + l if l.strip() else "\n" for l in text.splitlines(True))


def check_yaml(path):
    try:
        import yaml
    except ImportError:
        print("doc-check: python3-yaml not installed: YAML checked as text only")
        return []
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    kinds = {d["kind"]: d for d in docs}
    bad = []
    if sorted(kinds) != ["CronJob", "DaemonSet", "PersistentVolumeClaim"]:
        bad.append("kinds: %s" % sorted(kinds))
        return bad
    claim = kinds["PersistentVolumeClaim"]
    if claim["spec"]["accessModes"] != ["ReadWriteMany"]:
        bad.append("the reports' volume is not ReadWriteMany")
    pod = kinds["DaemonSet"]["spec"]["template"]["spec"]
    job = kinds["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    if not pod.get("hostPID"):
        bad.append("the DaemonSet does not see the node's processes (hostPID)")
    for spec, script in ((pod, "validate-loop.sh"), (job, "merge.sh")):
        c = spec["containers"][0]
        if not c["command"][-1].endswith("/" + script):
            bad.append("%s does not run %s" % (c["name"], script))
        claims = [v["persistentVolumeClaim"]["claimName"] for v in spec["volumes"]
                  if "persistentVolumeClaim" in v]
        if claims != [claim["metadata"]["name"]]:
            bad.append("%s does not mount the reports' volume" % c["name"])
        env = {e["name"]: e.get("value") for e in c["env"]}
        mounts = {m["mountPath"] for m in c["volumeMounts"]}
        if env.get("RTID_REPORTS") not in mounts:
            bad.append("%s: RTID_REPORTS is not the mounted volume" % c["name"])
    return bad


def main(doc, d):
    text = open(doc).read()
    bad = []
    for name in sorted(os.listdir(d)):
        if block(open(os.path.join(d, name)).read()) not in text:
            bad.append("%s is not shown verbatim in %s" % (name, doc))
    bad += check_yaml(os.path.join(d, "k8s.yaml"))
    for b in bad:
        print("doc-check: " + b, file=sys.stderr)
    return 1 if bad else 0


sys.exit(main(sys.argv[1], sys.argv[2]))
