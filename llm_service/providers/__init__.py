"""Provider implementations. Each SDK is imported only when its provider first talks to it."""
