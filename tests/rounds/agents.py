"""In-process test agents for whole-round tests (trusted code; run through AgentHandle.in_process).

Each is deterministic (its randomness is seeded in prepare) so a round of them replays to the
same bytes whatever the number of workers or shards.
"""

from __future__ import annotations

import numpy as np

OUTPUT_MARKER = "AGENT-OUTPUT-7f3c2a91"


class Learner:
    """Random legal moves; checks every message it is given against the protocol."""

    def prepare(self, env_info):
        assert set(env_info) == {"rows", "cols", "obstacles", "interaction_budget", "env_index", "env_count"}, env_info
        assert env_info["env_index"] == 0 and env_info["env_count"] == 1
        self.rng = np.random.default_rng(env_info["rows"] * 100 + env_info["cols"])
        self.budget = env_info["interaction_budget"]
        self.outcomes = 0
        self.frozen = False

    def act(self, obs, action_mask):
        assert obs.dtype == np.float32 and action_mask.dtype == np.int8
        return int(self.rng.choice(np.flatnonzero(action_mask)))

    def observe_outcome(self, outcome):
        assert not self.frozen, "an outcome after freeze"
        assert set(outcome) == {"winner", "black_discs", "white_discs", "your_color"}, outcome
        assert outcome["your_color"] == "both"
        self.outcomes += 1
        assert self.outcomes <= self.budget, "more outcomes than the budget"

    def freeze(self):
        assert self.outcomes == self.budget, f"frozen after {self.outcomes} of {self.budget} outcomes"
        self.frozen = True


class FirstLegal(Learner):
    """Always the lowest legal cell."""

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])


class LastLegal(Learner):
    """Always the highest legal cell."""

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


class Chatty(Learner):
    """Prints a marker (its output must reach only the staff record)."""

    def act(self, obs, action_mask):
        print(OUTPUT_MARKER)
        return super().act(obs, action_mask)


class CrashLate(Learner):
    """Raises on its 40th act: an agent_error somewhere in its budget."""

    def prepare(self, env_info):
        super().prepare(env_info)
        self.acts = 0

    def act(self, obs, action_mask):
        self.acts += 1
        if self.acts == 40:
            raise ZeroDivisionError("deliberate")
        return super().act(obs, action_mask)


class CrashOnPrepare:
    def prepare(self, env_info):
        raise RuntimeError("deliberate")

    def act(self, obs, action_mask):
        return 0

    def observe_outcome(self, outcome):
        pass


class NeverLegal(Learner):
    """Always plays an occupied centre cell: never legal, forfeits the environment."""

    def act(self, obs, action_mask):
        return int(np.flatnonzero(obs[0].ravel())[0])


class OverPace(Learner):
    """Plays random legal moves at one and a half times the 6x8 pace: under the early stop
    (3x), over the pace itself, which is judged at the end of its session."""

    def act(self, obs, action_mask):
        import time

        time.sleep(0.0072)  # the 6x8 pace is 48 cells x 0.1 ms = 4.8 ms
        return super().act(obs, action_mask)
