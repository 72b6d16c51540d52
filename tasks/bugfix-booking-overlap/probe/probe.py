"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from roombook import RoomCalendar, Slot


def back_to_back():
    cal = RoomCalendar(["atlas"])
    cal.book("atlas", "10:00-11:15", owner="ann")
    cal.book("atlas", "11:15-12:00", owner="bob")
    cal.book("atlas", "09:30-10:00", owner="cy")
    return [[str(b.slot), b.owner] for b in cal.bookings("atlas")]


def overlap_by_a_minute():
    cal = RoomCalendar(["atlas"])
    cal.book("atlas", "15:00-16:00", owner="dee")
    cal.book("atlas", "15:59-16:30", owner="eve")
    return "booked"


def free_after():
    cal = RoomCalendar(["atlas", "pollux"])
    cal.book("pollux", "08:00-09:00", owner="fin")
    cal.book("pollux", "09:00-10:00", owner="gil")
    return {"rooms": cal.rooms_free_for("10:00-10:30"), "free": [str(s) for s in cal.free_slots("pollux")]}


print(json.dumps({
    "back_to_back": see(back_to_back),
    "overlap_by_a_minute": see(overlap_by_a_minute),
    "free_after": see(free_after),
    "minutes": see(lambda: [Slot(0, 30).overlaps(Slot(30, 60)), Slot(100, 200).overlaps(Slot(199, 300)),
                            Slot(500, 600).overlaps(Slot(400, 500))]),
}, sort_keys=True))
