-- Erasure and export of one user's data (`DELETE /v1/users/{userId}`, `GET
-- /v1/users/{userId}/export`) find the user's rows by key instead of scanning whole tables:
-- experiment records outlive sessions and name the user (they are how an erasure finds the
-- sessions deleted earlier); a session's stream tickets are deleted with it, by the index of
-- 0014; earlier audit
-- entries about the user (an onboarding reset) get the erasure's subject instead of the id.
CREATE INDEX exposures_by_user ON exposures (user_id);
CREATE INDEX experiment_exclusions_by_user ON experiment_exclusions (user_id);
CREATE INDEX audit_log_by_subject ON audit_log (subject);
