"""TD3, DDPG and OurDDPG from sfujim/TD3 (actor, critic, target networks, two Adam optimizers, soft
target updates) trained for a few iterations on transitions from gymnasium's Pendulum with random actions."""
import sys, numpy as np, torch, gymnasium as gym
import TD3, DDPG, OurDDPG, utils

env = gym.make('Pendulum-v1')
state_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
max_action = float(env.action_space.high[0])
for name, cls in [('TD3', TD3.TD3), ('DDPG', DDPG.DDPG), ('OurDDPG', OurDDPG.DDPG)]:
    torch.manual_seed(0); np.random.seed(0)
    env.action_space.seed(0)
    state, _ = env.reset(seed=0)
    buffer = utils.ReplayBuffer(state_dim, action_dim)
    policy = cls(state_dim=state_dim, action_dim=action_dim, max_action=max_action)
    for t in range(300):
        action = env.action_space.sample() if t < 200 else policy.select_action(np.array(state))
        next_state, reward, terminated, truncated, _ = env.step(action)
        buffer.add(state, action, next_state, reward, float(terminated))
        state = next_state if not (terminated or truncated) else env.reset()[0]
        if t >= 100:
            policy.train(buffer, 32)
    print(name, 'actor checksum', sum(p.double().sum().item() for p in policy.actor.parameters()),
          'critic target checksum', sum(p.double().sum().item() for p in policy.critic_target.parameters()))
