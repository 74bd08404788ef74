"""BD event extraction (trigger and argument extraction on the Baidu DuEE data), issue 1: training
failed in `clip_grad_norm_` with "stack expects a non-empty TensorList"; the reporter found the
cause in `BD_train.py`: `nn.utils.clip_grad_norm_(model.parameters(), 1.0)` is called before
`loss.backward()`, right after `optimizer.zero_grad()`, so it clips nothing ("loss.backward()
should be before nn.utils.clip_grad_norm_").  Under current PyTorch the call quietly returns 0 and
every step uses the unclipped gradients.
Re-created in my own words with the script's structure: a `Net` with `predict_triggers` returning
trigger logits, predictions and the argument logits for the gold arguments, the trigger loss plus
twice the argument loss when arguments exist, and the `train` function over the batches.
Nothing raises: `bug_shows()` shows the gradient the optimizer stepped with is longer than the
clipping bound.
Buggy line: `nn.utils.clip_grad_norm_(model.parameters(), 1.0)` before `loss.backward()`.
Source: https://github.com/ll0ruc/BD_event-extraction/issues/1"""
import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self, device='cpu', trigger_size=5, argument_size=4, vocab=50, hidden=16):
        super().__init__()
        self.device = device
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.fc_trigger = nn.Linear(hidden, trigger_size)
        self.fc_argument = nn.Linear(2 * hidden, argument_size)
        with torch.no_grad():
            self.fc_trigger.weight.mul_(20.0)

    def predict_triggers(self, tokens_x_2d, mask, head_indexes_2d, arguments_2d):
        x, _ = self.encoder(self.embed(tokens_x_2d))
        trigger_logits = self.fc_trigger(x)
        trigger_hat_2d = trigger_logits.argmax(-1)
        pairs = [torch.cat([x[b, t], x[b, a]]) for b, (t, a) in enumerate(arguments_2d)]
        argument_logits = self.fc_argument(torch.stack(pairs))
        arguments_y_1d = torch.ones(len(pairs), dtype=torch.long)
        return trigger_logits, trigger_hat_2d, argument_logits, arguments_y_1d, argument_logits.argmax(-1)


def train(model, iterator, optimizer, criterion):
    model.train()
    for i, batch in enumerate(iterator):
        tokens_x_2d, triggers_y_2d, arguments_2d = batch
        optimizer.zero_grad()
        trigger_logits, trigger_hat_2d, argument_logits, arguments_y_1d, argument_hat_2d = model.predict_triggers(
            tokens_x_2d=tokens_x_2d, mask=None, head_indexes_2d=None, arguments_2d=arguments_2d)
        triggers_y_2d = torch.LongTensor(triggers_y_2d).to(model.device).view(-1)
        trigger_logits = trigger_logits.view(-1, trigger_logits.shape[-1])
        trigger_loss = criterion(trigger_logits, triggers_y_2d)
        if len(argument_logits) != 1:
            argument_logits = argument_logits.view(-1, argument_logits.shape[-1])
            argument_loss = criterion(argument_logits, arguments_y_1d.view(-1))
            loss = trigger_loss + 2 * argument_loss
        else:
            loss = trigger_loss

        nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: ADL022
        loss.backward()
        optimizer.step()
        if i % 40 == 0:
            print("step: {}, loss: {}".format(i, loss.item()))


def run():
    torch.manual_seed(0)
    model = Net()
    optimizer = optim.Adam(model.parameters(), lr=2e-5)
    criterion = nn.CrossEntropyLoss(ignore_index=0)
    batches = [(torch.randint(0, 50, (2, 6)), torch.randint(1, 5, (2, 6)).tolist(), [(1, 3), (2, 4)])]
    train(model, batches, optimizer, criterion)
    return model


def bug_shows():
    model = run()
    total = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters() if p.grad is not None))
    return total.item() > 1.0 + 1e-6
