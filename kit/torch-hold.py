# torch-hold: a PyTorch process for the GPU kit: a tensor on the GPU, a few
# threads that rename themselves, its pid on stdout, then on each SIGUSR1 a
# checksum of the tensor computed on the GPU ("sum HEX"; "sum failed" when
# the GPU cannot compute it), until SIGTERM. It dies with the kit's shell.
#
#   python3 torch-hold.py [THREADS]
import ctypes
import os
import signal
import sys
import threading

# Blocked before torch and CUDA start threads, which inherit the mask: only
# the sigwait below takes these signals.
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM})
libc = ctypes.CDLL(None)
libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: no holder outlives the kit

import torch  # noqa: E402 (after the mask)


def parked(i):
    libc.prctl(15, ("kit-py-%d" % i).encode(), 0, 0, 0)  # PR_SET_NAME
    threading.Event().wait()


x = torch.arange(1 << 24, device="cuda", dtype=torch.int64) * 7
torch.cuda.synchronize()
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2):
    threading.Thread(target=parked, args=(i,), daemon=True).start()
print(os.getpid(), flush=True)
while signal.sigwait({signal.SIGUSR1, signal.SIGTERM}) == signal.SIGUSR1:
    try:
        # Each element mixed with its index, so that a change anywhere shows.
        v = int(((x * 1000003) ^ torch.arange(x.numel(), device="cuda")).sum().item())
        print("sum %x" % (v & (2**64 - 1)), flush=True)
    except Exception:  # a device that cannot compute after the cycle
        print("sum failed", flush=True)
