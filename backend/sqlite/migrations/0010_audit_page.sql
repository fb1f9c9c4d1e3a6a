-- The dashboard's audit page reads newest first below a seq cursor, filtered
-- by tenant, kind, run or a time range. An index entry carries its rowid
-- (seq), so within equal keys these are in seq order and the page reads
-- about the rows it returns instead of the whole table: tenant alone uses
-- audit_tenant, a time range audit_at.
CREATE INDEX audit_tenant_kind ON audit (tenant_id, kind);
CREATE INDEX audit_kind ON audit (kind);
CREATE INDEX audit_run ON audit (run_id);
