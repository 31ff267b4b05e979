"""Play: a seat, a game, a session, the smoke test and the field."""
