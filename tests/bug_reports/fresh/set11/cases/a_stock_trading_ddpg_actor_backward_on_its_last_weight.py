"""DDPG for stock trading (JoshuaWu1997/PyTorch-DDPG-Stock-Trading, DDPG.py `train_on_batch` and
actor_critic.py): the critic's update returns `torch.mean(self.critic_weights[0].grad[:,
:self.action_dim], dim=0)`, the critic's weight gradient for its action inputs averaged over hidden
units, and the actor "trains" by `self.actor_weights[-1].backward(-loss_grad)`. Calling backward()
on a leaf parameter only writes that tensor into the parameter's own `.grad`: the actor's last
bias moves by a quantity that is not a policy gradient, and every other actor weight keeps its
initial value, so the policy never follows the critic (no error, no warning).
Source: https://github.com/JoshuaWu1997/PyTorch-DDPG-Stock-Trading/issues/2 ("The two gradients need
to be calculated separately, because their loss functions are different ... for actor: actor_loss =
-self.critic_network.critic(self.actor_network.actor_action(state_batch), state_batch).mean();
actor_loss.backward()").
expect: silent"""
import torch

torch.manual_seed(0)

STATE_DIM, ACTION_DIM, HIDDEN, GAMMA = 12, 4, 16, 0.9


class ActorNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.nn = torch.nn.Sequential(torch.nn.Linear(STATE_DIM, HIDDEN), torch.nn.ReLU(),
                                      torch.nn.Linear(HIDDEN, ACTION_DIM), torch.nn.Softmax(dim=1))

    def forward(self, x):
        return self.nn(x)


class CriticNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.nn1 = torch.nn.Sequential(torch.nn.Linear(STATE_DIM, HIDDEN), torch.nn.ReLU())
        self.nn2 = torch.nn.Sequential(torch.nn.Linear(HIDDEN + ACTION_DIM, HIDDEN), torch.nn.Tanh(),
                                       torch.nn.Linear(HIDDEN, 1))

    def forward(self, a, x):
        return self.nn2(torch.cat((a, self.nn1(x)), 1))


class Actor:
    def __init__(self):
        self.actor, self.target = ActorNet(), ActorNet()
        self.target.load_state_dict(self.actor.state_dict())
        self.actor_weights = [params for params in self.actor.parameters()]
        self.optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-2)

    def train(self, loss_grad):
        self.optimizer.zero_grad()
        self.actor_weights[-1].backward(-loss_grad)
        self.optimizer.step()


class Critic:
    def __init__(self):
        self.critic, self.target = CriticNet(), CriticNet()
        self.target.load_state_dict(self.critic.state_dict())
        self.critic_weights = [params for params in self.critic.parameters()]
        self.optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-2)

    def train(self, y_batch, action_batch, state_batch):
        y_pred = self.critic(action_batch, state_batch)
        self.loss = torch.nn.functional.mse_loss(y_pred, y_batch)
        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()
        return torch.mean(self.critic.nn2[0].weight.grad[:, :ACTION_DIM], dim=0)


actor_network, critic_network = Actor(), Critic()

# A fixed replay batch of (state, action, reward, next_state) transitions.
state_batch = torch.randn(16, STATE_DIM)
action_batch = torch.softmax(torch.randn(16, ACTION_DIM), dim=1)
reward_batch = torch.randn(16, 1)
next_state_batch = torch.randn(16, STATE_DIM)

history = []
for step in range(5):
    with torch.no_grad():
        next_action_batch = actor_network.target(next_state_batch)
        y_batch = reward_batch + GAMMA * critic_network.target(next_action_batch, next_state_batch)
    actor_network.train(critic_network.train(y_batch, action_batch, state_batch))
    with torch.no_grad():
        policy_value = critic_network.critic(actor_network.actor(state_batch), state_batch).mean()
    history.append((critic_network.loss.detach(), policy_value))

result = {"history": history, "actor": [p.detach().clone() for p in actor_network.actor.parameters()],
          "critic": [p.detach().clone() for p in critic_network.critic.parameters()]}
