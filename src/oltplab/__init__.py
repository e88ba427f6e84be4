"""oltplab: database and storage performance experiments in one tool."""

__version__ = "0.1.0"
