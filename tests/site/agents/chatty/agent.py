"""A fixture agent for the site's leak test: plays a random legal move and writes a canary to
stderr on every call. Agents' output is never published, so the canary must not reach _site/."""

import sys

import numpy as np

CANARY = "SITE-LEAK-CANARY-7d41e0"


class Agent:
    def prepare(self, env_info):
        self.rng = np.random.default_rng(env_info["rows"] * 31 + env_info["cols"])
        print(f"{CANARY} prepare", file=sys.stderr)

    def act(self, obs, action_mask):
        print(f"{CANARY} act", file=sys.stderr)
        return int(self.rng.choice(np.flatnonzero(action_mask)))

    def observe_outcome(self, outcome):
        print(f"{CANARY} outcome {outcome}", file=sys.stderr)
