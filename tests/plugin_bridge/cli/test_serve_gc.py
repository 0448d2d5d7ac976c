"""serve's collector tuning: start-up objects frozen, young collections rarer."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from plugin_bridge.cli.serving import GC_GEN0_THRESHOLD, tune_gc


@pytest.fixture
def _restore_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("_restore_gc")
def test_tune_gc_freezes_what_is_loaded_and_raises_the_young_threshold() -> None:
    """After tune_gc the loaded objects are in the permanent generation and collections of
    the young generation wait for 50,000 allocations; the older thresholds are kept."""
    older = gc.get_threshold()[1:]
    gc.unfreeze()
    tune_gc()
    assert gc.get_freeze_count() > 10_000
    assert gc.get_threshold() == (GC_GEN0_THRESHOLD, *older)
