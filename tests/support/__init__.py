"""Helpers the test modules share, one module a topic; no test module imports another."""
