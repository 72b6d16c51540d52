import pytest

from library import catalogue, members


@pytest.fixture(autouse=True)
def sample_data():
    catalogue.seed()
    members.seed()


def test_find_book_accepts_both_isbn_forms():
    assert catalogue.find_book("0-14-143951-3").title == "Pride and Prejudice"
    assert catalogue.find_book("978-0-14-143951-8").author == "Jane Austen"


def test_find_book_unknown_title():
    with pytest.raises(KeyError):
        catalogue.find_book("9780306406157")


def test_find_book_invalid_isbn():
    with pytest.raises(ValueError):
        catalogue.find_book("12345")


def test_owned_still_works():
    assert catalogue.owned("0261103571")
    assert not catalogue.owned("9780306406157")
    assert not catalogue.owned("rubbish")


def test_members_keep_their_lookup():
    assert members.lookup("l1").name == "Ada Verhoeven"
    with pytest.raises(KeyError):
        members.lookup("L-0099")
