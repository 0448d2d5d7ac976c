"""The vault layer: safe note I/O, the live search index, and the model's vault tools.

Knows nothing of WebSockets; the bridge calls it. Import what you need from its modules
(``plugin_bridge.vault.vault.Vault``, ``.notes.NoteStore``, ``.tools.register_vault_tools``…):
the package itself loads nothing, which keeps ``serve``'s start-up path short.
"""
