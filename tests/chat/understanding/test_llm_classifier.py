"""The classifier reply's names are the chat's enums: a member missing from the schema could never be read."""
from typing import get_args

import pytest

from chat.types import Complexity, Intent, Scope, Specificity
from docmind.prompts.classifier import ComplexityName, IntentName, ScopeName, SpecificityName


@pytest.mark.parametrize(("names", "enum"), [(IntentName, Intent), (ComplexityName, Complexity),
                                             (SpecificityName, Specificity), (ScopeName, Scope)])
def test_the_reply_schema_names_exactly_the_members_of_each_enum(names, enum):
    assert set(get_args(names)) == {member.value for member in enum}
