"""GPT2-Chinese's training loop with gradient accumulation clips after every
micro-batch's backward, `clip_grad_norm_(model.parameters(), max_grad_norm)`,
while it steps only every `gradient_accumulation` micro-batches: each clip
rescales the partial sum gathered so far, not the window's gradient, and the
step applies a gradient that depends on the order of the micro-batches.
The fix clips once, right before `optimizer.step()`.
Buggy line: `torch.nn.utils.clip_grad_norm_(...)` after `loss.backward()` in `train`.
Source: https://github.com/Morizeyao/GPT2-Chinese/pull/101"""
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab=11, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, input_ids, labels):
        logits = self.head(self.embed(input_ids[:, :-1]))
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return loss, logits


def train(model, optimizer, batches, gradient_accumulation=2, max_grad_norm=0.05):
    overall_step = 0
    running_loss = 0
    for batch_inputs in batches:
        outputs = model.forward(input_ids=batch_inputs, labels=batch_inputs)
        loss, logits = outputs[:2]
        if gradient_accumulation > 1:
            loss = loss / gradient_accumulation
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # expect: ADL029
        if (overall_step + 1) % gradient_accumulation == 0:
            running_loss += loss.item()
            optimizer.step()
            optimizer.zero_grad()
        overall_step += 1
    return running_loss


def bug_shows():
    """After one window the parameters differ from an SGD step on the
    window's gradient clipped once, written by hand."""
    torch.manual_seed(0)
    model = TinyLM()
    reference = TinyLM()
    reference.load_state_dict(model.state_dict())
    batches = [torch.randint(0, 11, (2, 6)) for _ in range(2)]
    train(model, torch.optim.SGD(model.parameters(), lr=0.1), batches)
    for ids in batches:
        (reference(ids, ids)[0] / 2).backward()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.05)
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.1 * p.grad
    return not all(torch.allclose(a, b) for a, b in zip(model.parameters(), reference.parameters()))
