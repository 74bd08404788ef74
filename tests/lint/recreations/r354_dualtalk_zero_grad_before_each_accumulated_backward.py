"""DualTalk's `main.py` trains with gradient accumulation, but clears the
gradients before every backward: `optimizer.zero_grad(); loss.backward()`,
then `optimizer.step(); optimizer.zero_grad()` only when
`i % gradient_accumulation_steps == 0`.  Each step therefore sees only the
last micro-batch's gradient, not the window's sum.  Nothing raises.  The fix
clears only after the step (and divides the loss by the window).
Buggy line: `optimizer.zero_grad()` before `loss.backward()` in `trainer`.
Expected finding: ADL018 (a clear inside the accumulation window).
Source: https://github.com/ZiqiaoPeng/DualTalk/issues/9"""
import torch
import torch.nn as nn


class TalkingHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.audio_encoder = nn.Linear(6, 8)
        self.decoder = nn.Linear(8, 4)

    def forward(self, audio):
        return self.decoder(torch.tanh(self.audio_encoder(audio)))


def trainer(args, train_loader, model, optimizer, criterion):
    loss_log = []
    for i, (audio, vertices) in enumerate(train_loader):
        loss = criterion(model(audio), vertices)
        optimizer.zero_grad()  # expect: ADL018
        loss.backward()
        loss_log.append(loss.item())
        if i % args.gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    return loss_log


class Args:
    gradient_accumulation_steps = 2


def bug_shows():
    """The second step (after batches 1 and 2) applies only batch 2's
    gradient instead of the sum over the window."""
    torch.manual_seed(1)
    loader = [(torch.randn(3, 6), torch.randn(3, 4)) for _ in range(3)]
    torch.manual_seed(0)
    model = TalkingHead()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    criterion = nn.MSELoss()
    trainer(Args(), loader, model, optimizer, criterion)
    torch.manual_seed(0)
    reference = TalkingHead()
    ref_opt = torch.optim.SGD(reference.parameters(), lr=1.0)
    for i, (audio, vertices) in enumerate(loader):
        criterion(reference(audio), vertices).backward()
        if i % 2 == 0:
            ref_opt.step()
            ref_opt.zero_grad()
    return not torch.allclose(model.decoder.weight, reference.decoder.weight, atol=1e-6)
