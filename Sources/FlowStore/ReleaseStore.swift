// The releases role of a store: releases made, tested, approved, activated, rolled out and
// rolled back, each step in one transaction with its audit entry.

/// Releases as stored (see ``ReleaseRecord``): a set of flow versions, flags and experiments
/// that go live together and come back together. The checks of each step are
/// ``ReleaseRules``, made by every store inside the step's transaction.
///
/// ```swift
/// let release = try store.createRelease(draft, texts: ["onboarding": text], audit: stamp)
/// try store.recordReleaseTests(id: release.id, tests: report, passed: true, base: live)
/// try store.approveRelease(id: release.id, audit: reviewer)        // not by its creator
/// try store.activateRelease(id: release.id, rules: rules, audit: reviewer)
/// ```
public protocol ReleaseStore: AnyObject, Sendable {
    /// Stores `release` (its `versions` are the versions to give its flows, `texts` their
    /// definitions) and each flow version as an ordinary, non-live version, in one transaction,
    /// with `release.create` in the audit log. Throws `ReleaseConflict("release-stale")` when a
    /// version is taken already (another version of the flow was stored meanwhile). Returns it
    /// with its id.
    func createRelease(_ release: ReleaseRecord, texts: [String: String], audit: AuditStamp) throws -> ReleaseRecord
    /// One release, or nil.
    func release(id: Int) throws -> ReleaseRecord?
    /// Every release, newest first.
    func releases() throws -> [ReleaseRecord]
    /// Records a test run: its result, `passed` makes it `ready` else `failed`, and `base` the
    /// live versions it ran on. Refuses (`release-state`) a release no longer draft, failed or ready.
    func recordReleaseTests(id: Int, tests: String, passed: Bool, base: [String: Int]) throws -> ReleaseRecord?
    /// Approves a draft, failed or ready release by `audit.credential`, which must not be its
    /// creator's (`self-approval`); `release.approve` in the audit log.
    func approveRelease(id: Int, audit: AuditStamp) throws -> ReleaseRecord?
    /// Makes the whole release live in one transaction (see `ReleaseRules.checkActivation`):
    /// its flow versions live, its flags and experiments put, what was live before recorded in
    /// `previous`, `release.activate` (and a `flow.activate`, `flag.put`, `experiment.put` per
    /// change) in the audit log. Nil when there is no such release.
    func activateRelease(id: Int, rules: ReleaseActivationRules, audit: AuditStamp) throws -> ReleaseRecord?
    /// Marks a release `rolling-out` (the rollouts branch serves its versions to a share of new
    /// sessions; nothing is made live) after the checks of activation; `release.rollout` in the
    /// audit log. A rollout reaching 100 % then calls `activateRelease`, a failed one
    /// `rollbackRelease`, which for a release rolling out only marks it `rolled-back`.
    func beginReleaseRollout(id: Int, rules: ReleaseActivationRules, audit: AuditStamp) throws -> ReleaseRecord?
    /// Restores what was live before the release in one transaction (see
    /// `ReleaseRules.checkRollback`): previous flow versions live (a flow new with it is live no
    /// more), previous flag and experiment texts put back (a flag new with it removed), each
    /// experiment it started stored as `stopped[key]`; `release.rollback` with `reason` as its
    /// detail. Nil when there is no such release.
    func rollbackRelease(id: Int, reason: String?, stopped: [String: String], audit: AuditStamp) throws -> ReleaseRecord?
}
