"""The application: its state (vault, provider, conversations, tools), settings, confirmations."""
