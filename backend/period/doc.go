// Package period cuts time into the calendar periods a budget renews in:
// none, day, week or month, in a tenant's IANA time zone, weeks starting on
// its week_starts day. A run counts in the period it was admitted in, so
// the ledger asks Calendar.At(admitted) once and keeps the answer's Label
// as the period the run's hold, settlement and reconcile belong to.
//
// # The calendar, not arithmetic
//
// A period starts at the first instant its first day shows on the zone's
// clocks and ends where the next one starts (the end is exclusive). Nothing
// adds 24 hours or 30 days: a day in a zone that moves its clocks lasts 23
// or 25 hours (23.5 and 24.5 on Lord Howe Island), a month lasts 28 to 31
// days, and a day whose midnight the zone skips (Chile and Cuba spring
// forward at 00:00) starts at the transition, 01:00 local — not where
// time.Date puts a nonexistent midnight, which is the evening before.
//
// Periods follow the zone's transitions exactly (time.Time.ZoneBounds): the
// period holding an instant is the longest unbroken stretch of instants
// around it whose wall clock shows the same day, week or month. So every
// instant is in exactly one period, Start <= t < End, and one period's End
// is the next one's Start — in every zone of the database, including the
// odd ones (Samoa skipped 30 December 2011: that day has no period at all).
//
// # Labels
//
// A day is "2026-12-01", a month "2026-12", a week its ISO 8601 week,
// "2026-W49", with the ISO week-year: 2027-01-01 is in "2026-W53",
// 2024-12-30 in "2025-W01".
//
// A week that does not start on Monday is not an ISO week, yet it shares
// four or more of its days with exactly one: the ISO week holding its
// middle (fourth) day. It takes that week's name. This is ISO 8601's own
// rule carried over — an ISO week belongs to the year of its Thursday,
// which is its middle day — so Monday weeks get their ISO names unchanged,
// a Sunday week (Sun 6 – Sat 12 Dec 2026) is "2026-W50" beside the ISO
// week Mon 7 – Sun 13 it shares six days with, and consecutive weeks never
// share a name for a given week_starts. The label names the period; its
// exact instants are period_start and period_end, which every balance
// carries beside it. (A tenant that changes week_starts mid-week keeps the
// same label for the week it is in: the name means the same week, mostly.)
package period
