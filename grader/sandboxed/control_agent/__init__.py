"""The arena's control agent: the known-good agent the round starts to tell an agent's
repeated failure from the arena's (grader.rounds.play.arena_works)."""
