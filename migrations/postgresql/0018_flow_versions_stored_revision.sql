-- Each stored flow version carries the definitions' revision it was stored (or last edited) at,
-- and the revision's row counts the flow versions removed, so that a node reads the versions
-- stored since it last read instead of every version's name, version and time (issue 35).
--
-- A reload read the stamps of every stored flow version to find the few it did not hold: some
-- 2 µs a version on each node at each change (94 ms at 50,000 versions, BENCHMARKS.md,
-- thirty-seventh session). A node now keeps the revision and the removals it read with the
-- versions, and asks for the versions whose `stored_revision` is above that revision: the ones
-- stored or edited since. Only when the removals moved does it compare every stamp again.
--
-- The revision a version gets is taken under the revision row's lock, which its transaction then
-- holds until it commits, as every write to the definitions does (migration 17): revisions are
-- given in the order their transactions commit, and a node that read up to revision R finds every
-- later version above R, none committed behind it. The version's row is stamped by the trigger
-- that raises the revision, at the end of the writing statement as before, so writes take their
-- locks in the order they did.
--
-- Versions stored before this migration have 0: a node that starts reads them all.
ALTER TABLE flow_versions ADD COLUMN stored_revision BIGINT NOT NULL DEFAULT 0;
CREATE INDEX flow_versions_by_stored_revision ON flow_versions (stored_revision);
ALTER TABLE definitions_revision ADD COLUMN flow_versions_removed BIGINT NOT NULL DEFAULT 0;

-- A version stored, or edited in place (an operator's SQL), gets the raised revision; one
-- removed, or moved to another name or number, counts as removed.
CREATE FUNCTION raise_definitions_revision_for_flow_version() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
DECLARE
    raised BIGINT;
BEGIN
    IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND (OLD.name, OLD.version) IS DISTINCT FROM (NEW.name, NEW.version)) THEN
        UPDATE definitions_revision SET revision = revision + 1, flow_versions_removed = flow_versions_removed + 1
        WHERE only_row;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN NULL;
    END IF;
    UPDATE definitions_revision SET revision = revision + 1 WHERE only_row RETURNING revision INTO raised;
    -- Sets no column the trigger watches, so it does not fire again.
    UPDATE flow_versions SET stored_revision = COALESCE(raised, 0) WHERE name = NEW.name AND version = NEW.version;
    RETURN NULL;
END
$$;

CREATE FUNCTION raise_definitions_revision_for_flow_versions_truncated() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE definitions_revision SET revision = revision + 1, flow_versions_removed = flow_versions_removed + 1
    WHERE only_row;
    RETURN NULL;
END
$$;

DROP TRIGGER flow_versions_revision ON flow_versions;
DROP TRIGGER flow_versions_truncated ON flow_versions;
CREATE TRIGGER flow_versions_revision AFTER INSERT OR UPDATE OF name, version, definition, created_at OR DELETE ON flow_versions
    FOR EACH ROW EXECUTE FUNCTION raise_definitions_revision_for_flow_version();
CREATE TRIGGER flow_versions_truncated AFTER TRUNCATE ON flow_versions
    FOR EACH STATEMENT EXECUTE FUNCTION raise_definitions_revision_for_flow_versions_truncated();
