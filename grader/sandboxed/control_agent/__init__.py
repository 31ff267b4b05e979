"""The arena's control agent: a known-good agent that tells an agent's failure from the arena's.

The round starts it when an agent fails again (grader.rounds.play.arena_works).
"""
