"""Re-verifying published rounds, appeals' evidence and the grade export."""
