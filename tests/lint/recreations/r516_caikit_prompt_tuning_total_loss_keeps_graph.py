"""caikit-nlp's prompt-tuning module trains a PEFT model in a helper
`_execute_train_loop` that sums each batch's loss into an epoch total for
its log line.  The total was built from the loss tensor itself, so it held
every batch's graph until the epoch ended; the fix ("Fix loss tensor to float
conversion", citing a post on memory leaks from summing losses) takes the
float value out of the loss before adding it.  Nothing raises; the epoch
total carries a `grad_fn` (and the graphs of every batch) when it is logged.
Buggy line: `total_loss += loss.float()` in `_execute_train_loop`.
Source: https://github.com/caikit/caikit-nlp/pull/258"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PromptTunedLM(nn.Module):
    def __init__(self, vocab=10, d=8, n_virtual=2):
        super().__init__()
        self.prompt = nn.Parameter(torch.randn(n_virtual, d) * 0.1)
        self.embed = nn.Embedding(vocab, d)
        self.head = nn.Linear(d, vocab)

    def forward(self, input_ids, labels):
        h = self.embed(input_ids) + self.prompt.mean(0)
        logits = self.head(torch.tanh(h))
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        return type("Out", (), {"loss": loss, "logits": logits})()


def _execute_train_loop(model, num_epochs, train_dataloader, device="cpu", learning_rate=1e-2, log=None):
    optimizer = torch.optim.AdamW(params=model.parameters(), lr=learning_rate)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    for epoch in range(num_epochs):
        model.train()
        total_loss = 0
        for step, batch in enumerate(train_dataloader):
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss
            total_loss += loss.float()  # expect: ADL023
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
        train_epoch_loss = total_loss / len(train_dataloader)
        if log is not None:
            log.append(train_epoch_loss)
    return model


def bug_shows():
    """The epoch total that is logged still carries the batches' graph."""
    torch.manual_seed(0)
    batches = [{"input_ids": torch.randint(0, 10, (2, 3)), "labels": torch.randint(0, 10, (2, 3))} for _ in range(3)]
    log = []
    _execute_train_loop(PromptTunedLM(), 1, batches, log=log)
    return log[0].grad_fn is not None
