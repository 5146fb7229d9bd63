"""`{{ name }}`: every quantity computes, pages get the computed text, and an unknown name is an error at its line."""

import markdown
import pytest

from build_scripts.markdown._blocks import SOURCE_PATH, MarkdownSourceError
from build_scripts.quantities import evaluate, number, quantities, vector
from explainer import proportional_recurrence

EXTENSIONS = ["build_scripts.markdown.quantities", "pymdownx.superfences"]


def convert(text: str) -> str:
    return markdown.markdown(text, extensions=EXTENSIONS)


def test_every_quantity_computes_to_text():
    known = quantities()
    assert known
    for name in known:
        assert evaluate(name).strip(), name


def test_a_quantity_in_prose_is_replaced_by_its_computed_text_but_not_in_code():
    compound = number(proportional_recurrence(1.0, 0.1, 16)[-1], 3)
    html = convert("After 16 layers: {{ recurrence.compound_16 }}.\n\n`{{ recurrence.compound_16 }}`\n\n"
                   "```\n{{ recurrence.compound_16 }}\n```\n")
    assert f"After 16 layers: {compound}." in html
    assert html.count("{{ recurrence.compound_16 }}") == 2


def test_an_unknown_quantity_names_its_line_and_the_closest_name():
    token = SOURCE_PATH.set("docs/page.md")
    try:
        with pytest.raises(MarkdownSourceError) as caught:
            convert("# T\n\nText {{ recurrence.compund_16 }}.\n")
    finally:
        SOURCE_PATH.reset(token)
    assert str(caught.value) == ("docs/page.md:3: unknown quantity 'recurrence.compund_16' "
                                 "(did you mean 'recurrence.compound_16'?)")


def test_numbers_print_with_a_true_minus_and_vectors_without_trailing_zeros():
    assert number(-2.4, 1) == "−2.4" and number(-0.0001, 2) == "0.00"
    assert vector([1.8, 2.4, -3.0], 3) == "[1.8, 2.4, −3]"


def test_the_largest_bfloat16_is_float32s_range_with_8_bits_of_significand():
    from build_scripts.quantities.ablation_lesson import bfloat16_max

    assert bfloat16_max() == (2 - 2**-7) * 2.0**127  # 1.1111111 (binary) × 2¹²⁷, the format's definition
    assert evaluate("ablation.bfloat16_max") == "3.4 × 10³⁸"
