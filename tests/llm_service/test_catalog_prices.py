"""What the catalog adds to a listed model: a price the API gives wins over the price list (an
OpenRouter-sized list prices its own models); none from either stays unknown."""

from __future__ import annotations

from llm_service.catalog import ModelInfo, described


def test_a_price_the_api_gives_wins_over_the_price_list() -> None:
    listed = described(
        ModelInfo("acme/model-1", input_price_per_mtok=1.5, output_price_per_mtok=2.5)
    )
    assert (listed.input_price_per_mtok, listed.output_price_per_mtok) == (1.5, 2.5)


def test_a_model_priced_nowhere_stays_unknown() -> None:
    listed = described(ModelInfo("acme/unlisted-model"), "openai")
    assert (listed.input_price_per_mtok, listed.output_price_per_mtok) == (None, None)
