import pytest

from roombook import BookingConflict, RoomCalendar, Slot


def test_afternoon_meetings_can_share_a_boundary():
    cal = RoomCalendar(["orion"])
    cal.book("orion", "13:00-14:30", owner="dee")
    cal.book("orion", "14:30-15:00", owner="eli")
    assert [str(b.slot) for b in cal.bookings("orion")] == ["13:00-14:30", "14:30-15:00"]


def test_booking_that_ends_when_the_next_one_starts():
    cal = RoomCalendar(["orion"])
    cal.book("orion", "11:00-12:00", owner="fay")
    cal.book("orion", "10:15-11:00", owner="gus")
    assert [b.owner for b in cal.bookings("orion")] == ["gus", "fay"]


def test_adjacent_slots_built_from_minutes():
    assert not Slot(0, 60).overlaps(Slot(60, 120))
    assert not Slot(1380, 1440).overlaps(Slot(1000, 1380))


def test_one_shared_minute_is_still_a_conflict():
    assert Slot.parse("09:00-10:01").overlaps(Slot.parse("10:00-11:00"))
    cal = RoomCalendar(["orion"])
    cal.book("orion", "16:00-17:00", owner="hal")
    with pytest.raises(BookingConflict):
        cal.book("orion", "16:59-17:30", owner="ivy")


def test_room_is_free_right_after_a_meeting():
    cal = RoomCalendar(["lyra", "vega"])
    cal.book("vega", "12:00-12:45", owner="jo")
    assert cal.rooms_free_for("12:45-13:15") == ["lyra", "vega"]


def test_chain_of_half_hour_meetings():
    cal = RoomCalendar(["lyra"])
    for start, end in [("08:00", "08:30"), ("08:30", "09:00"), ("09:00", "09:30")]:
        cal.book("lyra", f"{start}-{end}", owner="kim")
    assert [str(s) for s in cal.free_slots("lyra")] == ["09:30-18:00"]
