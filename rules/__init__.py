"""Rules: roofline placement, findings and verdicts. Pure domain logic, no I/O."""
