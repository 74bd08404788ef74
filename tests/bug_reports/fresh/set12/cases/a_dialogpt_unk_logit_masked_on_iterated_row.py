"""A DialoGPT-style dialogue model fine-tuned with a policy-gradient reward (responses are sampled,
scored, and the sampled tokens' log-probabilities are backpropagated, so decoding runs with
gradients on). The decoding loop walks over the batch's next-token logits with
`for next_token_logit in logits:` and bans the unknown token on each row in place,
`next_token_logit[UNK] = -float('Inf')`. Iterating over a tensor unbinds it, and the rows are views
from a function that returns several views, so the write raises "Output 0 of Select is a view and
is being modified inplace. This view is the output of a function that returns multiple views. Such
functions do not allow the output views to be modified inplace" (UnbindBackward in older releases).
Source: https://github.com/microsoft/DialoGPT/issues/57 ("next_token_logit[tokenizer.convert_tokens_to_ids('[UNK]')]
= -float('Inf')": "RuntimeError: Output 0 of UnbindBackward is a view and is being modified inplace");
the correct version masks the row out of place, `next_token_logit.masked_fill(...)`.
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HID, BATCH, PROMPT, RESPONSE = 20, 16, 4, 3, 5
UNK = 3


class TinyDialogueLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HID)
        self.rnn = nn.GRU(HID, HID, batch_first=True)
        self.lm_head = nn.Linear(HID, VOCAB)

    def forward(self, input_ids):
        hidden, _ = self.rnn(self.embed(input_ids))
        return self.lm_head(hidden)


def reward(tokens):
    # Stand-in for a response scorer: longer distinct responses score higher.
    return torch.tensor([len(set(row.tolist())) / RESPONSE for row in tokens])


model = TinyDialogueLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
prompts = torch.randint(4, VOCAB, (BATCH, PROMPT))

losses = []
for step in range(2):
    generator = torch.Generator().manual_seed(step)
    input_ids = prompts
    sampled_log_probs = []
    for t in range(RESPONSE):
        logits = model(input_ids)[:, -1, :]
        rows = []
        for next_token_logit in logits:
            next_token_logit[UNK] = -float('Inf')
            rows.append(next_token_logit)
        filtered = torch.stack(rows)
        log_probs = F.log_softmax(filtered, dim=-1)
        next_token = torch.multinomial(log_probs.exp().detach(), 1, generator=generator)
        sampled_log_probs.append(log_probs.gather(1, next_token).squeeze(1))
        input_ids = torch.cat([input_ids, next_token], dim=1)
    scores = reward(input_ids[:, PROMPT:])
    loss = -(scores * torch.stack(sampled_log_probs, dim=1).sum(dim=1)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
