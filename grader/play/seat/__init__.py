"""The parts an `AgentHandle` (grader/play/agent_handle.py, one seat of the round) is made of.

- `transport`: how requests reach the agent and replies come back: the wire to a runner in a
  sandbox (`PipeTransport`), or calls on a trusted object in this process (`InProcessTransport`);
  each keeps the agent's output;
- `clock`: the session's wall clock, its ceiling over the environment and the pauses while
  the round plays other entrants;
- `ledger`: what the session used: act time per phase (the pace), time in the other calls,
  CPU time against the share.

The handle composes them and holds the policy: which reply is a fault, and of what kind.
"""
