-- The dashboard's audit page reads newest first below a seq cursor, filtered
-- by tenant, kind, run or a time range. Each index ends in seq, so a page
-- reads about the rows it returns instead of the whole table: tenant alone
-- uses audit_tenant, a time range audit_at.
CREATE INDEX audit_tenant_kind ON audit (tenant_id, kind, seq);
CREATE INDEX audit_kind ON audit (kind, seq);
DROP INDEX audit_run;
CREATE INDEX audit_run ON audit (run_id, seq);
