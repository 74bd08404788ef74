"""Fine-tuning OpenAI GPT on RocStories (`run_openai_gpt.py`): the training
loop computes the LM and multiple-choice losses, calls `loss.backward()` and
`optimizer.step()`, and never zeroes the gradients, so every step applies the
sum of the gradients of all batches seen so far ("Oh that's a mistake
indeed"; fixed by adding `optimizer.zero_grad()`).  Silent; `bug_shows()`
shows the gradient after the second batch differing from that batch's own.
Source: https://github.com/huggingface/transformers/issues/340"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer


class OpenAIAdam(Optimizer):
    """Adam with weight decay fix, as in the OpenAI GPT fine-tuning code."""

    def __init__(self, params, lr, b1=0.9, b2=0.999, e=1e-8, weight_decay=0.0):
        defaults = dict(lr=lr, b1=b1, b2=b2, e=e, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p)
                    state['exp_avg_sq'] = torch.zeros_like(p)
                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                state['step'] += 1
                exp_avg.mul_(group['b1']).add_(p.grad, alpha=1 - group['b1'])
                exp_avg_sq.mul_(group['b2']).addcmul_(p.grad, p.grad, value=1 - group['b2'])
                denom = exp_avg_sq.sqrt().add_(group['e'])
                bias_correction1 = 1 - group['b1'] ** state['step']
                bias_correction2 = 1 - group['b2'] ** state['step']
                step_size = group['lr'] * math.sqrt(bias_correction2) / bias_correction1
                p.addcdiv_(exp_avg, denom, value=-step_size)
                if group['weight_decay'] > 0:
                    p.add_(p, alpha=-group['lr'] * group['weight_decay'])


class OpenAIGPTDoubleHeadsModel(nn.Module):
    def __init__(self, vocab_size=20, n_embd=16):
        super().__init__()
        self.tokens_embed = nn.Embedding(vocab_size, n_embd)
        self.h = nn.Sequential(nn.Linear(n_embd, n_embd), nn.GELU(), nn.LayerNorm(n_embd))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.multiple_choice_head = nn.Linear(n_embd, 1)

    def forward(self, input_ids, mc_token_ids, lm_labels=None, mc_labels=None):
        hidden_states = self.h(self.tokens_embed(input_ids))
        lm_logits = self.lm_head(hidden_states)
        mc_hidden = hidden_states.gather(2, mc_token_ids[..., None, None].expand(-1, -1, 1, hidden_states.size(-1)))
        mc_logits = self.multiple_choice_head(mc_hidden).squeeze(-1).squeeze(-1)
        if lm_labels is None:
            return lm_logits, mc_logits
        lm_loss = F.cross_entropy(lm_logits.view(-1, lm_logits.size(-1)), lm_labels.view(-1))
        mc_loss = F.cross_entropy(mc_logits, mc_labels)
        return lm_loss, mc_loss


def make_optimizer(model, lr=6.25e-5):
    param_optimizer = list(model.named_parameters())
    no_decay = ['bias', 'LayerNorm.bias', 'LayerNorm.weight']
    optimizer_grouped_parameters = [
        {'params': [p for n, p in param_optimizer if not any(nd in n for nd in no_decay)], 'weight_decay': 0.01},
        {'params': [p for n, p in param_optimizer if any(nd in n for nd in no_decay)], 'weight_decay': 0.0}]
    return OpenAIAdam(optimizer_grouped_parameters, lr=lr)


def train(model, optimizer, train_dataloader, lm_coef=0.9, num_train_epochs=1):
    model.train()
    grads = []
    for _ in range(num_train_epochs):
        tr_loss = 0
        for step, batch in enumerate(train_dataloader):
            input_ids, mc_token_ids, lm_labels, mc_labels = batch
            losses = model(input_ids, mc_token_ids, lm_labels, mc_labels)
            loss = lm_coef * losses[0] + losses[1]
            loss.backward()
            optimizer.step()  # expect: ADL018
            tr_loss += loss.item()
            grads.append(model.multiple_choice_head.weight.grad.clone())
    return grads


def bug_shows():
    """With a learning rate of 0 and the same batch twice, the weights do not
    move, so a correct loop sees the same gradient twice; this one sees it
    doubled on the second step."""
    torch.manual_seed(0)
    batch = (torch.randint(0, 20, (2, 2, 5)), torch.randint(0, 5, (2, 2)),
             torch.randint(0, 20, (2, 2, 5)), torch.randint(0, 2, (2,)))
    model = OpenAIGPTDoubleHeadsModel()
    grads = train(model, make_optimizer(model, lr=0.0), [batch, batch])
    return torch.allclose(grads[1], 2 * grads[0]) and not torch.allclose(grads[1], grads[0])
