"""Hostile: its act raises an exception whose __str__ raises in turn (so formatting the
exception, as the runner's error report does, raises a second time).

Expected: agent_error naming the exception's class and saying its message cannot be shown.
"""


class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no text for you")


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        raise Unprintable()

    def observe_outcome(self, outcome):
        pass
