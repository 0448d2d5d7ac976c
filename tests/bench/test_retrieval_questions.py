"""The retrieval benchmark's labelled questions: enough of them, none using its target note's
title words, every target a real note of the shared English vault."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT, SHARED_VAULTS


def questions_module() -> ModuleType:
    path = REPO_ROOT / "bench" / "retrieval_questions.py"
    spec = importlib.util.spec_from_file_location("retrieval_questions", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_at_least_forty_questions_without_their_targets_title_words() -> None:
    """The set is large enough and check_questions finds no title word in any question."""
    module = questions_module()
    assert len(module.QUESTIONS) >= 40
    assert module.check_questions() == []
    assert module.title_words("Plugins/Word count.md") == {"word", "count"}


@pytest.mark.shared_vault
def test_every_expected_note_exists_in_the_english_vault() -> None:
    """Each expected path names a note of ../shared/vaults/obsidian-help/en."""
    vault = SHARED_VAULTS / "en"
    if not vault.is_dir():
        pytest.skip(f"the shared English vault is not at {vault}")
    missing = [
        path
        for _, expected in questions_module().QUESTIONS
        for path in expected
        if not (vault / path).is_file()
    ]
    assert missing == []


def test_the_realistic_set_has_every_kind_in_four_languages() -> None:
    """At least 80 questions: 40 in English, 10 each in German, Russian and Chinese, and
    keyword queries, natural questions, paraphrases and typos among them."""
    module = questions_module()
    realistic = module.REALISTIC
    count = {lang: sum(q[0] == lang for q in realistic) for lang in ("en", "de", "ru", "zh")}
    assert len(realistic) >= 80 and count["en"] >= 40
    assert min(count["de"], count["ru"], count["zh"]) >= 10
    assert {q[1] for q in realistic} == set(module.KINDS)


@pytest.mark.shared_vault
def test_every_realistic_expected_note_exists() -> None:
    if not (SHARED_VAULTS / "en").is_dir():
        pytest.skip(f"the shared vaults are not at {SHARED_VAULTS}")
    assert questions_module().check_realistic(SHARED_VAULTS) == []
