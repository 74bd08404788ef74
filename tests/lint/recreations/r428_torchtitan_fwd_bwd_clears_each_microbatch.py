"""torchtitan's RL trainer exposes `forward_backward(batch)` and
`optim_step()`, called by a controller once per micro-batch and once per
update.  `forward_backward` began with `self.optimizers.zero_grad()`, so each
micro-batch cleared the gradients the earlier ones had accumulated: the step
applied the last micro-batch only, "i.e. no accumulation".  Nothing raises.
The fix clears in `optim_step`, after the step.
Buggy line: `self.optimizer.zero_grad()` in `RLTrainer.forward_backward`.
Source: https://github.com/pytorch/torchtitan/pull/3575"""
import torch
import torch.nn as nn


class RLTrainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def forward_backward(self, batch, num_microbatches):
        self.optimizer.zero_grad()  # expect: ADL018
        logprobs = torch.log_softmax(self.model(batch["obs"]), dim=-1)
        chosen = logprobs.gather(1, batch["actions"]).squeeze(1)
        loss = -(chosen * batch["advantages"]).mean() / num_microbatches
        loss.backward()
        return loss.item()

    def optim_step(self):
        self.optimizer.step()


def controller(trainer, microbatches):
    for mb in microbatches:
        trainer.forward_backward(mb, len(microbatches))
    trainer.optim_step()


def bug_shows():
    """The weights move by the last micro-batch's gradient only."""
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    mbs = [{"obs": torch.randn(4, 3), "actions": torch.randint(0, 2, (4, 1)),
            "advantages": torch.randn(4)} for _ in range(3)]
    reference = nn.Linear(3, 2)
    reference.load_state_dict(model.state_dict())
    for mb in mbs:
        lp = torch.log_softmax(reference(mb["obs"]), dim=-1).gather(1, mb["actions"]).squeeze(1)
        (-(lp * mb["advantages"]).mean() / 3).backward()
    wanted = reference.weight.detach() - 0.1 * reference.weight.grad
    controller(RLTrainer(model), mbs)
    return not torch.allclose(model.weight, wanted)
