"""CopyNet (AllenNLP's `CopyNetSeq2Seq`) trained with expected risk minimization: the loss is built
from the log-probabilities that the search's step function returns, so backward() has to run through
`_gather_final_log_probs`. That function merges each source token's copy score into the generation
scores with `generation_log_probs.scatter_(-1, source_to_target_slice.unsqueeze(-1), ...)`, in place,
on one of the two views that `log_probs.split(...)` returned from the joint log-softmax. PyTorch
refuses the write ("Output 0 of SplitWithSizes is a view and is being modified inplace.
This view is the output of a function that returns multiple views"); in older releases the same
write corrupted the log-softmax output that backward needs.
Source: https://github.com/allenai/allennlp/pull/2925 ("CopyNet: replace in-place tensor operation
with out-of-place equivalent": "I was trying to implement an Expected Risk Minimization training
regime with the CopyNet model, which uses the result of the beam search to compute the loss. Turns
out there was an in-place op `Tensor.scatter_` that was used in the step function of the search,
making the backwards pass of training break. This just replaces it with `Tensor.scatter`.").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, SRC_LEN, HID, STEPS, BATCH = 12, 5, 16, 4, 3
OOV = 1


class CopyNetDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HID)
        self.cell = nn.GRUCell(HID, HID)
        self.output_generation = nn.Linear(HID, VOCAB)
        self.output_copying = nn.Linear(HID, HID)

    def gather_final_log_probs(self, generation_log_probs, copy_log_probs, source_to_target):
        for i in range(SRC_LEN):
            copy_log_probs_slice = copy_log_probs[:, i]
            source_to_target_slice = source_to_target[:, i]
            copy_log_probs_to_add_mask = (source_to_target_slice != OOV).float()
            copy_log_probs_to_add = copy_log_probs_slice + (copy_log_probs_to_add_mask + 1e-13).log()
            selected_generation_log_probs = generation_log_probs.gather(1, source_to_target_slice.unsqueeze(-1))
            combined_scores = torch.logsumexp(
                torch.cat((selected_generation_log_probs, copy_log_probs_to_add.unsqueeze(-1)), dim=1), dim=1)
            generation_log_probs = generation_log_probs.scatter(
                -1, source_to_target_slice.unsqueeze(-1), combined_scores.unsqueeze(-1))
        return generation_log_probs

    def take_step(self, last_predictions, hidden, encoder_outputs, source_to_target):
        hidden = self.cell(self.embed(last_predictions), hidden)
        generation_scores = self.output_generation(hidden)
        copy_projection = torch.tanh(self.output_copying(encoder_outputs))
        copy_scores = torch.bmm(copy_projection, hidden.unsqueeze(-1)).squeeze(-1)
        all_scores = torch.cat((generation_scores, copy_scores), dim=-1)
        log_probs = F.log_softmax(all_scores, dim=-1)
        generation_log_probs, copy_log_probs = log_probs.split([VOCAB, SRC_LEN], dim=-1)
        return self.gather_final_log_probs(generation_log_probs, copy_log_probs, source_to_target), hidden


decoder = CopyNetDecoder()
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-2)
encoder_outputs = torch.randn(BATCH, SRC_LEN, HID)
source_to_target = torch.randint(1, VOCAB, (BATCH, SRC_LEN))
gold = torch.randint(2, VOCAB, (BATCH, STEPS))

losses = []
for step in range(2):
    hidden = encoder_outputs.mean(dim=1)
    last_predictions = torch.zeros(BATCH, dtype=torch.long)
    sequence_log_prob = torch.zeros(BATCH)
    predictions = []
    for t in range(STEPS):
        final_log_probs, hidden = decoder.take_step(last_predictions, hidden, encoder_outputs, source_to_target)
        last_predictions = final_log_probs.argmax(dim=-1)
        sequence_log_prob = sequence_log_prob + final_log_probs.gather(1, last_predictions.unsqueeze(-1)).squeeze(-1)
        predictions.append(last_predictions)
    # Risk: the fraction of gold tokens the decoded sequence gets wrong.
    risk = (torch.stack(predictions, dim=1) != gold).float().mean(dim=1)
    loss = (risk * sequence_log_prob.exp()).mean() - 0.1 * sequence_log_prob.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in decoder.parameters()]}
