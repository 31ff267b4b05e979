"""The code that runs inside the sandbox: the runner, its wire, its syscall filter, the control agent."""
