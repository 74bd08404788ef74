"""HVPNeT (multimodal named-entity recognition: a BERT text encoder, visual prompts, and a CRF over
an `fc` emission layer). `multiModal_before_train` builds the AdamW parameter groups one by one:
the BERT group and the prompt group are appended to `parameters`, but the third group, `crf` and
`fc` with their own learning rate 5e-2, is built and never appended. The CRF transitions and the
emission layer get gradients at every step, yet no optimizer holds them; they keep their random
initial values while the rest of the model trains around them. Nothing raises.
Source: https://github.com/zjunlp/HVPNeT/issues/5 ("Not putting parameters into optimizer but still
trainable": "lines 484 and 492 both add parameters to the optimizer, but the parameters for crf and
fc are not added"; maintainer: "You're right! The `parameters.append(params)` should be added after
line 499, otherwise crf and fc will not be trained").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HID, LABELS, SEQ, BATCH = 30, 16, 5, 6, 4


class SimpleCRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags) * 0.1)

    def neg_log_likelihood(self, emissions, tags):
        # Forward algorithm over a fixed-length sequence.
        alpha = emissions[:, 0]
        for t in range(1, emissions.size(1)):
            alpha = torch.logsumexp(alpha.unsqueeze(2) + self.transitions + emissions[:, t].unsqueeze(1), dim=1)
        log_partition = torch.logsumexp(alpha, dim=1)
        gold = emissions.gather(2, tags.unsqueeze(2)).squeeze(2).sum(dim=1)
        gold = gold + self.transitions[tags[:, :-1], tags[:, 1:]].sum(dim=1)
        return (log_partition - gold).mean()


class HMNeTNERModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = nn.Sequential(nn.Embedding(VOCAB, HID), nn.Linear(HID, HID), nn.Tanh())
        self.encoder_conv = nn.Linear(8, HID)
        self.gates = nn.Linear(HID, 1)
        self.fc = nn.Linear(HID, LABELS)
        self.crf = SimpleCRF(LABELS)

    def forward(self, input_ids, image_features, labels):
        text = self.bert(input_ids)
        prompt = self.encoder_conv(image_features).unsqueeze(1)
        gate = torch.sigmoid(self.gates(text))
        emissions = self.fc(text + gate * prompt)
        return self.crf.neg_log_likelihood(emissions, labels)


model = HMNeTNERModel()

parameters = []
params = {'lr': 1e-2, 'weight_decay': 1e-2, 'params': []}
for name, param in model.named_parameters():
    if 'bert' in name:
        params['params'].append(param)
parameters.append(params)

params = {'lr': 1e-2, 'weight_decay': 1e-2, 'params': []}
for name, param in model.named_parameters():
    if 'encoder_conv' in name or 'gates' in name:
        params['params'].append(param)
parameters.append(params)

params = {'lr': 5e-2, 'weight_decay': 1e-2, 'params': []}
for name, param in model.named_parameters():
    if 'crf' in name or name.startswith('fc'):
        params['params'].append(param)
parameters.append(params)

optimizer = torch.optim.AdamW(parameters)

input_ids = torch.randint(0, VOCAB, (BATCH, SEQ))
image_features = torch.randn(BATCH, 8)
labels = torch.randint(0, LABELS, (BATCH, SEQ))

losses = []
for step in range(5):
    loss = model(input_ids, image_features, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
