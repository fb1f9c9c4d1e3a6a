-- The text index's segments are merged a little in each of the writer's
-- batches of the index, instead of a level at once when it holds 16
-- segments. With automerge at 16, equal to FTS5's crisismerge, every merge
-- was a crisis merge, done whole inside one batch, and it grew with the
-- index: on 1.6 million audit rows the batch that merged the level of a
-- million rows held the writer 3.6-5.7 s, and the next level up would be
-- sixteen times that. Incremental merges start at 8 segments a level, and
-- the crisis threshold is raised so that they are what runs: the longest
-- batch 0.17-0.32 s, a batch's median 26-40 ms → 53-58 ms, the whole index
-- built in the same time (BenchmarkAuditTextBatches).
INSERT INTO audit_text (audit_text, rank) VALUES ('automerge', 8);
INSERT INTO audit_text (audit_text, rank) VALUES ('crisismerge', 64);
