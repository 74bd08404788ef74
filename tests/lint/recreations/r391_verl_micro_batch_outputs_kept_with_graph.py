"""verl's Megatron engine post-processes each micro-batch's logits into the
loss and a `model_output` dictionary (log-probabilities, entropy) and keeps
the dictionaries for the whole mini-batch; the tensors in them were returned
still attached to the graph, so each micro-batch's graph (with its received
activations) stayed alive until the mini-batch ended: memory on the last
pipeline stage grew by tens of GiB.  Nothing raises.  The fix detaches the
model output before returning it.
Buggy line: the `return loss, model_output` of
`EngineWithLMHead.postprocess_micro_batch`.
ADL028 reports the caller's keeping line (marked), the function's `return` as related.
Source: https://github.com/verl-project/verl/pull/7874"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class EngineWithLMHead:
    def __init__(self, module, lr=1e-3):
        self.module = module
        self.optimizer = torch.optim.AdamW(module.parameters(), lr=lr)

    def postprocess_micro_batch(self, logits, micro_batch):
        log_probs_all = F.log_softmax(logits, dim=-1)
        log_probs = log_probs_all.gather(-1, micro_batch["responses"].unsqueeze(-1)).squeeze(-1)
        entropy = -(log_probs_all.exp() * log_probs_all).sum(-1)
        loss = -(log_probs * micro_batch["advantages"]).mean()
        model_output = {"log_probs": log_probs, "entropy": entropy}
        return loss, model_output

    def forward_backward_batch(self, micro_batches):
        forward_data_store = []
        self.optimizer.zero_grad()
        for micro_batch in micro_batches:
            logits = self.module(micro_batch["input_ids"])
            loss, model_output = self.postprocess_micro_batch(logits, micro_batch)
            (loss / len(micro_batches)).backward()
            forward_data_store.append(model_output)  # expect: ADL028
        self.optimizer.step()
        return forward_data_store


def bug_shows():
    """The kept outputs of every micro-batch still hold their graphs."""
    torch.manual_seed(0)
    module = nn.Sequential(nn.Embedding(11, 8), nn.Tanh(), nn.Linear(8, 11))
    engine = EngineWithLMHead(module)
    micro_batches = [{"input_ids": torch.randint(0, 11, (2, 4)), "responses": torch.randint(0, 11, (2, 4)),
                      "advantages": torch.randn(2, 4)} for _ in range(3)]
    store = engine.forward_backward_batch(micro_batches)
    return all(out["entropy"].grad_fn is not None for out in store)
