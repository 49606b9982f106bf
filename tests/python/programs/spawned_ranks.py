"""Two ranks started with ``torch.multiprocessing.spawn`` on the CPU
(gloo), without torchrun's environment: each joins its process group with
its rank and the world size, runs a compiled op on its own data,
all-reduces the result and runs the op again. With LAUNCHER_WORK=1 the
launcher runs an op of its own before it spawns the ranks; with
PLAIN_MULTIPROCESSING=1 it starts them as processes of multiprocessing's
spawn context instead of through torch."""

import multiprocessing
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(index: int, port: int) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=index, world_size=2)
    torch.manual_seed(index)
    f = torch.compile(lambda t: (t * 2).sin())
    y = f(torch.randn(1024))
    dist.all_reduce(y)
    f(y)
    dist.destroy_process_group()


if __name__ == "__main__":
    if os.environ.get("LAUNCHER_WORK") == "1":
        torch.ones(4).add_(1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    if os.environ.get("PLAIN_MULTIPROCESSING") == "1":
        context = multiprocessing.get_context("spawn")
        ranks = [context.Process(target=rank_main, args=(i, port)) for i in range(2)]
        for process in ranks:
            process.start()
        for process in ranks:
            process.join()
            assert process.exitcode == 0, process.exitcode
    else:
        mp.spawn(rank_main, args=(port,), nprocs=2)
