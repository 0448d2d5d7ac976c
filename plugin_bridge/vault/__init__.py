"""The vault layer: safe note I/O, the live search index, and the model's vault tools.

Knows nothing of WebSockets; the bridge calls it.
"""
