-- Client keys raise the definitions' revision too, so that a node may keep the keys it has
-- checked for as long as the revision it read after a request came has not moved (issue 35).
--
-- Every OFREP evaluation and GrowthBook payload checked its client key in the database: on a
-- shared PostgreSQL, one round trip a request, beside the fingerprint's read (which such requests
-- now share; BENCHMARKS.md, thirty-eighth session). A node now keeps the live keys it looked up,
-- under the revision read for the request; a key made or revoked, by any node or by hand, raises
-- the revision in its own transaction, so the next request on every node, which waits for a
-- read of the revision begun after it came, finds the revision moved and looks its key up again.
-- A revocation still closes a key on every node from the moment it is committed.
--
-- These writes now take the revision row's lock after they write, as the writes to the
-- definitions do (migration 17); no transaction writes a client key after a definition, so no
-- two can wait for each other through it.
CREATE TRIGGER client_keys_revision AFTER INSERT OR UPDATE OR DELETE ON client_keys
    FOR EACH ROW EXECUTE FUNCTION raise_definitions_revision();
CREATE TRIGGER client_keys_truncated AFTER TRUNCATE ON client_keys
    FOR EACH STATEMENT EXECUTE FUNCTION raise_definitions_revision();

-- The revision's row also carries a random epoch, which the fingerprint and the flow versions'
-- mark read with the number. Should the row be removed and made again by hand (starting again at
-- 1, as migration 17 made it), its new epoch tells every node that the numbers they hold mean
-- nothing any more: kept keys are looked up again, and every stored version's stamp compared.
ALTER TABLE definitions_revision ADD COLUMN epoch TEXT NOT NULL DEFAULT md5(random()::text || clock_timestamp()::text);
