# A one-layer OCI image archive (oci-layout) of a directory, for ctr image
# import: no registry is reached. Usage: oci-image.py DIR OUT.tar NAME
import hashlib, io, json, os, sys, tarfile
src, out, name = sys.argv[1:]
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as t:
    for root, dirs, files in os.walk(src):
        for n in sorted(dirs) + sorted(files):
            p = os.path.join(root, n)
            t.add(p, arcname=os.path.relpath(p, src), recursive=False)
layer = buf.getvalue()
def blob(b):
    return "sha256:" + hashlib.sha256(b).hexdigest(), b
ld, _ = blob(layer)
config = json.dumps({"architecture": "amd64", "os": "linux",
    "config": {"Cmd": ["/bin/sh"]},
    "rootfs": {"type": "layers", "diff_ids": [ld]}}).encode()
cd, _ = blob(config)
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": ld, "size": len(layer)}]}).encode()
md, _ = blob(manifest)
index = json.dumps({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": md, "size": len(manifest), "annotations": {"org.opencontainers.image.ref.name": name.split(":")[-1],
    "io.containerd.image.name": name}}]}).encode()
with tarfile.open(out, "w") as t:
    def put(n, b):
        i = tarfile.TarInfo(n); i.size = len(b); t.addfile(i, io.BytesIO(b))
    put("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    put("index.json", index)
    for d, b in ((ld, layer), (cd, config), (md, manifest)):
        put("blobs/sha256/" + d.split(":")[1], b)
