"""The vault layer: safe note I/O, the live search index, and semantic search.

Knows nothing of WebSockets; the bridge calls it through ``vault.Vault`` (its one search API:
``Vault.search`` and ``Vault.related``). Three subpackages over shared root modules (``schema``,
``files``, ``paths``, ``errors``, ``datadir``, ``door``), which never import them back: ``notes``
(``notes.store.NoteStore``…), ``lexical`` (the FTS5 index and its reads) and ``semantic``
(vectors, hybrid search). Import what you need from their modules: the packages themselves
load nothing, which keeps ``serve``'s start-up path short. The model's vault tools
are ``plugin_bridge.app.vault_tools``.
"""
