"""dialogue-summarization (a transformer summariser of customer-service dialogues with utterance
types), `utils/train.py`: `one_cycle(epoch, config, model, optimizer, criterion, data_loader,
tokenizer, device)` runs the model on a `Batch` (source, target and their masks, utterance
types), takes the mean token cross-entropy, backpropagates, steps the optimizer, and only then
calls `clip_grad_norm_(model.parameters(), config.max_grad_norm)`.  The step has already used
the unclipped gradients and the next iteration zeroes them: `max_grad_norm` never limits an
update.
Re-created in my own words with the repository's structure: the `Config` with `max_grad_norm`,
`data_dir` and `fn`, the `Batch` class building the masks and the shifted target, a small
encoder-decoder with an utterance-type embedding, and `one_cycle` with its per-epoch checkpoint.
Nothing raises: `bug_shows()` compares the parameters after one cycle with the same cycle
clipping between the backward and the step.
Buggy line: `clip_grad_norm_(model.parameters(), config.max_grad_norm)` after the step.
Source: https://github.com/binnz/dialogue-summarization/blob/0016875ce46035c0e0870d189da54ed5e1805384/utils/train.py"""
import copy
import tempfile

import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_


class Config:
    max_grad_norm = 0.01
    fn = "model"

    def __init__(self, data_dir):
        self.data_dir = data_dir


class Tokenizer:
    pad_token_id = 0


class Batch:
    def __init__(self, data, device, pad=0):
        source, target, utter_type = data
        self.source = source.to(device)
        self.source_mask = (source != pad).unsqueeze(-2)
        self.target = target[:, :-1].to(device)
        self.target_y = target[:, 1:].to(device)
        self.target_mask = (self.target != pad).unsqueeze(-2)
        self.utter_type = utter_type.to(device)


class Summarizer(nn.Module):
    def __init__(self, vocab=16, d_model=8, n_types=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.type_embed = nn.Embedding(n_types, d_model)
        self.encoder = nn.GRU(d_model, d_model, batch_first=True)
        self.decoder = nn.GRU(d_model, d_model, batch_first=True)
        self.generator = nn.Linear(d_model, vocab)

    def forward(self, source, source_mask, target, target_mask, utter_type):
        memory = self.embed(source) + self.type_embed(utter_type)
        _, hidden = self.encoder(memory * source_mask.transpose(-1, -2))
        out, _ = self.decoder(self.embed(target), hidden)
        return self.generator(out)


def one_cycle(epoch, config, model, optimizer, criterion, data_loader, tokenizer, device):
    model.train()
    for i, data in enumerate(data_loader):
        optimizer.zero_grad()
        batch = Batch(data, device, pad=tokenizer.pad_token_id)
        out = model(batch.source, batch.source_mask, batch.target, batch.target_mask, batch.utter_type)
        loss = criterion(out.transpose(1, 2), batch.target_y).mean()
        loss.backward()
        optimizer.step()
        clip_grad_norm_(model.parameters(), config.max_grad_norm)  # expect: ADL022
    torch.save({
        'epoch': epoch,
        'model': model.state_dict(),
        'opt': optimizer.state_dict()
    }, f'{config.data_dir}/{config.fn}_{epoch}.pth')


def make_data():
    generator = torch.Generator().manual_seed(0)
    return [(torch.randint(1, 16, (2, 6), generator=generator), torch.randint(1, 16, (2, 5), generator=generator),
             torch.randint(0, 3, (2, 6), generator=generator)) for _ in range(2)]


def run(model=None):
    torch.manual_seed(0)
    model = model or Summarizer()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    criterion = nn.CrossEntropyLoss(reduction='none')
    with tempfile.TemporaryDirectory() as data_dir:
        one_cycle(0, Config(data_dir), model, optimizer, criterion, make_data(), Tokenizer(), torch.device("cpu"))
    return model


def bug_shows():
    torch.manual_seed(0)
    model = Summarizer()
    reference = copy.deepcopy(model)
    run(model)

    # the same cycle, clipping between the backward and the step
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.5)
    criterion = nn.CrossEntropyLoss(reduction='none')
    for data in make_data():
        optimizer.zero_grad()
        batch = Batch(data, "cpu")
        out = reference(batch.source, batch.source_mask, batch.target, batch.target_mask, batch.utter_type)
        criterion(out.transpose(1, 2), batch.target_y).mean().backward()
        clip_grad_norm_(reference.parameters(), Config.max_grad_norm)
        optimizer.step()
    return not torch.allclose(model.generator.weight, reference.generator.weight)
