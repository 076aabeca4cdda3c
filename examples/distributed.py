"""Data-parallel training across processes for examples/train_ppo.py, the way Isaac Lab scales:
one process per node (or socket), each stepping its own slice of the environments, gradients and
statistics all-reduced with torch.distributed (gloo: CPU tensors, TCP between machines).

    torchrun --standalone --nproc_per_node=2 examples/train_ppo.py --distributed
    torchrun --nnodes=2 --nproc_per_node=1 --rdzv_backend=c10d --rdzv_endpoint=HOST:29400 \\
             examples/train_ppo.py --distributed            # on each machine

Every rank holds the same parameters: rank 0's initial ones are broadcast, and every update
applies the average of the ranks' gradients (one all-reduce of the flattened gradients per
minibatch; gloo's ring all-reduce hands every rank the same bits). Whatever decides the
update (observation-normaliser statistics, the advantages' mean and std, the KL of the adaptive
step) is all-reduced too, so the ranks never diverge. Without torchrun (world size 1) every
call is the identity and costs nothing.
"""
import os

import torch
import torch.distributed as dist


class Distributed:
    """The process group of a torchrun launch (gloo), or a world of one."""

    def __init__(self, enabled):
        self.enabled = bool(enabled) and int(os.environ.get("WORLD_SIZE", "1")) > 1
        if enabled and "RANK" not in os.environ:
            raise SystemExit("--distributed: launch with torchrun (it sets RANK, WORLD_SIZE, MASTER_ADDR, ...)")
        if self.enabled:
            dist.init_process_group("gloo")
        self.rank = dist.get_rank() if self.enabled else 0
        self.world = dist.get_world_size() if self.enabled else 1
        # processes sharing this machine (torchrun's LOCAL_WORLD_SIZE): they share its cores
        self.local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1")) if self.enabled else 1
        self.is_main = self.rank == 0

    def sum(self, tensor):
        """The element-wise sum over the ranks (a new float64 tensor, the same on every rank)."""
        out = tensor.detach().to(torch.float64).clone()
        if self.enabled:
            dist.all_reduce(out, op=dist.ReduceOp.SUM)
        return out

    def broadcast_parameters(self, module):
        """Rank 0's parameters on every rank."""
        if self.enabled:
            for p in module.parameters():
                dist.broadcast(p.data, src=0)

    def average_gradients(self, parameters):
        """Every parameter's gradient becomes the mean over the ranks (one all-reduce)."""
        if not self.enabled:
            return
        grads = [p.grad for p in parameters if p.grad is not None]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        flat /= self.world
        offset = 0
        for g in grads:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()

    def close(self):
        if self.enabled:
            dist.barrier()
            dist.destroy_process_group()
