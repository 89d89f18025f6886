/* The mock driver's GPUs: those of the node, and those each process's CUDA
 * state is on, remembered at its checkpoint and moved by a restore's device
 * map as the driver moves them (CUcheckpointRestoreArgs, CUDA 13.0). */
#ifndef RTID_MOCK_GPUS_H
#define RTID_MOCK_GPUS_H

/* At pid's checkpoint: remember its GPUs, where a restore put it, else
 * $RTID_MOCK_PROC_GPUS (a comma list of UUIDs; default: the node's first,
 * $RTID_MOCK_GPUS, else one made-up GPU), in the state directory
 * ($RTID_MOCK_STATE) where there is one. */
void mock_gpus_checkpoint(int pid);

/* A restore's arguments (64 bytes): 0, or the CUresult the driver gives for
 * them: reserved bytes set, more than 16 pairs, no pairs array for a count,
 * a GPU twice on one side, a GPU pid was checkpointed on left out
 * ("must contain all checkpointed devices"): CUDA_ERROR_INVALID_VALUE; a
 * target not on the node ($RTID_MOCK_GPUS, when set):
 * CUDA_ERROR_INVALID_DEVICE. Logs "restore-map" with the pairs taken (or
 * the fault), and on success moves pid's GPUs to the targets. */
int mock_gpus_restore(int pid, const unsigned char *args);

#endif
