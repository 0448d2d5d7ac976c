"""Each vendor's connection: its SDK or HTTP client, key, base URL, timeout and the one
translation of its errors, shared by that vendor's chat provider and embedder."""
