# torch-hold: a PyTorch process for the GPU kit: a tensor on the GPU, a few
# threads that rename themselves, its pid on stdout, then on each SIGUSR1 a
# checksum of the tensor ("sum HEX"), until SIGTERM.
import ctypes
import os
import signal
import sys
import threading

import torch

libc = ctypes.CDLL(None)


def parked(i):
    libc.prctl(15, ("kit-py-%d" % i).encode(), 0, 0, 0)  # PR_SET_NAME
    threading.Event().wait()


x = torch.arange(1 << 24, device="cuda", dtype=torch.int64) * 7
torch.cuda.synchronize()
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2):
    threading.Thread(target=parked, args=(i,), daemon=True).start()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM})
print(os.getpid(), flush=True)
while signal.sigwait({signal.SIGUSR1, signal.SIGTERM}) == signal.SIGUSR1:
    print("sum %x" % (int(x.sum().item()) & (2**64 - 1)), flush=True)
