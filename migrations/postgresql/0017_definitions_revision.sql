-- A revision of the definitions, raised by every change to them, which nodes read instead of
-- scanning them (issue 35).
--
-- A node on a shared database reads the definitions' fingerprint before each session's creation,
-- each OFREP evaluation and each GrowthBook payload, and every 250 ms, and reads every
-- definition again when it moved. The fingerprint was counted over the six tables below and took
-- the newest time of every stored flow version; flow versions and releases are never deleted,
-- so it cost more as a team stored more of them (1.5 ms of PostgreSQL's time at 5,000 flow
-- versions, BENCHMARKS.md, thirty-sixth session). It is now this one row.
--
-- Triggers raise it, so every write to those tables does, whichever statement or node makes it
-- (an operator's SQL too), in the writing transaction: a change and its revision commit together
-- or not at all, and a node that reads the new revision finds the change committed. Row-level
-- triggers, so a statement that changes nothing (a seed that finds its row, a compare-and-set
-- that lost) raises nothing; TRUNCATE, which has no rows, raises it once.
--
-- Every write to the definitions now takes this row's lock until it commits, so they commit one
-- at a time. They did already, nearly: audited writes hold the audit log's lock, and a release's
-- transaction holds the six tables' locks, before they write. A transaction takes the row only
-- once it has written, and none but those writes takes it, so no two transactions can each wait
-- for what the other holds through it.
CREATE TABLE definitions_revision (
    only_row  BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
    revision  BIGINT NOT NULL
);
INSERT INTO definitions_revision (only_row, revision) VALUES (TRUE, 1);

-- The schema the row is in is fixed at creation (`SET search_path FROM CURRENT`), so that a
-- write from a session with another search_path (an operator's psql) raises the same row.
CREATE FUNCTION raise_definitions_revision() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE definitions_revision SET revision = revision + 1 WHERE only_row;
    RETURN NULL;
END
$$;

-- On each of the six tables: `<table>_revision` for its rows, `<table>_truncated` for TRUNCATE.
DO $$
DECLARE
    tracked TEXT;
BEGIN
    FOREACH tracked IN ARRAY ARRAY['flow_versions', 'live_flows', 'flow_activations', 'flags', 'experiments', 'releases'] LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I
                        FOR EACH ROW EXECUTE FUNCTION raise_definitions_revision()', tracked || '_revision', tracked);
        EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I
                        FOR EACH STATEMENT EXECUTE FUNCTION raise_definitions_revision()', tracked || '_truncated', tracked);
    END LOOP;
END
$$;
