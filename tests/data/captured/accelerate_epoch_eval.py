"""A loop under Accelerate that evaluates after each epoch and prints the result with no step,
as Accelerate's examples and Transformers' `*_no_trainer.py` scripts do.

    python accelerate_epoch_eval.py example     Accelerate's `nlp_example.py` & co: no bar,
                                                `accelerator.print(f"epoch {epoch}:", eval_metric)`
    python accelerate_epoch_eval.py no_trainer  `run_clm_no_trainer.py` & co: their logger's setup
                                                and banner, one unlabelled bar over all steps,
                                                `epoch N: perplexity: P eval_loss: L`
    python accelerate_epoch_eval.py translation     the same, logging `{'bleu': B}` after each epoch
                                                    as `run_translation_no_trainer.py` does
    python accelerate_epoch_eval.py summarization   ... the ROUGE dict, as `run_summarization_no_trainer.py`
    python accelerate_epoch_eval.py qa              ... `Evaluation metrics: {...}` once, after training,
                                                    as `run_qa_no_trainer.py`
    (the toy model's accuracy and F1 stand in for those scripts' scores, under their keys)
"""
import logging
import math
import sys
import time

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from torch import nn
from tqdm.auto import tqdm

EPOCHS, BATCH = 3, 4
accelerator = Accelerator(cpu=True)
g = torch.Generator().manual_seed(0)
x_all = torch.randn(40, 8, generator=g)
y_all = (x_all.sum(dim=1) > 0).long()
train = torch.utils.data.TensorDataset(x_all[:24], y_all[:24])
valid = torch.utils.data.TensorDataset(x_all[24:], y_all[24:])
model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
train_loader = torch.utils.data.DataLoader(train, batch_size=BATCH)
eval_loader = torch.utils.data.DataLoader(valid, batch_size=BATCH)
model, opt, train_loader, eval_loader = accelerator.prepare(model, opt, train_loader, eval_loader)


def train_step(x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
    time.sleep(0.05)


def evaluate():
    """(mean loss, accuracy, F1 of class 1) over the validation set."""
    model.eval()
    losses, tp, fp, fn, right, seen = [], 0, 0, 0, 0, 0
    with torch.no_grad():
        for x, y in eval_loader:
            logits = model(x)
            losses.append(nn.functional.cross_entropy(logits, y).repeat(len(y)))
            pred = logits.argmax(dim=-1)
            right += int((pred == y).sum())
            seen += len(y)
            tp += int(((pred == 1) & (y == 1)).sum())
            fp += int(((pred == 1) & (y == 0)).sum())
            fn += int(((pred == 0) & (y == 1)).sum())
    model.train()
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return torch.cat(losses).mean(), right / seen, f1


if sys.argv[1] == "example":
    for epoch in range(EPOCHS):
        for x, y in train_loader:
            train_step(x, y)
        _, accuracy, f1 = evaluate()
        accelerator.print(f"epoch {epoch}:", {"accuracy": accuracy, "f1": f1})
else:
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                        datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)
    logger = get_logger(__name__)
    max_train_steps = EPOCHS * len(train_loader)
    logger.info("***** Running training *****")
    logger.info(f"  Num examples = {len(train)}")
    logger.info(f"  Num Epochs = {EPOCHS}")
    logger.info(f"  Instantaneous batch size per device = {BATCH}")
    logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {BATCH}")
    logger.info("  Gradient Accumulation steps = 1")
    logger.info(f"  Total optimization steps = {max_train_steps}")
    progress_bar = tqdm(range(max_train_steps), disable=not accelerator.is_local_main_process)
    completed_steps = 0
    for epoch in range(EPOCHS):
        for x, y in train_loader:
            train_step(x, y)
            progress_bar.update(1)
            completed_steps += 1
        eval_loss, accuracy, f1 = evaluate()
        if sys.argv[1] == "no_trainer":
            perplexity = math.exp(eval_loss)
            logger.info(f"epoch {epoch}: perplexity: {perplexity} eval_loss: {eval_loss}")
        elif sys.argv[1] == "translation":
            logger.info({"bleu": round(accuracy * 100, 4)})
        elif sys.argv[1] == "summarization":
            logger.info({k: round(v * 100, 4) for k, v in
                         (("rouge1", f1), ("rouge2", f1 / 2), ("rougeL", accuracy), ("rougeLsum", accuracy))})
    if sys.argv[1] == "qa":
        logger.info(f"Evaluation metrics: {dict(exact_match=accuracy * 100, f1=f1 * 100)}")
