# helper module of replay_buffer_push_detaches_state_in_place.py (a held-out variant)


class ReplayBuffer:
    """Keeps encoded states for later updates, without their graph."""

    def __init__(self):
        self.states = []

    def push(self, state):
        self.states.append(state.detach())  # PRIMARY
