"""The network namespace fixture (another device) for the remote listener's tests."""

from tests.helpers.netns import another_device

__all__ = ["another_device"]
