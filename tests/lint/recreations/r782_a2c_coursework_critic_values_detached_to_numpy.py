"""RLCoursework, `a2c/main.py`: a continuous-action A2C whose `ActorCritic` module holds the actor
trunk, the mean and standard-deviation heads and a separate critic, all under one Adam optimizer
(`self.optimizer`).  While acting, `A2C.main` stores each step's value as
`Qvalue.detach().numpy()`, and `updateNetwork` rebuilds them with
`QValues = torch.FloatTensor(np.array(QValues))` before computing `advantages = returns - QValues`
and `criticLoss = (0.5 * advantages.pow(2)).mean()`.  The critic's outputs never reach the loss:
the summed `actorCriticLoss.backward()` trains the actor only, and the critic keeps its initial
weights.  (The entropies are rebuilt the same way, `torch.tensor(entropies)`.)
Re-created in my own words with the repository's structure: `ActorCritic.forward(state)`
returning `(means, stdDevs, Qvalue)`, `A2C.chooseAction`, `A2C.updateNetwork(QValues, rewards,
probabilities, entropies, terminateds)` and the episode loop of `A2C.main`, on a small stand-in
environment.
Nothing raises: `bug_shows()` shows the critic's weights unchanged after an update.
Source: https://github.com/MBr2950/RLCoursework/blob/f7d6eb21a6e77cffcc22fedb1f472e39db9d2539/a2c/main.py"""
import numpy as np
import torch
from torch import nn
from torch.optim import Adam


class ActorCritic(nn.Module):
    def __init__(self, inputDims, outputDims):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(inputDims, 16), nn.ReLU(), nn.Linear(16, 8))
        self.critic = nn.Sequential(nn.Linear(inputDims, 16), nn.ReLU(), nn.Linear(16, 1))
        self.modelMean = nn.Sequential(nn.Linear(8, outputDims))
        self.modelStdDev = nn.Sequential(nn.Linear(8, outputDims))
        self.optimizer = Adam(self.parameters(), lr=0.002)
        self.double()

    def forward(self, state):
        x = self.model(torch.tensor(state))
        means = self.modelMean(x)
        stdDevs = torch.log(1 + torch.exp(self.modelStdDev(x))) + 1e-6
        Qvalue = self.critic(torch.tensor(state))
        return means, stdDevs, Qvalue


class Env:
    def reset(self, seed=0):
        self.t = 0
        return np.zeros(3), {}

    def step(self, action):
        self.t += 1
        return np.full(3, 0.1 * self.t), -float(np.sum(np.square(action))), self.t >= 4, False, {}


class A2C:
    def __init__(self, inputDims=3, outputDims=1):
        self.outputDims = outputDims
        self.actorCritic = ActorCritic(inputDims, outputDims)
        self.gamma = 0.9

    def chooseAction(self, means, stdDevs):
        distribution = torch.distributions.Normal(means, stdDevs)
        action = distribution.sample()
        return action, distribution.log_prob(action), distribution.entropy()

    def updateNetwork(self, QValues, rewards, probabilities, entropies, terminateds):
        returns = np.zeros_like(QValues)
        myReturn = 0
        for t in reversed(range(len(rewards))):
            myReturn = rewards[t] + self.gamma * myReturn
            returns[t] = myReturn

        QValues = torch.FloatTensor(np.array(QValues))  # missed: ADL034, values cut to NumPy while acting, rebuilt in another method; the summed loss still trains the actor
        returns = torch.FloatTensor(returns)
        probabilities = torch.stack(probabilities)
        entropies = torch.tensor(entropies)  # missed: ADL009, a list parameter of entropy tensors rebuilt by torch.tensor

        advantages = returns - QValues
        actorLoss = (-probabilities * advantages).mean()
        criticLoss = (0.5 * advantages.pow(2)).mean()
        entropy = entropies.mean()
        actorCriticLoss = actorLoss + criticLoss + 0.001 * entropy

        self.actorCritic.optimizer.zero_grad()
        actorCriticLoss.backward()
        self.actorCritic.optimizer.step()

    def main(self, env, episodes=1):
        for episode in range(episodes):
            probabilities, entropies, QValues, rewards, terminateds = [], [], [], [], []
            state, _ = env.reset(seed=0)
            terminated = truncated = False
            while not terminated and not truncated:
                means, stdDevs, Qvalue = self.actorCritic.forward(state)
                Qvalue = Qvalue.detach().numpy()
                action, probability, entropy = self.chooseAction(means, stdDevs)
                newState, reward, terminated, truncated, _ = env.step(action.numpy())
                rewards.append(reward)
                QValues.append(Qvalue)
                probabilities.append(probability)
                entropies.append(entropy)
                terminateds.append(terminated)
                state = newState
            self.updateNetwork(QValues, rewards, probabilities, entropies, terminateds)


def run(agent=None):
    torch.manual_seed(0)
    agent = agent or A2C()
    agent.main(Env())
    return agent


def bug_shows():
    torch.manual_seed(0)
    agent = A2C()
    before = [p.detach().clone() for p in agent.actorCritic.critic.parameters()]
    run(agent)
    return all(torch.equal(b, p) for b, p in zip(before, agent.actorCritic.critic.parameters()))
