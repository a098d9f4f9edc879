"""A kiln operator trained under torch.distributed: two processes on 127.0.0.1 (gloo backend), each with half
of the batch, train a DistributedDataParallel model whose loss is kiln_test::mlp_loss; their parameters
must equal those of one process trained on the whole batch with the same loss written in PyTorch.

Run by CTest (test torch_distributed) with KILN_TORCH_TEST_OPS naming the built operator library."""
import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

f64 = torch.float64
STEPS, N, D, H = 30, 64, 2, 8


class KilnMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.w1 = torch.nn.Parameter(torch.randn(D, H, dtype=f64, generator=g) * 0.5)
        self.b1 = torch.nn.Parameter(torch.zeros(1, H, dtype=f64))
        self.w2 = torch.nn.Parameter(torch.randn(H, dtype=f64, generator=g) * 0.5)
        self.b2 = torch.nn.Parameter(torch.zeros((), dtype=f64))

    def forward(self, x, y):
        return torch.ops.kiln_test.mlp_loss(x, self.w1, self.b1, self.w2, self.b2, y)


def data():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(N, D, dtype=f64, generator=g)
    return x, torch.sin(x[:, 0]) + 0.5 * x[:, 1]


def worker(rank, world, port, out):
    torch.ops.load_library(os.environ["KILN_TORCH_TEST_OPS"])
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        model = torch.nn.parallel.DistributedDataParallel(KilnMLP())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = data()
        half = N // world
        xs, ys = x[rank * half:(rank + 1) * half], y[rank * half:(rank + 1) * half]
        for _ in range(STEPS):
            opt.zero_grad()
            model(xs, ys).backward()  # DDP averages the two halves' gradients: the whole batch's mean
            opt.step()
        if rank == 0:
            torch.save({k: v.detach() for k, v in model.module.state_dict().items()}, out)
    finally:
        dist.destroy_process_group()


def single_process():
    model = KilnMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    first = None
    for _ in range(STEPS):
        opt.zero_grad()
        p = dict(model.named_parameters())
        loss = torch.mean(torch.square(torch.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y))
        first = loss.item() if first is None else first
        loss.backward()
        opt.step()
    return model.state_dict(), first, loss.item()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "params.pt")
        mp.spawn(worker, args=(2, free_port(), out), nprocs=2, join=True)
        distributed = torch.load(out)
    reference, first, last = single_process()
    assert last < 0.5 * first, (first, last)  # it trained
    for name, value in reference.items():
        diff = (distributed[name] - value).abs().max().item()
        print(f"{name}: largest difference {diff:.2e}")
        assert diff < 1e-12, name
    print("DistributedDataParallel over a kiln operator on 2 processes matches one process")


if __name__ == "__main__":
    sys.exit(main())
