#!/bin/sh
# Pack the GPU kit (make gpu-kit): one archive holding all a bare GPU machine
# needs to validate rtid: rtid linked statically against everything but libc,
# its worker, the holders' sources and the no-GPU holder, the entry script
# and its report, NVIDIA's cuda-checkpoint and CRIU with its CUDA plugin and
# runtime libraries when they are beside the tree (SHARED/cuda-checkpoint,
# SHARED/criu), and a MANIFEST naming the glibc it needs.
#
#   pack.sh OUT.tar.gz RTID WORKER KIT_HOLD SOURCE_ROOT SHARED_TOOLS
set -eu
out=$1 rtid=$2 worker=$3 hold=$4 src=$5 shared=$6
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
k=$stage/rtid-gpu-kit
mkdir -p "$k/bin" "$k/libexec" "$k/src"
cp "$rtid" "$k/bin/rtid"
cp "$worker" "$k/libexec/rtid-cuda-worker"
cp "$hold" "$k/bin/kit-hold"
strip --strip-unneeded "$k/bin/rtid" "$k/libexec/rtid-cuda-worker" "$k/bin/kit-hold" 2>/dev/null || true
cp "$src/kit/run.sh" "$src/kit/kit-lib.sh" "$src/kit/kit-criu.sh" "$src/kit/report.py" \
	"$src/kit/README.md" "$k/"
chmod 755 "$k/run.sh"
cp "$src/kit/gpu-hold.cu" "$src/kit/hold-threads.h" "$src/kit/torch-hold.py" "$k/src/"
if [ -x "$shared/cuda-checkpoint/cuda-checkpoint" ]; then
	mkdir -p "$k/tool"
	cp "$shared/cuda-checkpoint/cuda-checkpoint" "$shared/cuda-checkpoint/LICENSE" "$k/tool/"
fi
if [ -x "$shared/criu/criu" ]; then
	mkdir -p "$k/criu/lib"
	cp "$shared/criu/criu" "$shared/criu/cuda_plugin.so" "$k/criu/"
	# The libraries it loads, but libc's own: those are the GPU machine's.
	ldd "$shared/criu/criu" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
		grep -v -e '/libc\.so' -e '/ld-linux' -e '/libm\.so' -e '/libdl\.so' -e '/libpthread\.so' |
		while read -r lib; do cp -L "$lib" "$k/criu/lib/"; done
fi
# The newest glibc symbol version the binaries ask for: what the machine needs.
newest_glibc() {
	objdump -T "$@" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -u -V | tail -1
}
glibc=$(newest_glibc "$k/bin/rtid" "$k/libexec/rtid-cuda-worker" "$k/bin/kit-hold")
criu_glibc=""
[ -x "$k/criu/criu" ] && criu_glibc=$(newest_glibc "$k/criu/criu" "$k/criu/cuda_plugin.so" "$k/criu/lib/"*)
{
	echo "rtid GPU kit"
	echo "needs: Linux x86-64, $glibc or later (rtid, rtid-cuda-worker, kit-hold); an NVIDIA driver;"
	echo "       nvcc for the CUDA C holders, python3 with PyTorch (the report, the PyTorch holders)"
	[ -n "$criu_glibc" ] && echo "criu needs: $criu_glibc (or CRIU is not tried)"
	# make gpu-kit builds it with the node's defaults; a kit packed in a build
	# with tests (make check's) has them under that build tree (-Ddefaults).
	if grep -q -a /node-defaults/ "$k/bin/rtid"; then
		echo "defaults: a test build's, under its build tree (run.sh names every path itself)"
	else
		echo "defaults: the node's (/run/rtid, /etc/rtid, /var/lib/rtid)"
	fi
	echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) from $(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)"
	echo
	(cd "$k" && find . -type f ! -name MANIFEST | sort | xargs sha256sum)
} > "$k/MANIFEST"
tar -C "$stage" -czf "$out" rtid-gpu-kit
size=$(wc -c < "$out")
if [ "$size" -gt 31457280 ]; then
	echo "pack.sh: the kit is $size bytes, over 30 MB" >&2
	exit 1
fi
