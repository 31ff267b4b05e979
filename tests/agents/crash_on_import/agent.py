"""Hostile: raises while agent.py is imported. Expected: agent_error at start."""

raise RuntimeError("this agent breaks on import")


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return 0

    def observe_outcome(self, outcome):
        pass
