"""Scenarios: experiments made of several timed phases, each recorded as one run."""
