"""A training loop that prints as PyTorch's MNIST example does (and its DDP copies: every rank
prints), on random 28x28 images: 6,000 training samples in batches of 64, a line every 10
batches, a test pass after each epoch.  Run under torchrun (gloo) or alone."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

distributed = "WORLD_SIZE" in os.environ
if distributed:
    dist.init_process_group("gloo")
torch.manual_seed(0)
train = TensorDataset(torch.randn(6000, 1, 28, 28), torch.randint(0, 10, (6000,)))
test = TensorDataset(torch.randn(1000, 1, 28, 28), torch.randint(0, 10, (1000,)))
sampler = DistributedSampler(train) if distributed else None
train_loader = DataLoader(train, batch_size=64, sampler=sampler, shuffle=sampler is None)
test_loader = DataLoader(test, batch_size=1000)
model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 10))
if distributed:
    model = torch.nn.parallel.DistributedDataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(1, 3):
    if sampler is not None:
        sampler.set_epoch(epoch)
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
        if batch_idx % 10 == 0:
            print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(train_loader.dataset), 100. * batch_idx / len(train_loader),
                loss.item()))
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.cross_entropy(output, target, reduction="sum").item()
            correct += output.argmax(dim=1).eq(target).sum().item()
    test_loss /= len(test_loader.dataset)
    print("\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n".format(
        test_loss, correct, len(test_loader.dataset), 100. * correct / len(test_loader.dataset)))
if distributed:
    dist.destroy_process_group()
