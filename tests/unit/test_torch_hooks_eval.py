"""The hook probe marks an evaluation loop in a step's window (probes/torch_hooks.py): a real
DataLoader drained with no backward between its batches, and not a training loop's batches, a
loader a step takes one batch from, or a training epoch's end."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from ridgescope.pipeline import windows  # noqa: E402
from ridgescope.probes.torch_hooks import TorchHookProbe  # noqa: E402


@pytest.fixture
def summaries():
    sent: list = []
    probe = TorchHookProbe()
    assert probe.instrument(emit=lambda kind, payload, ts: sent.append(payload))
    yield sent
    probe.uninstrument()


def loader(n: int, batch: int = 2) -> DataLoader:
    return DataLoader(TensorDataset(torch.randn(n, 4), torch.randn(n, 1)), batch_size=batch)


def train_step(model, optimizer, x, y) -> None:
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()


def evaluated_steps(sent) -> list[int]:
    return [p["step"] for p in sent if windows.step_rank_row(p, "hook").get("evaluated")]


def test_an_evaluation_after_every_fourth_step_marks_the_window_it_ran_in(summaries):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(2):
        for i, (x, y) in enumerate(loader(16)):      # 8 steps an epoch, drained at its end
            train_step(model, optimizer, x, y)
            if (i + 1) % 4 == 0:
                model.eval()
                with torch.no_grad():
                    for ex, _ in loader(6):
                        model(ex)
                model.train()
    # the evaluation after step 4 runs in the window that step 5 closes
    assert evaluated_steps(summaries) == [5, 9, 13]
    spans = [s for s in summaries[4]["spans"] if s[0] == "evaluation"]
    assert len(spans) == 1 and summaries[4]["t0_ns"] <= spans[0][1] < spans[0][2] <= summaries[4]["t1_ns"]


def test_a_loader_that_gives_each_step_one_batch_is_no_evaluation(summaries):
    """An RL-style loop: a prompt batch per step from a long-lived iterator, used with no
    backward of its own, and a training batch with one; two epochs, so that the first one's
    drained training loader falls in step 9's window."""
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    prompts = iter(loader(40))
    for epoch in range(2):
        for x, y in loader(16):
            next(prompts)
            train_step(model, optimizer, x, y)
    assert len(summaries) == 16 and evaluated_steps(summaries) == []
