"""Triage of pasted text: recognising tool outputs, known messages and named GPUs in what a user
pasted into a ticket, so the rules can judge it as they judge a node."""
