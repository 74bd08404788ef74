"""RLHF reward-model training with TorchRL's `GPT2RewardModel.compute_reward_loss`: for each
chosen/rejected pair the loss takes the per-token rewards from the first token where the two
answers differ to the end of the longer answer, and pairs whose two answers are identical (no
preference signal) are skipped, as the earlier fix for the crash on such pairs made them. The
summed pairwise loss is still divided by the batch size, so in a batch with skipped pairs the
loss, and every gradient of the reward model, is scaled down by (valid pairs / batch size), a
different factor from batch to batch. No error. The pull request: "The identical-sequence fix
correctly skipped pairs with no preference signal, but the final loss still divided by the
original batch size. Mixed batches with skipped samples therefore silently scaled the loss and
gradients down"; the maintainer: "LGTM" (merged: divide by the number of valid pairs).
Source: https://github.com/pytorch/rl/pull/3886
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, PAD_ID, SEQ = 20, 0, 8


class GPT2RewardModel(nn.Module):
    def __init__(self, n_embd=16):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, n_embd)
        self.transformer = nn.GRU(n_embd, n_embd, batch_first=True)
        self.lm_head = nn.Linear(n_embd, 1, bias=False)
        self.PAD_ID = PAD_ID

    def forward(self, input_ids):
        hidden, _ = self.transformer(self.wte(input_ids))
        return self.lm_head(hidden).squeeze(-1)

    def compute_reward_loss(self, chosen_ids, rejected_ids):
        chosen_rewards = self(chosen_ids)
        rejected_rewards = self(rejected_ids)
        batch_size = chosen_ids.shape[0]
        loss = chosen_rewards.new_zeros(())
        num_valid = 0
        for i in range(batch_size):
            divergence = (chosen_ids[i] != rejected_ids[i]).nonzero(as_tuple=False)
            if divergence.numel() == 0:
                # identical answers carry no preference signal
                continue
            num_valid += 1
            divergence_ind = divergence[0].item()
            c_pad = (chosen_ids[i] == self.PAD_ID).nonzero()
            c_ind = c_pad[0].item() if len(c_pad) > 0 else chosen_ids.shape[1]
            r_pad = (rejected_ids[i] == self.PAD_ID).nonzero()
            r_ind = r_pad[0].item() if len(r_pad) > 0 else rejected_ids.shape[1]
            end_ind = max(c_ind, r_ind)
            c_truncated = chosen_rewards[i][divergence_ind:end_ind]
            r_truncated = rejected_rewards[i][divergence_ind:end_ind]
            loss = loss + -F.logsigmoid(c_truncated - r_truncated).mean()
        loss = loss / max(num_valid, 1)
        return loss


def make_pairs(batch_size=6, identical=(1, 4)):
    chosen = torch.randint(1, VOCAB, (batch_size, SEQ))
    rejected = chosen.clone()
    for i in range(batch_size):
        if i in identical:
            continue
        start = int(torch.randint(2, SEQ - 2, ()))
        rejected[i, start:] = torch.randint(1, VOCAB, (SEQ - start,))
        cut = int(torch.randint(SEQ - 2, SEQ + 1, ()))
        rejected[i, cut:] = PAD_ID
    return chosen, rejected


model = GPT2RewardModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
batches = [make_pairs(identical=(1, 4)), make_pairs(identical=()), make_pairs(identical=(0, 2, 5))]

losses = []
for epoch in range(2):
    for chosen_ids, rejected_ids in batches:
        optimizer.zero_grad()
        loss = model.compute_reward_loss(chosen_ids, rejected_ids)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

result = {
    "losses": torch.tensor(losses),
    "params": [p.detach().clone() for p in model.parameters()],
}
