"""Reporters: render a report document. Each takes the document and returns or writes text."""
