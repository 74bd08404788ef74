# message: Mismatch in shape: grad_output[0] has a shape of torch.Size([6]) and output[0] has a
#   shape of torch.Size([6, 1]).
# code: AD123 (catalogue: grad_outputs_shape)
# set: 5
# trigger: REINFORCE: the policy's log-probabilities of the taken actions are [N, 1] (gathered
#   with an index column) and torch.autograd.backward is given the advantages, shape [N], as
#   grad_tensors
# source: none found; the pattern as users write it
# results: policy
import torch
from torch import nn

torch.manual_seed(0)
policy = nn.Linear(3, 2)
optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
states, actions = torch.randn(6, 3), torch.tensor([[0], [1], [1], [0], [1], [0]])
returns = torch.tensor([1.0, 0.5, -0.2, 0.8, 0.1, -0.5])
advantages = (returns - returns.mean()) / 6
log_probs = torch.log_softmax(policy(states), dim=1).gather(1, actions)
optimizer.zero_grad()
torch.autograd.backward(log_probs, grad_tensors=-advantages.unsqueeze(1))  # PRIMARY
optimizer.step()
